"""The ``govsi`` spider: turns responses into crawldb records and new requests.

It reads its own settings once (``SpiderConfig``) and holds its parts as objects, each
built from its own settings by ``govsi.responses.parts``: ``Admission`` (which URLs the
crawl takes), ``HtmlPages`` (an HTML page read, rendered when its plan says, checked for
copies by its ``Copies``), ``Rendering`` (the render plan), ``Documents`` (a page that is
no HTML), ``FeedPolling``, ``Sitemaps``, ``Records`` (images and failed requests). The
spider makes the requests (the scheduler's ``RequestFactory``), follows links and
redirects, and hands each response to the part whose job it is.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterable, Iterator
from itertools import chain
from typing import Any
from urllib.parse import urlsplit

from scrapy import Request, Spider
from scrapy.crawler import Crawler
from scrapy.http import Response
from twisted.python.failure import Failure

from govsi.frontier.seen import KnownUrls, seen_key
from govsi.items import DiscoveredPage, FetchedPage, Revisit, outcome_stat
from govsi.requestmeta import KIND_IMAGE, KIND_PAGE, META_KIND, META_REVISIT, META_URL, Kind
from govsi.responses import parts
from govsi.responses.revisits import header, page_visit
from govsi.revisit.conditional import conditional_headers
from govsi.spiders.config import SpiderConfig
from govsi.store.extension import CrawlStore
from govsi.store.schema import utcnow

logger = logging.getLogger(__name__)


class GovsiSpider(Spider):
    name = "govsi"
    # Built in from_crawler.
    config: SpiderConfig
    seed_urls: list[str]
    parts: parts.Parts
    # Extensions (built after the spider), looked up in start.
    known: KnownUrls
    store: CrawlStore

    def __init__(self, *args: Any, seeds: str | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._seed_arg = seeds

    @classmethod
    def from_crawler(cls, crawler: Crawler, *args: Any, **kwargs: Any) -> GovsiSpider:
        spider: GovsiSpider = super().from_crawler(crawler, *args, **kwargs)
        c = spider.config = SpiderConfig.from_settings(crawler.settings)
        spider.seed_urls = (
            [u.strip() for u in spider._seed_arg.split(",") if u.strip()]
            if spider._seed_arg
            else list(c.seed_urls)
        )
        # The parts count through ``stats.counter`` (a call down), not through the spider.
        spider.parts = parts.build(
            crawler,
            spider,
            is_new=spider.is_new,
            page_request=spider.page_request,
            follow_now=spider.follow_now,
            feeds_found=spider.feeds_found,
            record=lambda item: spider.store.add(item),
        )
        return spider

    def count(self, key: str, count: int = 1) -> None:
        """Add to a stat of the crawl (looked up when counting: the crawler's stats are
        made after the spider)."""
        self.crawler.stats.inc_value(key, count)

    # -- requests (the scheduler's RequestFactory) -----------------------------------------
    def page_request(self, url: str, depth: int, revisit: Revisit | None = None) -> Request:
        meta: dict[str, Any] = {"depth": depth, META_KIND: KIND_PAGE, META_URL: url}
        if revisit is not None:
            meta[META_REVISIT] = revisit
        return Request(
            url,
            callback=self.parse_page,
            errback=self.page_failed,
            priority=-depth,
            meta=meta,
            headers=conditional_headers(revisit),
        )

    def image_request(self, url: str, depth: int, revisit: Revisit | None = None) -> Request:
        # Queued with the pages of the same depth, so breadth-first order holds for them too.
        meta: dict[str, Any] = {META_KIND: KIND_IMAGE, META_URL: url}
        if revisit is not None:
            meta[META_REVISIT] = revisit
        return Request(
            url,
            callback=self.parse_image,
            errback=self.image_failed,
            priority=-depth,
            meta=meta,
            headers=conditional_headers(revisit),
        )

    def request_for(
        self, kind: Kind, url: str, depth: int, revisit: Revisit | None = None
    ) -> Request:
        """The request for a queued page or image (the scheduler keeps only url and depth,
        and for a revisit what the stored copy is checked by: conditional when it has
        validators)."""
        if kind == KIND_IMAGE:
            return self.image_request(url, depth, revisit)
        return self.page_request(url, depth, revisit)

    def sitemap_request(self, url: str, site: str) -> Request | None:
        """The request for a sitemap ``site``'s robots.txt lists, or None
        (``Sitemaps.request``)."""
        robots = f"{urlsplit(url).scheme or 'http'}://{site}/robots.txt"
        return self.parts.sitemaps.request(url, site, found_on=robots)

    def is_new(self, url: str) -> bool:
        """Whether the page ``url`` is not known to the crawl yet."""
        return seen_key(KIND_PAGE, url) not in self.known

    def follow(self, urls: list[str], depth: int) -> Iterator[Request]:
        limit = self.parts.admission.scope.depth_limit
        if limit and depth > limit:
            self.count("govsi/depth_limit_reached", len(urls))
            return
        for url in urls:
            # Only links new to the crawl become requests; the rest are link rows only.
            if self.is_new(url):
                yield self.page_request(url, depth)

    def follow_now(self, record: FetchedPage, urls: list[str]) -> None:
        """FRONTIER rows and requests for links of ``record``, before the page is done."""
        for request in self.follow(urls, record.link_depth):
            self.store.add(DiscoveredPage(url=request.meta[META_URL], depth=record.link_depth))
            self.crawler.engine.crawl(request)

    def feeds_found(self, page_url: str, feeds: list[str]) -> None:
        """Requests for the feeds a page declares that are due (``FeedPolling.declared``)."""
        for request in self.parts.feeds.declared(page_url, feeds):
            self.crawler.engine.crawl(request)

    def _requests_of(self, record: FetchedPage) -> Iterator[Request]:
        """The requests an HTML page's record leads to: its new links, its images."""
        yield from self.follow(record.links, record.link_depth)
        for image in record.images:
            known = seen_key(KIND_IMAGE, image) in self.known
            if not known and self.parts.admission.may_fetch_image(image):
                yield self.image_request(image, record.link_depth)

    # -- start ----------------------------------------------------------------------------
    async def start(self) -> AsyncIterator[Any]:
        # Extensions are built after the spider, so they are looked up here.
        store = self.crawler.get_extension(CrawlStore)
        known = self.crawler.get_extension(KnownUrls)
        if store is None or known is None:
            raise RuntimeError("govsi needs the CrawlStore and KnownUrls extensions")
        known.load(store)
        self.known = known
        self.store = store
        self.parts.rendering.open(self.crawler)
        self.parts.pages.copies.rekey(store.engine, self.parts.pages.limits.max_tags)
        self.parts.pages.copies.open(store.engine)
        self.parts.pages.prepare()
        # Feeds and sitemaps whose poll is due are read again, whatever else is due.
        for request in self.due_polls():
            yield request
        for seed in self.seed_urls:
            url = self.parts.admission.admit(seed)
            if url is None:
                logger.warning("seed %r is not an in-scope http(s) URL; skipped", seed)
                continue
            yield DiscoveredPage(url=url, depth=0)
            yield self.page_request(url, 0)
        # A continuing crawl: the scheduler reads the FRONTIER rows from crawldb; images
        # whose download was still queued when an earlier run stopped are queued here.
        for url in store.unfetched_image_urls():
            if self.parts.admission.may_fetch_image(url):
                yield self.image_request(url, depth=0)

    def due_polls(self) -> Iterator[Request]:
        """Requests for the feeds and sitemaps whose poll is due now, those this worker
        takes (``FeedPolling.start``): at the run's start, and when a crawl kept open by
        REVISIT_WAIT wakes (``govsi.frontier.waiting``)."""
        yield from self.parts.sitemaps.due_polls(self.store.engine)

    def closed(self, reason: str) -> None:
        self.parts.close()

    # -- pages ------------------------------------------------------------------------------
    async def parse_page(self, response: Response) -> Iterable[Any]:
        meta = response.meta
        url: str = meta[META_URL]
        depth: int = meta["depth"]
        # A revisit: the stored copy this response is checked against (None: a first visit).
        stored: Revisit | None = meta.get(META_REVISIT)
        record, kept = page_visit(url, depth, response, stored, utcnow())
        if kept:
            # A 304 (its body, if any, unread) or a failed revisit: the stored copy stays.
            self.count(outcome_stat("not_modified" if record.not_modified
                                    else "revisit_failed"))  # fmt: skip
            return [record]
        ctype = record.content_type
        location = header(response, "Location") if 300 <= response.status < 400 else None
        kind = None if location else self.parts.documents.kind(response, ctype, url)
        if stored is not None and stored.page_type == "HTML" and kind != "HTML":
            # Its stored version is being replaced by no HTML: no original any more. An HTML
            # page is retracted as its own verdict is made (``HtmlPages``).
            self.parts.pages.copies.retract(url)
        if location:
            target = self.parts.admission.redirect(response.url, location)
            if target and target != url:
                record.links = self.parts.admission.chain(url, [target])
            self.count(outcome_stat("redirect"))
            return [record, *self.follow(record.links, record.link_depth)]
        if kind == "HTML":
            return await self.parse_html(response, record)
        return [await self.parts.documents.record(response, record, kind)]

    async def parse_html(self, response: Response, record: FetchedPage) -> Iterable[Any]:
        """An HTML page's record (``HtmlPages.parse``) and the requests it leads to, each
        request made as Scrapy takes it: a burst of pages read at once would otherwise hold
        all their requests (50 a page on the memory bench) until the last is scheduled."""
        record = await self.parts.pages.parse(response, record)
        if record.duplicate_of is not None:
            return [record]  # the original's links were followed already
        return chain((record,), self._requests_of(record))

    def page_failed(self, failure: Failure) -> Iterator[Any]:
        return self.parts.records.page_failed(failure)

    # -- images ---------------------------------------------------------------------------
    def parse_image(self, response: Response) -> Iterator[Any]:
        return self.parts.records.image(response)

    def image_failed(self, failure: Failure) -> Iterator[Any]:
        return self.parts.records.image_failed(failure)
