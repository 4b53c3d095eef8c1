"""Scrapy's side of the archive: an ``Exchange`` from a request and the response the
download handler gave (before any middleware decoded it), and the signal by which a
rendered page's DOM reaches the archive."""

from __future__ import annotations

from datetime import UTC, datetime

from scrapy import Request
from scrapy.http import Headers, Response

from govsi.archive.exchange import Exchange, Header

__all__ = ["dom_rendered", "exchange_of", "header_pairs"]

# Sent with url=, html=, response= when a page was rendered: its DOM is archived, tied to
# the record of the response it was rendered from.
dom_rendered = object()


def header_pairs(headers: Headers) -> tuple[Header, ...]:
    """Scrapy's headers as (name, value) text pairs, one per value, bytes kept (latin-1)."""
    return tuple(
        (bytes(name).decode("latin-1"), bytes(value).decode("latin-1"))
        for name, values in headers.items()
        for value in values
    )


def exchange_of(request: Request, response: Response, when: datetime | None = None) -> Exchange:
    """The exchange as the archive keeps it; the body as received (still encoded)."""
    ip = getattr(response, "ip_address", None)
    return Exchange(
        url=request.url,
        method=request.method,
        request_headers=header_pairs(request.headers),
        request_body=request.body,
        protocol=getattr(response, "protocol", None) or "HTTP/1.1",
        status=response.status,
        response_headers=header_pairs(response.headers),
        body=response.body,
        ip=str(ip) if ip is not None else None,
        date=when or datetime.now(UTC),
        truncated="unspecified" if "download_stopped" in response.flags else None,
    )
