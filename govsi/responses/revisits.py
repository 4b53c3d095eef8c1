"""The spider's revisit part: what a response says of its visit, in one place
(``page_visit``): the record of a visit that keeps the stored copy (a 304 to a conditional
request; a failed revisit), or a fetched page's record begun with the visit (its
validators, its content type); the same of an image (``kept_image``, ``visit``).

What a status means is decided in ``govsi.revisit.change.answer`` (pure); here it becomes a
record. A 304's body, if a server sends one, is never read: the record is made from the
status and the headers alone.
"""

from __future__ import annotations

from datetime import datetime
from typing import NamedTuple, TypedDict

from scrapy import Request
from scrapy.http import Response
from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet.threads import deferToThread

from govsi.items import FetchedImage, FetchedPage, Revisit
from govsi.revisit.change import Answer, answer, bytes_key
from govsi.revisit.conditional import ETAG_MAX, LAST_MODIFIED_MAX, validator

__all__ = [
    "PageVisit",
    "Visit",
    "conditional",
    "content_key",
    "header",
    "kept_image",
    "kept_page",
    "page_visit",
    "validators",
    "visit",
]

# Bodies from this size on are hashed in a thread: hashlib lets go of the GIL, and a
# 30 MiB document (DOWNLOAD_MAXSIZE is 32) takes 22 ms that the reactor need not wait.
THREAD_HASH_BYTES = 1 << 20
# Request headers that make a request conditional (govsi.revisit.conditional).
_CONDITIONS = (b"If-None-Match", b"If-Modified-Since")


async def content_key(data: bytes) -> str:
    """A document's content key (``bytes_key``), computed off the reactor when large."""
    if len(data) < THREAD_HASH_BYTES:
        return bytes_key(data)
    key: str = await maybe_deferred_to_future(deferToThread(bytes_key, data))
    return key


def header(response: Response, name: str) -> str | None:
    """A response header as text (None: absent or empty)."""
    value = response.headers.get(name)
    return value.decode("latin-1").strip() if value else None


def validators(response: Response) -> tuple[str | None, str | None]:
    """The response's (ETag, Last-Modified) as received, each None when absent or not one
    that can be sent back verbatim (``validator``)."""
    headers = response.headers
    return (
        validator(headers.get(b"ETag"), ETAG_MAX),
        validator(headers.get(b"Last-Modified"), LAST_MODIFIED_MAX),
    )


class Visit(TypedDict):
    """What every record of a response says of its visit (``FetchedPage``'s and
    ``FetchedImage``'s fields of the same names)."""

    accessed_time: datetime
    http_status_code: int
    etag: str | None
    last_modified: str | None
    revisit: Revisit | None


def visit(response: Response, stored: Revisit | None, now: datetime) -> Visit:
    """The visit ``response`` answered at ``now``, of the copy ``stored`` (None: a first)."""
    etag, last_modified = validators(response)
    return Visit(accessed_time=now, http_status_code=response.status, etag=etag,
                 last_modified=last_modified, revisit=stored)  # fmt: skip


def conditional(request: Request | None) -> bool:
    """Whether ``request`` asked "only if changed" (it carried a validator)."""
    return request is not None and any(request.headers.get(h) for h in _CONDITIONS)


def kept_page(
    url: str,
    depth: int,
    response: Response,
    stored: Revisit | None,
    seen: Answer,
    now: datetime,
) -> FetchedPage:
    """The record of a page visit that keeps the stored copy: a 304 to a conditional
    request (the visit and any validators it sent), or a failed visit (its reason; on a
    first visit, with no copy to keep, an ERROR row)."""
    if seen.kind == "not_modified":
        page_type = (stored.page_type if stored else None) or "HTML"
        return FetchedPage(url, depth, not_modified=True, page_type=page_type,
                           **visit(response, stored, now))  # fmt: skip
    return FetchedPage(url, depth, "ERROR", now, fetch_error=seen.reason, revisit=stored)


def kept_image(url: str, response: Response, stored: Revisit, now: datetime) -> FetchedImage:
    """The record of an image revisit answered 304: the visit and any validators it sent."""
    return FetchedImage(url, not_modified=True, **visit(response, stored, now))


class PageVisit(NamedTuple):
    """A page response's record as its visit makes it. ``kept``: the visit keeps the stored
    copy (a 304, a failed revisit), and the record is whole; else it is a fetched page's,
    begun (its visit and content type), for the page's reading to fill in."""

    record: FetchedPage
    kept: bool


def page_visit(
    url: str, depth: int, response: Response, stored: Revisit | None, now: datetime
) -> PageVisit:
    """What ``response`` (to a request for ``url`` at ``depth``; ``stored``: the copy a
    revisit checks, None on a first visit) says of the visit at ``now``."""
    seen = answer(response.status, conditional=conditional(response.request), stored=stored)
    if seen.kind != "fetched":
        return PageVisit(kept_page(url, depth, response, stored, seen, now), kept=True)
    ctype = header(response, "Content-Type")
    record = FetchedPage(url, depth, "HTML", content_type=ctype, **visit(response, stored, now))
    return PageVisit(record, kept=False)
