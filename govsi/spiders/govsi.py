"""The ``govsi`` spider: turns responses into crawldb records and new requests.

It reads its settings once (``SpiderConfig``) and holds its parts as objects, built in
``from_crawler`` from plain values: ``Admission`` (which URLs the crawl takes), ``HtmlPages``
(an HTML page read, rendered when its plan says, checked for copies by its ``Copies``),
``Rendering`` (the render plan), ``Sitemaps``, ``Records`` (images and failed requests).
The spider makes the requests (the scheduler's ``RequestFactory``) and turns redirects and
documents into records. The decisions all of them rely on (canonical form, scope, link
extraction, what a response is) live in ``govsi.web``; this module only wires them to
Scrapy.
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

from govsi.frontier.admission import Admission
from govsi.frontier.seen import KnownUrls, seen_key
from govsi.frontier.traps import TrapGuard
from govsi.items import DiscoveredPage, FetchedPage, Revisit, outcome_stat
from govsi.net.failures import failure_reason
from govsi.net.guard import AddressGuard
from govsi.requestmeta import KIND_IMAGE, KIND_PAGE, META_KIND, META_REVISIT, META_URL, Kind
from govsi.responses.documents import DocumentTexts, text_limits
from govsi.responses.pages import HtmlPages
from govsi.responses.rendering import Rendering
from govsi.revisit.conditional import conditional_headers
from govsi.spiders.config import SpiderConfig
from govsi.spiders.feeding import FeedPolling
from govsi.spiders.records import Records, header
from govsi.spiders.revisits import content_key, page_visit
from govsi.spiders.sitemapping import Sitemaps
from govsi.stats import counter
from govsi.store.extension import CrawlStore
from govsi.store.schema import utcnow
from govsi.web.contenttypes import DOCUMENT_TYPES, classify, declared_length
from govsi.web.urls import host_of, resolve
from govsi.workers.bound import MemoryBoundRefused, require_bound
from govsi.workers.pool import WorkerPool

logger = logging.getLogger(__name__)


class GovsiSpider(Spider):
    name = "govsi"
    # Built in from_crawler.
    config: SpiderConfig
    seed_urls: list[str]
    worker: WorkerPool
    admission: Admission
    rendering: Rendering
    pages: HtmlPages
    sitemaps: Sitemaps
    feeds: FeedPolling
    documents: DocumentTexts | None  # TEXT_EXTRACTION's reader of documents
    records: Records
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
        # The parts count through ``stats`` (a call down), not through the spider.
        count = counter(spider)
        spider.seed_urls = (
            [u.strip() for u in spider._seed_arg.split(",") if u.strip()]
            if spider._seed_arg
            else list(c.seed_urls)
        )
        try:
            require_bound(c.worker_memory_limit)
        except MemoryBoundRefused as e:
            logger.error("%s", e)  # before anything is fetched
            raise
        spider.worker = WorkerPool(
            c.worker_processes, c.worker_job_timeout, memory_limit=c.worker_memory_limit
        )
        traps = TrapGuard(
            max_repeats=c.trap_max_repeats,
            max_query_variants=c.trap_max_query_variants,
            on_refusal=lambda reason: count(f"govsi/traps/{reason}"),
            max_query_chain=c.trap_max_query_chain,
        )
        spider.admission = Admission(c.scope, traps, count, spider.is_new)
        spider.rendering = Rendering.from_crawler(crawler, c.scope.suffixes, count)
        spider.records = Records(count, spider.failure_reason)
        spider.pages = HtmlPages.from_settings(
            crawler.settings,
            c.scope.robots_token,
            admission=spider.admission,
            rendering=spider.rendering,
            worker=spider.worker,
            count=count,
            follow_now=spider.follow_now,
            feeds_found=spider.feeds_found,
        )
        document_text = text_limits(crawler.settings)
        spider.documents = (
            DocumentTexts(spider.worker, document_text, count) if document_text else None
        )
        spider.feeds = FeedPolling(
            c.feeds,
            spider.worker,
            count,
            admit=spider.admission.admit,
            is_new=spider.is_new,
            page_request=spider.page_request,
            failure_reason=spider.failure_reason,
            record=lambda item: spider.store.add(item),
        )
        spider.sitemaps = Sitemaps(
            c.sitemaps,
            spider.worker,
            count,
            max_size=c.max_size,
            admit=spider.admission.admit,
            page_request=spider.page_request,
            failure_reason=spider.failure_reason,
            polls=spider.feeds,
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
        return self.sitemaps.request(url, site, found_on=robots)

    def is_new(self, url: str) -> bool:
        """Whether the page ``url`` is not known to the crawl yet."""
        return seen_key(KIND_PAGE, url) not in self.known

    def follow(self, urls: list[str], depth: int) -> Iterator[Request]:
        limit = self.config.scope.depth_limit
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
        for request in self.feeds.declared(page_url, feeds):
            self.crawler.engine.crawl(request)

    def _requests_of(self, record: FetchedPage) -> Iterator[Request]:
        """The requests an HTML page's record leads to: its new links, its images."""
        yield from self.follow(record.links, record.link_depth)
        for image in record.images:
            known = seen_key(KIND_IMAGE, image) in self.known
            if not known and self.admission.may_fetch_image(image):
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
        self.rendering.open(self.crawler)
        self.pages.copies.rekey(store.engine, self.pages.limits.max_tags)
        self.pages.copies.open(store.engine)
        self.pages.prepare()
        # Feeds and sitemaps whose poll is due are read again, whatever else is due.
        for request in self.due_polls():
            yield request
        for seed in self.seed_urls:
            url = self.admission.admit(seed)
            if url is None:
                logger.warning("seed %r is not an in-scope http(s) URL; skipped", seed)
                continue
            yield DiscoveredPage(url=url, depth=0)
            yield self.page_request(url, 0)
        # A continuing crawl: the scheduler reads the FRONTIER rows from crawldb; images
        # whose download was still queued when an earlier run stopped are queued here.
        for url in store.unfetched_image_urls():
            if self.admission.may_fetch_image(url):
                yield self.image_request(url, depth=0)

    def due_polls(self) -> Iterator[Request]:
        """Requests for the feeds and sitemaps whose poll is due now, those this worker
        takes (``FeedPolling.start``): at the run's start, and when a crawl kept open by
        REVISIT_WAIT wakes (``govsi.spiders.waiting``)."""
        for row in self.feeds.start(self.store.engine):
            host = host_of(row.url)
            if row.kind == "sitemap":
                request = self.sitemaps.request(row.url, host)
            else:
                request = self.feeds.request(row.url, host, "feed", None)
            if request is not None:
                yield request

    def closed(self, reason: str) -> None:
        self.worker.close()
        self.pages.copies.close()

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
        kind = None if location else classify(ctype, url, response.body[:1024])
        if stored is not None and stored.page_type == "HTML" and kind != "HTML":
            # Its stored version is being replaced by no HTML: no original any more. An HTML
            # page is retracted as its own verdict is made (``HtmlPages``).
            self.pages.copies.retract(url)
        if location:
            target = self.admission.admit(resolve(response.url, location))
            if target and target != url:
                record.links = self.admission.chain(url, [target])
            self.count(outcome_stat("redirect"))
            return [record, *self.follow(record.links, record.link_depth)]
        if kind == "HTML":
            return await self.parse_html(response, record)
        if kind in DOCUMENT_TYPES:
            record.page_type = "BINARY"
            record.data_type = kind
            length = header(response, "Content-Length")
            declared = declared_length(length)
            record.size = declared if declared is not None else len(response.body)
            if "download_stopped" not in response.flags:
                # A document changed when its bytes did: their key, whether they are kept
                # or were read only to be compared (a revisit's).
                record.content_hash = await content_key(response.body)
                if self.config.store_documents:
                    record.data = response.body
                if self.documents is not None:
                    record.text = await self.documents.read(url, response.body, kind)
            self.count(outcome_stat("binary", kind))
            return [record]
        record.page_type = "OTHER"
        self.count(outcome_stat("other"))
        return [record]

    async def parse_html(self, response: Response, record: FetchedPage) -> Iterable[Any]:
        """An HTML page's record (``HtmlPages.parse``) and the requests it leads to, each
        request made as Scrapy takes it: a burst of pages read at once would otherwise hold
        all their requests (50 a page on the memory bench) until the last is scheduled."""
        record = await self.pages.parse(response, record)
        if record.duplicate_of is not None:
            return [record]  # the original's links were followed already
        return chain((record,), self._requests_of(record))

    def page_failed(self, failure: Failure) -> Iterator[Any]:
        return self.records.page_failed(failure)

    def failure_reason(self, failure: Failure) -> str:
        """What went wrong, for page.fetch_error and the log."""
        guard = self.crawler.get_extension(AddressGuard)
        return failure_reason(failure, guard, self.config.max_size)

    # -- images ---------------------------------------------------------------------------
    def parse_image(self, response: Response) -> Iterator[Any]:
        return self.records.image(response)

    def image_failed(self, failure: Failure) -> Iterator[Any]:
        return self.records.image_failed(failure)
