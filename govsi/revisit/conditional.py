"""The conditional request of a revisit: the stored validators, sent back verbatim.

``conditional_headers`` gives ``If-None-Match`` for a stored ``ETag`` and
``If-Modified-Since`` for a stored ``Last-Modified``, byte for byte as received: nginx's
default ``if_modified_since exact`` answers 304 only to the exact string, so a date is never
parsed and re-formatted. Nothing for a first visit, or a copy without validators.
"""

from __future__ import annotations

from govsi.items import Revisit

__all__ = ["conditional_headers"]


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
