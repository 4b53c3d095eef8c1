"""The conditional request of a revisit: the stored validators, sent back verbatim.

``conditional_headers`` gives ``If-None-Match`` for a stored ``ETag`` and
``If-Modified-Since`` for a stored ``Last-Modified``, byte for byte as received: nginx's
default ``if_modified_since exact`` answers 304 only to the exact string, so a date is never
parsed and re-formatted. Nothing for a first visit, or a copy without validators.

``validator`` is what is kept of a response's validator: the header's value as received
(its UTF-8 text, which Scrapy encodes back to the same bytes), or None when it could not be
sent back verbatim or does not fit its column. A date that does not parse is kept all the
same: a server that cannot read it answers in full, and the content decides.
"""

from __future__ import annotations

from typing import Final

from govsi.items import Revisit

__all__ = ["ETAG_MAX", "LAST_MODIFIED_MAX", "conditional_headers", "validator"]

# page.etag and page.last_modified (image's too): longer values are not kept at all, since
# a validator cut short would never match.
ETAG_MAX: Final = 1000
LAST_MODIFIED_MAX: Final = 200


def conditional_headers(revisit: Revisit | None) -> dict[str, str]:
    """The headers that make ``revisit``'s request conditional (empty: unconditional)."""
    if revisit is None:
        return {}
    headers: dict[str, str] = {}
    if revisit.etag:
        headers["If-None-Match"] = revisit.etag
    if revisit.last_modified:
        headers["If-Modified-Since"] = revisit.last_modified
    return headers


def validator(raw: bytes | None, limit: int) -> str | None:
    """The validator to keep from a header's raw value (None: none, or not one that can
    be sent back byte for byte: not UTF-8, a control character, longer than ``limit``)."""
    if not raw:
        return None
    try:
        value = raw.decode("utf-8").strip(" \t")
    except UnicodeDecodeError:
        return None
    if not value or len(value) > limit or any(c < " " or c == "\x7f" for c in value):
        return None
    return value
