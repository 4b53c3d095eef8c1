"""Downloader middlewares: unwanted bodies stopped after the headers; the address guard
asserted on every request."""

from __future__ import annotations

import logging

from scrapy import Request, Spider, signals
from scrapy.crawler import Crawler
from scrapy.exceptions import CannotResolveHostError, StopDownload
from scrapy.http import Headers
from scrapy.statscollectors import StatsCollector
from twisted.internet.error import DNSLookupError

from govsi.net.guard import AddressGuard, AddressRefused
from govsi.requestmeta import KIND_IMAGE, KIND_PAGE, META_KIND, META_REVISIT, Kind
from govsi.revisit.due import revisit_mode
from govsi.store.config import StoreConfig
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
    when STORE_BINARY_DATA is off and REVISIT is off (with revisits on, a document's bytes
    are read to be hashed, so that a revisit knows whether they changed), images when
    STORE_IMAGE_DATA is off, and anything that is neither HTML nor a document. The
    response still reaches the spider, with the ``download_stopped`` flag, so its status
    and type are recorded."""

    def __init__(
        self,
        store_binary: bool,
        store_images: bool,
        stats: StatsCollector | None = None,
        revisits: bool = False,
    ) -> None:
        self.store_binary = store_binary
        self.store_images = store_images
        self.stats = stats
        self.revisits = revisits

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> StopUnwantedBodiesMiddleware:
        # What crawldb keeps, as the store reads it.
        kept = StoreConfig.from_settings(crawler.settings)
        revisits = revisit_mode(crawler.settings.get("REVISIT") or "due") != "off"
        mw = cls(kept.store_binary_data, kept.store_image_data, crawler.stats, revisits)
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
