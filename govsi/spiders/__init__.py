"""Scrapy's spiders (SPIDER_MODULES): the ``govsi`` spider, with its sitemap and rendering
halves as mixins."""
