"""Scrapy's HTTP/1.1 download handler with caps on a response's header section.

Twisted's response parser (``twisted.web._newclient.HTTPClientParser``) caps one line at
``LineReceiver.MAX_LENGTH`` (16 KiB) but appends continuation lines, and headers, without
limit until the download timeout: a host sending endless continuation lines took the
crawler's memory (bench/README, bench.hostile_crawl's ``headers`` case). Here the parser
counts the header section's bytes and header fields, and past MAX_HEADER_BYTES or
MAX_HEADERS it gives up: the connection is dropped, and the request fails with
``HeaderLimitExceeded`` (not retried: the server would send the same), logged and counted
under ``govsi/fetch/header_limit/<bytes|count>``.

How it is plugged in: Scrapy's handler already swaps the parser of each request for its
lenient subclass (``_LenientHTTP11ClientProtocol.request``), since Twisted's protocol
hardcodes the class; the protocol here swaps it for a subclass of that one, which holds
no other state. Those are private names of the pinned Scrapy: should they go, importing
this module fails and so does the crawl's start, rather than crawling without the caps.
"""

from __future__ import annotations

import logging
from functools import lru_cache, partial
from typing import Any

from scrapy import Request
from scrapy.core.downloader.handlers.http11 import (
    HTTP11DownloadHandler,
    _LenientHTTP11ClientFactory,
    _LenientHTTP11ClientProtocol,
    _LenientHTTPClientParser,
)
from scrapy.crawler import Crawler
from scrapy.exceptions import DownloadFailedError
from scrapy.http import Response
from twisted.internet import endpoints
from twisted.internet.defer import Deferred
from twisted.internet.interfaces import IAddress
from twisted.web._newclient import ResponseFailed

logger = logging.getLogger(__name__)

__all__ = [
    "BoundedHTTP11DownloadHandler",
    "HeaderLimitExceeded",
    "HeaderLimits",
    "cache_host_encoding",
]

# Distinct host names whose IDNA form is kept: a crawl's working set of hosts at a time.
HOST_ENCODINGS = 4096


class HeaderLimitExceeded(Exception):
    """A response's header section went past a cap; ``limit`` is "bytes" or "count"."""

    def __init__(self, limit: str, message: str) -> None:
        super().__init__(message)
        self.limit = limit


class HeaderLimits:
    """The caps, from MAX_HEADER_BYTES and MAX_HEADERS (0: no cap)."""

    def __init__(self, max_bytes: int, max_count: int) -> None:
        self.max_bytes = max_bytes
        self.max_count = max_count


class _BoundedHTTPClientParser(_LenientHTTPClientParser):
    """Scrapy's lenient parser, counting the header section as it comes. The counts are
    of the whole exchange, 1xx interim responses included (each starts the header
    section anew in Twisted, so endless 100 Continue would otherwise never stop)."""

    limits = HeaderLimits(0, 0)  # set on each parser by the protocol
    _header_bytes = 0
    _header_count = 0

    def lineReceived(self, line: bytes) -> None:
        self._header_bytes += len(line) + 1  # the b"\n" the line receiver took off
        limits = self.limits
        if limits.max_bytes and self._header_bytes > limits.max_bytes:
            raise HeaderLimitExceeded(
                "bytes", f"response headers over {limits.max_bytes} bytes (MAX_HEADER_BYTES)"
            )
        if line[:1] not in (b" ", b"\t", b"\r", b""):  # a field, not a continuation
            self._header_count += 1
            # The status line is counted too: a field more is allowed.
            if limits.max_count and self._header_count > limits.max_count + 1:
                raise HeaderLimitExceeded(
                    "count", f"response with more than {limits.max_count} headers (MAX_HEADERS)"
                )
        super().lineReceived(line)

    def lineLengthExceeded(self, line: bytes) -> None:
        # Twisted would drop the connection with no reason given.
        raise HeaderLimitExceeded("bytes", f"a response header line over {self.MAX_LENGTH} bytes")


class _BoundedHTTP11ClientProtocol(_LenientHTTP11ClientProtocol):
    def __init__(self, quiescentCallback: Any, limits: HeaderLimits) -> None:
        # Twisted's HTTP11ClientProtocol.__init__ has no type annotations.
        super().__init__(quiescentCallback)  # type: ignore[no-untyped-call]
        self._limits = limits

    def request(self, request: Any) -> Deferred[Any]:
        d = super().request(request)
        # Never None here (see the base class); the swap is safe as the parser subclass
        # only adds counters, which start from the class's zeros.
        assert self._parser is not None
        self._parser.__class__ = _BoundedHTTPClientParser
        self._parser.limits = self._limits  # type: ignore[attr-defined]
        return d


class _BoundedHTTP11ClientFactory(_LenientHTTP11ClientFactory):
    def __init__(self, quiescentCallback: Any, metadata: Any, limits: HeaderLimits) -> None:
        # Twisted's _HTTP11ClientFactory.__init__ has no type annotations.
        super().__init__(quiescentCallback, metadata)  # type: ignore[no-untyped-call]
        self._limits = limits

    def buildProtocol(self, addr: IAddress | None) -> _BoundedHTTP11ClientProtocol:
        return _BoundedHTTP11ClientProtocol(self._quiescentCallback, self._limits)


class BoundedHTTP11DownloadHandler(HTTP11DownloadHandler):
    """``DOWNLOAD_HANDLERS`` for http and https: Scrapy's, with the header caps."""

    def __init__(self, crawler: Crawler) -> None:
        super().__init__(crawler)
        s = crawler.settings
        limits = HeaderLimits(s.getint("MAX_HEADER_BYTES"), s.getint("MAX_HEADERS"))
        # The pool calls its factory with (quiescentCallback, metadata).
        self._pool._factory = partial(_BoundedHTTP11ClientFactory, limits=limits)  # type: ignore[assignment]
        cache_host_encoding()

    async def download_request(self, request: Request) -> Response:
        try:
            return await super().download_request(request)
        except DownloadFailedError as exc:
            cause = exc.__cause__
            reasons = cause.reasons if isinstance(cause, ResponseFailed) else []
            over = next(
                (r.value for r in reasons if isinstance(r.value, HeaderLimitExceeded)), None
            )
            if over is None:
                raise
            logger.warning("%s: %s; connection dropped", request.url, over)
            self._crawler.stats.inc_value(f"govsi/fetch/header_limit/{over.limit}")
            raise over from None


def cache_host_encoding() -> None:
    """Remember the IDNA form of the host names Twisted's ``HostnameEndpoint`` encodes.

    Twisted's agent builds an endpoint for every request, pooled connection or not, and
    encodes its host with the ``idna`` package each time, a share of the reactor's time
    per request that a small page notices, for a pure function of a name the crawl asks for again
    and again. Errors are not cached (they are raised again). Idempotent."""
    # A private name of the pinned Twisted (Scrapy patches the same one).
    encode = endpoints._idnaBytes  # type: ignore[attr-defined]
    if not hasattr(encode, "cache_info"):
        endpoints._idnaBytes = lru_cache(maxsize=HOST_ENCODINGS)(encode)  # type: ignore[attr-defined]
