"""Admit each canonical URL once per crawl.

Requests are keyed by their canonical URL (``govsi.urls.canonicalize``), not by Scrapy's
request fingerprint, so every spelling of a page is one page. Pages and images are keyed
apart: an image URL that is also linked as a page is still fetched once as each. Keys are
kept as 64-bit fingerprints, so millions of known URLs fit in little memory.

A continuing crawl starts with every URL crawldb knows marked as seen: fetched pages are
not fetched again, and the FRONTIER rows reach the scheduler from crawldb itself.
"""

from __future__ import annotations

import logging

from scrapy import Request
from scrapy.crawler import Crawler
from scrapy.dupefilters import BaseDupeFilter
from scrapy.statscollectors import StatsCollector

from govsi.extensions import CrawlStore
from govsi.urls import canonicalize, fingerprint, url_too_long

logger = logging.getLogger(__name__)


def request_key(request: Request) -> str | None:
    """The identity of a request for de-duplication; None for a URL with no canonical form."""
    kind = request.meta.get("govsi_kind", "page")
    try:
        return f"{kind} {canonicalize(request.url)}"
    except ValueError:
        return None


class CanonicalDupeFilter(BaseDupeFilter):
    def __init__(
        self,
        max_url_length: int = 2000,
        stats: StatsCollector | None = None,
        store: CrawlStore | None = None,
        debug: bool = False,
    ) -> None:
        self.seen: set[int] = set()
        self.max_url_length = max_url_length
        self.stats = stats
        self.store = store
        self.debug = debug

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> CanonicalDupeFilter:
        return cls(
            max_url_length=crawler.settings.getint("MAX_URL_LENGTH"),
            stats=crawler.stats,
            store=crawler.get_extension(CrawlStore),
            debug=crawler.settings.getbool("DUPEFILTER_DEBUG"),
        )

    def open(self) -> None:
        if self.store is None:
            return
        for url in self.store.known_urls():
            self.seen.add(fingerprint(f"page {url}"))
        for url in self.store.fetched_image_urls():
            self.seen.add(fingerprint(f"image {url}"))
        if self.seen:
            logger.info("continuing crawl: %d URLs already known", len(self.seen))

    def request_seen(self, request: Request) -> bool:
        key = request_key(request)
        if key is None or url_too_long(key.split(" ", 1)[1], self.max_url_length):
            self._inc("govsi/dupefilter/rejected")
            return True
        fp = fingerprint(key)
        if fp in self.seen:
            return True
        self.seen.add(fp)
        return False

    def log(self, request: Request, spider: object) -> None:
        self._inc("dupefilter/filtered")
        if self.debug:
            logger.debug("filtered duplicate request %s", request)

    def _inc(self, key: str) -> None:
        if self.stats is not None:
            self.stats.inc_value(key)
