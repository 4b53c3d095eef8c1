"""Downloader middlewares: unwanted bodies stopped after the headers; every exchange into
the WARC archive; the address guard asserted on every request."""

from __future__ import annotations

import logging
from dataclasses import replace
from datetime import UTC, datetime
from functools import partial

from scrapy import Request, Spider, signals
from scrapy.crawler import Crawler
from scrapy.exceptions import CannotResolveHostError, NotConfigured, StopDownload
from scrapy.http import Headers, Response
from scrapy.statscollectors import StatsCollector
from twisted.internet.defer import Deferred
from twisted.internet.error import DNSLookupError

from govsi.archive.capture import dom_rendered, exchange_of
from govsi.archive.config import ArchiveConfig
from govsi.archive.records import record_id
from govsi.archive.writer import ArchiveWriter, Written
from govsi.items import WarcCapture
from govsi.net.guard import AddressGuard, AddressRefused
from govsi.requestmeta import (
    KIND_IMAGE,
    KIND_PAGE,
    META_KIND,
    META_REVISIT,
    META_URL,
    META_WARC_RECORD,
    Kind,
)
from govsi.revisit.due import revisit_mode
from govsi.store.config import StoreConfig
from govsi.store.extension import CrawlStore
from govsi.store.schema import utcnow
from govsi.web.contenttypes import DOCUMENT_TYPES, classify
from govsi.web.urls import host_of

logger = logging.getLogger(__name__)


def keep_body(
    content_type: str | None,
    url: str,
    kind: Kind,
    store_binary: bool,
    store_images: bool,
    compare: bool = False,
) -> bool:
    """Decide from the response headers alone whether the body is worth downloading.
    ``compare``: a document's bytes are read to be hashed, kept or not (revisits are on:
    a document changed when its bytes did, so its first visit must know them too)."""
    if kind == KIND_IMAGE:
        return store_images
    # Pretend the body looks like HTML: what is left is what the headers themselves say.
    decided = classify(content_type, url, b"<html>")
    if decided == "HTML":
        return True
    if decided in DOCUMENT_TYPES:
        return store_binary or compare
    return False


class StopUnwantedBodiesMiddleware:
    """Stop a transfer as soon as the headers show we will not keep its body: documents
    when STORE_BINARY_DATA, REVISIT and TEXT_EXTRACTION are off (with revisits on, a
    document's bytes are read to be hashed, so that a revisit knows whether they changed;
    with text extraction on, to read its text), images when
    STORE_IMAGE_DATA is off (neither while WARC_DIR archives them), and anything that is
    neither HTML nor a document. The
    response still reaches the spider, with the ``download_stopped`` flag, so its status
    and type are recorded."""

    def __init__(
        self,
        store_binary: bool,
        store_images: bool,
        stats: StatsCollector | None = None,
        revisits: bool = False,
        archive: bool = False,
        text: bool = False,
    ) -> None:
        # An archive (WARC_DIR) keeps every document and picture, whatever crawldb keeps;
        # text extraction reads every document.
        self.store_binary = store_binary or archive or text
        self.store_images = store_images or archive
        self.stats = stats
        self.revisits = revisits

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> StopUnwantedBodiesMiddleware:
        # What crawldb keeps, as the store reads it.
        kept = StoreConfig.from_settings(crawler.settings)
        revisits = revisit_mode(crawler.settings.get("REVISIT") or "due") != "off"
        archive = ArchiveConfig.from_settings(crawler.settings) is not None
        text = crawler.settings.getbool("TEXT_EXTRACTION")
        mw = cls(kept.store_binary_data, kept.store_image_data, crawler.stats, revisits, archive,
                 text)  # fmt: skip
        crawler.signals.connect(mw.headers_received, signal=signals.headers_received)
        return mw

    def headers_received(
        self, headers: Headers, body_length: int, request: Request, spider: Spider
    ) -> None:
        kind: Kind | None = request.meta.get(META_KIND)
        if kind not in (KIND_PAGE, KIND_IMAGE):
            return  # robots.txt, sitemaps: always read whole
        if body_length == 0:
            return  # nothing to stop (a 304): the connection stays open for the next request
        raw = headers.get("Content-Type")
        ctype = raw.decode("latin-1") if raw else None
        compare = self.revisits or request.meta.get(META_REVISIT) is not None
        if not keep_body(ctype, request.url, kind, self.store_binary, self.store_images, compare):
            if self.stats is not None:
                self.stats.inc_value("govsi/download_stopped")
            raise StopDownload(fail=False)


class AddressGuardMiddleware:
    """The address guard on every request, last before the download handler (after
    ``HttpProxyMiddleware`` set any proxy): a request through an untrusted proxy, or with
    the guard no longer the reactor's resolver and not restorable, fails with
    ``AddressRefused``. A connection the guard refused comes back from Scrapy's handler
    as a DNS failure; it leaves here as ``AddressRefused`` with the guard's reason, before
    ``RetryMiddleware`` sees it, so it is never retried. Idle when the guard is off."""

    def __init__(self, guard: AddressGuard | None) -> None:
        self.guard = guard

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> AddressGuardMiddleware:
        return cls(crawler.get_extension(AddressGuard))

    def process_request(self, request: Request) -> None:
        if self.guard is not None:
            self.guard.check_request(request.meta.get("proxy"))

    def process_exception(self, request: Request, exception: Exception) -> None:
        if self.guard is None or not isinstance(exception, CannotResolveHostError | DNSLookupError):
            return
        reason = self.guard.reason(host_of(request.url))
        if reason is not None:
            raise AddressRefused(reason) from exception


class WarcMiddleware:
    """Every exchange into the WARC archive (``WARC_DIR``; not configured without it):
    pages, documents, pictures, robots.txt, sitemaps, redirects, error statuses and the
    sub-resources rendered pages fetch through the crawler. It sits after
    ``HttpCompressionMiddleware`` in the request order, so it sees each response before
    it is decoded: the archive keeps the body as it came. A rendered page's DOM comes by
    the ``dom_rendered`` signal. The response record's id is left in the request's meta
    (``META_WARC_RECORD``). When the archive cannot be written, the crawl stops."""

    def __init__(
        self,
        crawler: Crawler,
        writer: ArchiveWriter,
        guard: AddressGuard | None = None,
        store: CrawlStore | None = None,
    ) -> None:
        self.crawler = crawler
        self.writer = writer
        self.guard = guard
        self.store = store
        self._published: dict[str, int] | None = None
        # Pages whose records were never written (the archive failed): see ``lost``.
        self._lost: set[str] = set()

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> WarcMiddleware:
        config = ArchiveConfig.from_settings(crawler.settings)
        if config is None:
            raise NotConfigured("WARC_DIR is not set")
        store = crawler.get_extension(CrawlStore)
        writer = ArchiveWriter(config, lambda: store.crawl_id if store is not None else "")
        mw = cls(crawler, writer, crawler.get_extension(AddressGuard), store)
        if store is not None:
            store.written_after.append(mw)
        crawler.signals.connect(mw.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(mw.spider_closed, signal=signals.spider_closed)
        crawler.signals.connect(mw.rendered, signal=dom_rendered)
        return mw

    def spider_opened(self) -> None:
        from twisted.internet import reactor

        self.writer.on_failure = lambda error: reactor.callFromThread(self._stop, error)
        self.writer.call_from_thread = reactor.callFromThread  # the dones below, per batch
        closed = self.writer.start()
        if closed:
            self.crawler.stats.set_value("govsi/warc/recovered_files", len(closed))

    def process_response(self, request: Request, response: Response) -> Response:
        rid = record_id()
        request.meta[META_WARC_RECORD] = rid
        exchange = exchange_of(request, response)
        if exchange.ip is None and self.guard is not None:
            # Scrapy knows the peer of a plain connection only; over TLS, the address the
            # guard pinned the host to is the one connected to.
            exchange = replace(exchange, ip=self.guard.pinned(host_of(request.url)))
        # The response goes on at once; crawldb's writer waits for the archive before each
        # batch (``barrier``), so no page is stored before its capture is on disk.
        self.writer.exchange(exchange, rid, partial(self._captured, request))
        return response

    def barrier(self) -> Deferred[None]:
        """Fires once every exchange handed so far is written (crawldb's writer waits)."""
        d: Deferred[None] = Deferred()
        self.writer.barrier(partial(d.callback, None))
        return d

    def backlogged(self) -> bool:
        """The archive is behind (WARC_QUEUE_MAX_BYTES queued): crawldb's back-pressure
        holds new requests, so a slow disk cannot fill memory with bodies."""
        return self.writer.backlogged()

    def lost(self, url: str) -> bool:
        """The page at ``url`` was fetched but its records never written (the archive
        failed): crawldb leaves it to be fetched again."""
        return url in self._lost

    def rendered(self, url: str, html: str, response: Response) -> None:
        done = partial(self._captured, response.request)
        self.writer.dom(url, html, response.meta.get(META_WARC_RECORD), datetime.now(UTC), done)

    def _captured(self, request: Request | None, written: Written | None) -> None:
        """crawldb learns where a page's record lies (warc_capture); the stats, what the
        archive holds so far: complete once the last response has passed, before the
        spider closes and crawldb's extension records the run's figures."""
        self._publish()
        if request is None or self.store is None:
            return
        if request.meta.get(META_KIND) != KIND_PAGE or META_URL not in request.meta:
            return  # robots.txt, sitemaps, pictures, rendered pages' sub-resources
        if written is None:
            self._lost.add(request.meta[META_URL])
            return
        placed = written.placed
        self.store.add(WarcCapture(
            url=request.meta[META_URL], depth=request.meta.get("depth", 0),
            warc_file=placed.filename, warc_offset=placed.offset, warc_length=placed.length,
            record_id=written.record_id, record_type=written.record_type,
            captured_at=utcnow(),
        ))  # fmt: skip

    def spider_closed(self) -> None:
        self.writer.close()
        self._publish()

    def _publish(self) -> None:
        # The archive's process's latest figures: a dict the writer replaces whole with
        # each answer, so once per batch.
        figures = self.writer.figures
        if figures is self._published:
            return
        self._published = figures
        stats = self.crawler.stats
        for name, n in figures.items():
            stats.set_value(f"govsi/warc/{name}", n)

    def _stop(self, error: BaseException) -> None:
        from scrapy.utils.defer import deferred_from_coro

        engine = self.crawler.engine
        if engine is not None and engine.running:
            self.crawler.stats.set_value("govsi/warc/failed", str(error)[:300])
            deferred_from_coro(engine.close_spider_async(reason="warc_failed"))
