"""Downloader middlewares: unwanted bodies stopped after the headers, browser pages and
contexts closed after rendering."""

from __future__ import annotations

import contextlib
import logging
from typing import Any

from scrapy import Request, Spider, signals
from scrapy.crawler import Crawler
from scrapy.exceptions import StopDownload
from scrapy.http import Headers, Response

from govsi.contenttypes import classify

logger = logging.getLogger(__name__)

DOCUMENT_TYPES = frozenset({"PDF", "DOC", "DOCX", "PPT", "PPTX"})


def keep_body(
    content_type: str | None, url: str, kind: str, store_binary: bool, store_images: bool
) -> bool:
    """Decide from the response headers alone whether the body is worth downloading."""
    if kind == "image":
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

    def __init__(self, crawler: Crawler) -> None:
        self.store_binary = crawler.settings.getbool("STORE_BINARY_DATA")
        self.store_images = crawler.settings.getbool("STORE_IMAGE_DATA")
        self.stats = crawler.stats
        crawler.signals.connect(self.headers_received, signal=signals.headers_received)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> StopUnwantedBodiesMiddleware:
        return cls(crawler)

    def headers_received(
        self, headers: Headers, body_length: int, request: Request, spider: Spider
    ) -> None:
        kind = request.meta.get("govsi_kind")
        if kind not in ("page", "image"):
            return  # robots.txt, sitemaps: always read whole
        raw = headers.get("Content-Type")
        ctype = raw.decode("latin-1") if raw else None
        if not keep_body(ctype, request.url, kind, self.store_binary, self.store_images):
            if self.stats is not None:
                self.stats.inc_value("govsi/download_stopped")
            raise StopDownload(fail=False)


class ContextRotation:
    """Which browser context each rendered page goes to, and which contexts may be closed.

    A browser context keeps caches and state for as long as it lives, so the browser's
    memory creeps up over a long crawl in one context. Every ``per_context`` pages the
    next ones go to a new generation; a retired generation is closed once none of its
    pages is in flight any more, or, should one never come back, when the next
    generation retires (so at most two are open). Contexts are learned from their pages.
    """

    def __init__(self, per_context: int) -> None:
        self.per_context = max(1, per_context)
        self.generation = 0
        self.issued = 0
        self.in_flight: dict[int, int] = {}
        self.contexts: dict[int, Any] = {}

    def assign(self) -> int:
        if self.issued >= self.per_context:
            self.generation += 1
            self.issued = 0
        self.issued += 1
        self.in_flight[self.generation] = self.in_flight.get(self.generation, 0) + 1
        return self.generation

    def done(self, generation: int, context: Any | None) -> list[Any]:
        """A page of ``generation`` is over; the contexts to close now."""
        left = self.in_flight.get(generation, 0) - 1
        if left > 0:
            self.in_flight[generation] = left
        else:
            self.in_flight.pop(generation, None)
        if context is not None:
            self.contexts[generation] = context  # a browser restart makes a new one
        closing = []
        for g in sorted(self.contexts):
            retired = g < self.generation
            if retired and (g < self.generation - 1 or g not in self.in_flight):
                closing.append(self.contexts.pop(g))
        return closing


class RenderContextMiddleware:
    """Closes each rendered page once downloaded, and rotates browser contexts
    (RENDER_CONTEXT_PAGES). Next to the download handler, so a retry gets a new page."""

    def __init__(self, crawler: Crawler) -> None:
        self.rotation = ContextRotation(crawler.settings.getint("RENDER_CONTEXT_PAGES"))
        self.stats = crawler.stats

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> RenderContextMiddleware:
        return cls(crawler)

    def process_request(self, request: Request) -> None:
        if request.meta.get("playwright") and request.meta.get("playwright_include_page"):
            generation = self.rotation.assign()
            request.meta["govsi_context"] = generation
            request.meta["playwright_context"] = f"govsi-{generation}"

    async def process_response(self, request: Request, response: Response) -> Response:
        await self._release(request)
        return response

    async def process_exception(self, request: Request, exception: Exception) -> None:
        await self._release(request)

    async def _release(self, request: Request) -> None:
        generation = request.meta.pop("govsi_context", None)
        if generation is None:
            return
        page = request.meta.pop("playwright_page", None)
        context = None
        if page is not None:
            context = page.context
            # The browser may have died with it: a closed page needs no closing.
            with contextlib.suppress(Exception):
                await page.close()
            self.stats.inc_value("govsi/render/pages_closed")
        for old in self.rotation.done(generation, context):
            with contextlib.suppress(Exception):
                await old.close()
            self.stats.inc_value("govsi/render/contexts_closed")
