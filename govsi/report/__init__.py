"""The crawl report (``scrapy report``): statistics and link graphs of a crawldb.

- ``queries``: every number, as SQL aggregates over crawldb (PostgreSQL and SQLite);
- ``graphs``: the domain link graph and one site's page graph, and their layout;
- ``charts``: the pictures as SVG (graphs, bar charts);
- ``output``: the report folder (index.html, report.json, csv/, SVG files).
"""
