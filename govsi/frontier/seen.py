"""Admit each canonical URL once per crawl.

Requests are keyed by their canonical URL (``govsi.web.urls.canonicalize``), not by Scrapy's
request fingerprint, so every spelling of a page is one page. Pages and images are keyed
apart: an image URL that is also linked as a page is still fetched once as each. Keys are
kept as 64-bit fingerprints in flat tables (``govsi.frontier.fingerprints``): 11 to 32
bytes per known URL, so ten million fit in 320 MB at most.

The set lives in ``KnownUrls``, an extension, because two components need it: the
dupefilter admits requests by it, and the spider asks it before yielding a request at all
(pages link to the same menu pages over and over; building and filtering a request for each
repeat took half of a crawl's CPU time).

A continuing crawl starts with every URL crawldb knows marked as seen: fetched pages are
not fetched again, and the FRONTIER rows reach the scheduler from crawldb itself.
"""

from __future__ import annotations

import logging

from scrapy import Request
from scrapy.crawler import Crawler
from scrapy.dupefilters import BaseDupeFilter
from scrapy.statscollectors import StatsCollector

from govsi.frontier.fingerprints import FingerprintSet
from govsi.requestmeta import KIND_IMAGE, KIND_PAGE, META_KIND, META_URL, Kind
from govsi.store.extension import CrawlStore
from govsi.web.scope import Scope
from govsi.web.urls import canonicalize, fingerprint, url_too_long

logger = logging.getLogger(__name__)


def seen_key(kind: Kind, url: str) -> str:
    """The key ``KnownUrls`` holds the canonical URL ``url`` of a ``kind`` request under:
    the same URL as a page and as an image is two keys."""
    return f"{kind} {url}"


def _request_url(request: Request) -> str | None:
    """The canonical URL a request is known by; None for a URL with no canonical form."""
    # The spider's requests carry their canonical URL; others are canonicalized here.
    url: str | None = request.meta.get(META_URL)
    if url is None:
        try:
            url = canonicalize(request.url)
        except ValueError:
            return None
    return url


class KnownUrls:
    """The (kind, canonical URL) pairs this crawl knows, as 64-bit fingerprints."""

    def __init__(self) -> None:
        self._seen = FingerprintSet()
        self._loaded = False

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> KnownUrls:
        return cls()

    def load(self, store: CrawlStore) -> None:
        """Mark everything crawldb holds (once, however many components ask)."""
        if self._loaded:
            return
        self._loaded = True
        for url in store.known_urls():
            self._seen.add(fingerprint(seen_key(KIND_PAGE, url)))
        for url in store.fetched_image_urls():
            self._seen.add(fingerprint(seen_key(KIND_IMAGE, url)))
        if self._seen:
            logger.info("continuing crawl: %d URLs already known", len(self._seen))

    def __contains__(self, key: str) -> bool:
        return fingerprint(key) in self._seen

    def add(self, key: str) -> bool:
        """Mark ``key``; True if it was new."""
        return self._seen.add(fingerprint(key))

    def __len__(self) -> int:
        return len(self._seen)

    @property
    def nbytes(self) -> int:
        """The memory the known URLs take (their table)."""
        return self._seen.nbytes


class CanonicalDupeFilter(BaseDupeFilter):
    def __init__(
        self,
        max_url_length: int = 2000,
        stats: StatsCollector | None = None,
        store: CrawlStore | None = None,
        known: KnownUrls | None = None,
        debug: bool = False,
    ) -> None:
        self.known = known if known is not None else KnownUrls()
        self.max_url_length = max_url_length
        self.stats = stats
        self.store = store
        self.debug = debug

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> CanonicalDupeFilter:
        return cls(
            max_url_length=Scope.from_settings(crawler.settings).max_url_length,
            stats=crawler.stats,
            store=crawler.get_extension(CrawlStore),
            known=crawler.get_extension(KnownUrls),
            debug=crawler.settings.getbool("DUPEFILTER_DEBUG"),
        )

    def open(self) -> None:
        if self.store is not None:
            self.known.load(self.store)

    def request_seen(self, request: Request) -> bool:
        url = _request_url(request)
        if url is None or url_too_long(url, self.max_url_length):
            self._inc("govsi/dupefilter/rejected")
            return True
        kind: Kind = request.meta.get(META_KIND, KIND_PAGE)
        return not self.known.add(seen_key(kind, url))

    def log(self, request: Request, spider: object) -> None:
        self._inc("dupefilter/filtered")
        if self.debug:
            logger.debug("filtered duplicate request %s", request)

    def _inc(self, key: str) -> None:
        if self.stats is not None:
            self.stats.inc_value(key)
