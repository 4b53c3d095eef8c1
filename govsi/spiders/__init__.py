"""Scrapy's spiders (SPIDER_MODULES): the ``govsi`` spider, holding its parts (admission,
HTML pages, rendering, copies, sitemaps) as objects, each configured from one read of the
settings."""
