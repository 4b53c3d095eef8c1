"""What a revisit saw: a change of the stored copy, or not; and what an answer means.

``change(before, after)`` compares two versions of one URL and names what changed: its
kind of resource (``type``), its status (``status``: 200 → 404/410, → a redirect), where a
redirect leads (``target``) or its content (``content``): an HTML page's main-text key
(``govsi.dedup``'s exact key, so a new footer date, view counter, CSRF token or rotating
banner is no change), a document's bytes (their SHA-256, ``bytes_key``). None: the same.
A version whose key is unknown (its bytes were never read) is compared by size where both
are known, else taken as unchanged: a change is never made up.

``answer(status, conditional=..., stored=...)`` reads a revisit's response before its body:
``not_modified`` (a 304 to a conditional request: the stored copy stays), ``failed`` (a 304
to an unconditional request, or a server error or throttle over a good copy: the copy
stays, the reason is recorded) or ``fetched`` (read as on a first visit). A 304 is never a
change, and never read as content.

``outcome(before, after)`` names what a visit that fetched ``after`` over ``before`` found,
one of ``Outcome`` (``page.visit_outcome``, counted per host by ``scrapy report``); a 304
is ``not_modified`` and a failed revisit ``kept``, decided before there is an ``after``.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Final, Literal, get_args

from govsi.items import PageType, Revisit

__all__ = [
    "OUTCOMES",
    "Answer",
    "Change",
    "Outcome",
    "Version",
    "answer",
    "bytes_key",
    "change",
    "has_copy",
    "outcome",
]

Change = Literal["type", "status", "target", "content"]
AnswerKind = Literal["not_modified", "failed", "fetched"]
# What a visit found (page.visit_outcome): a first visit; a 304 to a conditional request;
# fetched again, the same or changed (gone: now 404/410, moved: now a redirect or one
# leading elsewhere, changed: any other change); a revisit that kept the stored copy (no
# usable answer, or robots.txt now forbids the page).
Outcome = Literal["new", "not_modified", "same", "changed", "gone", "moved", "kept"]
OUTCOMES: Final[tuple[Outcome, ...]] = get_args(Outcome)

# Statuses a server gives while it is overloaded or down: they say nothing of the page.
TRANSIENT: Final = frozenset({408, 429, 500, 502, 503, 504})
# Page types that are one kind of resource: a copy is still an HTML page.
_KIND: Final[dict[PageType, str]] = {"HTML": "HTML", "DUPLICATE": "HTML"}


def bytes_key(data: bytes) -> str:
    """The content key of a document or a picture: the hex SHA-256 of its bytes."""
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True, slots=True)
class Version:
    """One version of a URL as crawldb keeps it (a stored row, or a visit's record)."""

    page_type: PageType | None
    http_status_code: int | None = None
    # The main text's key (HTML, DUPLICATE) or the bytes' (BINARY); None: not known.
    content_hash: str | None = None
    # A document's size in bytes (declared or read), when its key is not known.
    size: int | None = None
    # Where a redirect leads (its one link), if anywhere in scope.
    target: str | None = None


def change(before: Version, after: Version) -> Change | None:
    """What changed from ``before`` to ``after`` (None: nothing that matters). A version
    not fetched yet (``FRONTIER``, or no row) has nothing to change from."""
    if before.page_type in (None, "FRONTIER"):
        return None
    if _kind(before.page_type) != _kind(after.page_type):
        return "type"
    if before.http_status_code != after.http_status_code:
        return "status"
    status = after.http_status_code or 0
    if 300 <= status < 400:
        return "target" if before.target != after.target else None
    if not 200 <= status < 300:
        return None  # an error page's text is not content
    if before.content_hash is not None and after.content_hash is not None:
        return "content" if before.content_hash != after.content_hash else None
    if after.page_type == "BINARY" and None not in (before.size, after.size):
        return "content" if before.size != after.size else None
    return None


def outcome(before: Version, after: Version) -> Outcome:
    """What a visit that fetched ``after`` found over the stored ``before`` (a version not
    fetched yet: a first visit, ``new``)."""
    if before.page_type in (None, "FRONTIER"):
        return "new"
    if change(before, after) is None:
        return "same"
    status = after.http_status_code or 0
    if status in (404, 410):
        return "gone"
    if 300 <= status < 400:
        return "moved"
    return "changed"


def _kind(page_type: PageType | None) -> str | None:
    return _KIND.get(page_type, page_type) if page_type is not None else None


def has_copy(stored: Revisit | None) -> bool:
    """Whether a revisit checks a copy worth keeping: the URL answered when last fetched
    (not a fetch error, nor a URL never fetched)."""
    return stored is not None and stored.http_status_code is not None


@dataclass(frozen=True, slots=True)
class Answer:
    kind: AnswerKind
    reason: str | None = None  # why a ``failed`` visit kept the copy (page.fetch_error)


def answer(status: int, *, conditional: bool, stored: Revisit | None) -> Answer:
    """What a response of ``status`` means for the copy ``stored`` (None: a first visit).
    ``conditional``: the request carried If-None-Match or If-Modified-Since."""
    if status == 304:
        if conditional:
            return Answer("not_modified")
        return Answer("failed", "HTTP 304 Not Modified to an unconditional request")
    if status in TRANSIENT and has_copy(stored):
        assert stored is not None
        if stored.http_status_code not in TRANSIENT:
            return Answer("failed", f"HTTP {status} on a revisit; the stored copy is kept")
    return Answer("fetched")
