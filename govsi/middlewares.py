"""Downloader middlewares: unwanted bodies stopped after the headers."""

from __future__ import annotations

import logging

from scrapy import Request, Spider, signals
from scrapy.crawler import Crawler
from scrapy.exceptions import StopDownload
from scrapy.http import Headers
from scrapy.statscollectors import StatsCollector

from govsi.requestmeta import KIND_IMAGE, KIND_PAGE, META_KIND
from govsi.web.contenttypes import DOCUMENT_TYPES, classify

logger = logging.getLogger(__name__)


def keep_body(
    content_type: str | None, url: str, kind: str, store_binary: bool, store_images: bool
) -> bool:
    """Decide from the response headers alone whether the body is worth downloading."""
    if kind == KIND_IMAGE:
        return store_images
    # Pretend the body looks like HTML: what is left is what the headers themselves say.
    decided = classify(content_type, url, b"<html>")
    if decided == "HTML":
        return True
    if decided in DOCUMENT_TYPES:
        return store_binary
    return False


class StopUnwantedBodiesMiddleware:
    """Stop a transfer as soon as the headers show we will not keep its body: documents
    when STORE_BINARY_DATA is off, images when STORE_IMAGE_DATA is off, and anything
    that is neither HTML nor a document. The response still reaches the spider, with the
    ``download_stopped`` flag, so its status and type are recorded."""

    def __init__(
        self, store_binary: bool, store_images: bool, stats: StatsCollector | None = None
    ) -> None:
        self.store_binary = store_binary
        self.store_images = store_images
        self.stats = stats

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> StopUnwantedBodiesMiddleware:
        s = crawler.settings
        mw = cls(s.getbool("STORE_BINARY_DATA"), s.getbool("STORE_IMAGE_DATA"), crawler.stats)
        crawler.signals.connect(mw.headers_received, signal=signals.headers_received)
        return mw

    def headers_received(
        self, headers: Headers, body_length: int, request: Request, spider: Spider
    ) -> None:
        kind = request.meta.get(META_KIND)
        if kind not in (KIND_PAGE, KIND_IMAGE):
            return  # robots.txt, sitemaps: always read whole
        raw = headers.get("Content-Type")
        ctype = raw.decode("latin-1") if raw else None
        if not keep_body(ctype, request.url, kind, self.store_binary, self.store_images):
            if self.stats is not None:
                self.stats.inc_value("govsi/download_stopped")
            raise StopDownload(fail=False)
