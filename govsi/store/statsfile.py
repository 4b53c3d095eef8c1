"""Scrapy extension ``StatsFile``: the crawl's final stats as JSON in STATS_FILE."""

from __future__ import annotations

import json
from typing import Any

from scrapy import signals
from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured

__all__ = ["StatsFile"]


class StatsFile:
    """Writes the crawl's final stats as JSON to STATS_FILE, for scripts and benchmarks."""

    def __init__(self, crawler: Crawler, path: str) -> None:
        self.crawler = crawler
        self.path = path
        # spider_closed handlers run side by side; by engine_stopped CrawlStore's final
        # flush is done, so the database counts and any spill file are in the stats.
        crawler.signals.connect(self.engine_stopped, signal=signals.engine_stopped)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> StatsFile:
        path = crawler.settings.get("STATS_FILE")
        if not path:
            raise NotConfigured("STATS_FILE is not set")
        return cls(crawler, path)

    def engine_stopped(self) -> None:
        self.write()
        # engine_stopped handlers run side by side too: what one adds after this (the
        # changes' notifications) is written once more as the process stops.
        from twisted.internet import reactor  # here: importing it installs one

        running: Any = reactor  # its stubs' interface methods take no self
        running.addSystemEventTrigger("before", "shutdown", self.write)

    def write(self) -> None:
        stats = dict(self.crawler.stats.get_stats())
        with open(self.path, "w", encoding="utf-8") as fh:
            json.dump(stats, fh, indent=1, sort_keys=True, default=str)
