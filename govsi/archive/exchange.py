"""One HTTP exchange as the archive keeps it, and the heads its records carry (pure).

The response's body is the one that came off the wire, still in its Content-Encoding
(the record is made before Scrapy's decompression), de-chunked by the HTTP client. Its
head is rebuilt from the status and the headers as received: header order kept, names
in Scrapy's capitalisation, the reason phrase the standard one. A ``Transfer-Encoding``
no longer describes the stored body, so it is renamed ``X-Crawler-Transfer-Encoding``
(as StormCrawler does) and a ``Content-Length`` of the stored body is given; a
``Content-Length`` that disagrees with the stored body is kept as
``X-Crawler-Content-Length``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from http import HTTPStatus
from typing import Literal
from urllib.parse import urlsplit

__all__ = ["Exchange", "Header", "Truncated", "reason_phrase", "request_head", "response_head"]

Header = tuple[str, str]
# Why a stored body is shorter than the server's (WARC-Truncated): the crawl stopped it
# after the headers ("unspecified": a type it does not keep).
Truncated = Literal["length", "time", "disconnect", "unspecified"]


@dataclass(frozen=True)
class Exchange:
    """What the crawler sent and got back for one request."""

    url: str  # as requested, not canonicalized
    method: str
    request_headers: tuple[Header, ...]
    request_body: bytes
    protocol: str  # "HTTP/1.1"
    status: int
    response_headers: tuple[Header, ...]
    body: bytes
    ip: str | None  # the address actually connected to
    date: datetime  # when the response arrived (UTC)
    truncated: Truncated | None = None


def reason_phrase(status: int) -> str:
    """The standard reason phrase of ``status`` ("" for a code without one)."""
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return ""


def request_head(exchange: Exchange) -> tuple[str, list[Header]]:
    """The request line and headers as sent: ``Host`` first when the crawler's headers
    lack it (the HTTP client adds it)."""
    parts = urlsplit(exchange.url)
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    headers = list(exchange.request_headers)
    if not any(k.lower() == "host" for k, _ in headers):
        headers.insert(0, ("Host", parts.netloc))
    return f"{exchange.method} {target} {exchange.protocol}", headers


def response_head(exchange: Exchange) -> tuple[str, list[Header]]:
    """The status line and headers, fixed to describe the stored body (module doc)."""
    line = f"{exchange.protocol} {exchange.status} {reason_phrase(exchange.status)}".rstrip()
    length = str(len(exchange.body))
    chunked = any(k.lower() == "transfer-encoding" for k, _ in exchange.response_headers)
    headers: list[Header] = []
    has_length = False
    for name, value in exchange.response_headers:
        lower = name.lower()
        if lower == "transfer-encoding":
            headers.append(("X-Crawler-Transfer-Encoding", value))
        elif lower == "content-length":
            if has_length:
                continue  # a second one: the first stands
            has_length = True
            if value.strip() == length or exchange.truncated is not None:
                headers.append((name, value))
            else:
                headers.append(("X-Crawler-Content-Length", value))
                headers.append(("Content-Length", length))
        else:
            headers.append((name, value))
    if chunked and not has_length:
        headers.append(("Content-Length", length))
    return line, headers
