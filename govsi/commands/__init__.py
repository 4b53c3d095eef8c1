"""govsi's own Scrapy commands (COMMANDS_MODULE): ``scrapy report``."""
