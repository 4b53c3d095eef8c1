"""The web as the crawler reads it: URLs and their one canonical form, and what a
response's bytes mean (encoding, content type, links and images, sitemaps).

Pure functions over strings and bytes; nothing here imports Scrapy or touches crawldb.
"""
