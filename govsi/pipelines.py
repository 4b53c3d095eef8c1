"""Item pipelines: every record the spider yields ends in crawldb."""

from __future__ import annotations

from typing import Any

from scrapy.crawler import Crawler

from govsi.extensions import CrawlStore
from govsi.storage import ITEM_TYPES


class CrawlDBPipeline:
    """Hands records to the crawl's batched writer (see ``govsi.storage``)."""

    def __init__(self, store: CrawlStore) -> None:
        self.store = store

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> CrawlDBPipeline:
        store = crawler.get_extension(CrawlStore)
        if store is None:
            raise RuntimeError("CrawlDBPipeline needs the govsi.extensions.CrawlStore extension")
        return cls(store)

    def process_item(self, item: Any) -> Any:
        if type(item).__name__ in ITEM_TYPES:
            self.store.add(item)
        return item
