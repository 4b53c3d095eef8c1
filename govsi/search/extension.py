"""Scrapy extension ``SearchIndexUpdate``: when SEARCH_INDEX is set, the crawl brings the
search index up to date as it ends (``scrapy index``'s work, in a thread), after crawldb's
last write."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from scrapy import signals
from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured
from twisted.internet.defer import Deferred
from twisted.internet.threads import deferToThread

from govsi.search.config import SearchConfig
from govsi.store import database

if TYPE_CHECKING:
    from govsi.search.update import Updated

logger = logging.getLogger(__name__)


class SearchIndexUpdate:
    def __init__(self, config: SearchConfig, crawldb_url: str) -> None:
        self.config = config
        self.crawldb_url = crawldb_url

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> SearchIndexUpdate:
        config = SearchConfig.from_settings(crawler.settings)
        if not config.at_crawl_end:
            raise NotConfigured("SEARCH_INDEX is not set")
        url = database.crawldb_url_of(crawler.settings)
        ext = cls(config, url)
        # engine_stopped: after every spider_closed handler, crawldb's last flush included.
        crawler.signals.connect(ext.engine_stopped, signal=signals.engine_stopped)
        return ext

    def engine_stopped(self) -> Deferred[None]:
        d: Deferred[Updated] = deferToThread(self.update)
        return d.addCallbacks(self._done, self._failed)

    def update(self) -> Updated:
        # Imported here: a crawl that keeps no index never loads Tantivy and its modules.
        from govsi.search.index import SearchIndex
        from govsi.search.update import update

        engine = database.make_engine(self.crawldb_url)
        index = SearchIndex.open_for_update(self.config.folder)
        try:
            return update(engine, index, processes=self.config.processes,
                          text_chars=self.config.text_chars)  # fmt: skip
        finally:
            index.close()
            engine.dispose()

    def _done(self, done: Updated) -> None:
        from govsi.search.update import log_skipped

        logger.info("search index %s updated: %d pages (re)indexed, %d dropped, %d skipped"
                    " in %.1f s", self.config.folder, done.added, done.removed, done.skipped,
                    done.seconds)  # fmt: skip
        log_skipped(done)

    def _failed(self, failure: object) -> None:
        # The crawl's data is in crawldb whatever happens here: scrapy index can redo it.
        logger.error("search index %s not updated (%s); run scrapy index", self.config.folder,
                     getattr(failure, "value", failure))  # fmt: skip
