"""Item pipelines: every record the spider yields ends in crawldb."""

from __future__ import annotations

import logging
from typing import Any

from scrapy.crawler import Crawler
from scrapy.statscollectors import StatsCollector

from govsi.items import ITEM_TYPES
from govsi.store.extension import CrawlStore

logger = logging.getLogger(__name__)


class CrawlDBPipeline:
    """Hands records to the crawl's batched writer (see ``govsi.store.writer``)."""

    def __init__(self, store: CrawlStore, stats: StatsCollector) -> None:
        self.store = store
        self.stats = stats

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> CrawlDBPipeline:
        store = crawler.get_extension(CrawlStore)
        if store is None:
            raise RuntimeError(
                "CrawlDBPipeline needs the govsi.store.extension.CrawlStore extension"
            )
        return cls(store, crawler.stats)

    def process_item(self, item: Any) -> Any:
        if type(item).__name__ in ITEM_TYPES:
            self.store.add(item)
        else:
            # Nothing may vanish quietly: a record crawldb cannot hold is a bug to see.
            logger.error("no place in crawldb for %r; not stored", item)
            self.stats.inc_value("govsi/items_not_stored")
        return item
