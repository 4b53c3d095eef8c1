"""A page's earlier versions, bounded: each distinct HTML stored once per page, and only the
versions the retention policy keeps.

A change (``govsi.store.visits``) hands the version it replaced to ``add_versions``, in the
batch's transaction. Its HTML goes to ``page_version_content`` once per page and content
(keyed by the SHA-256 of its UTF-8 bytes): a page flipping between two contents holds two
copies however often it flips. Its ``page_version`` row points there (``content_id``).

Retention (``Retention``: HISTORY_KEEP_VERSIONS, HISTORY_KEEP_MONTHS) is applied to a page
whenever a version is added to it, so the work per write is bounded by the policy and no
separate job is needed: a page keeps its last ``versions`` versions, and the last version
seen in each calendar month of the ``months`` months up to this visit (the month of the
visit counts as one). Versions not kept go, record and content alike; a
content no kept version points at goes with them. So a page holds at most
``versions + months`` earlier versions. A page's history from before the policy is cut back
at its next change.

Contents are shared within a page, never across pages: every row a write touches belongs to
a page whose row the transaction has locked (``visits.read_stored``), so two workers never
add and drop one content at once.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, select

from govsi.store.database import chunks
from govsi.store.schema import PAGE, PAGE_VERSION, PAGE_VERSION_CONTENT

__all__ = ["Kept", "Retention", "VersionRow", "add_versions", "html_hash", "stored_html", "to_drop"]


def html_hash(html: str) -> str:
    """The key a content is stored under: SHA-256 (hex) of its UTF-8 bytes."""
    return hashlib.sha256(html.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True, slots=True)
class Retention:
    """How much of each page's history is kept (HISTORY_KEEP_VERSIONS, HISTORY_KEEP_MONTHS),
    its versions here and its changes in ``govsi.store.changes``. Values below 0 count as 0."""

    versions: int = 10
    months: int = 24


@dataclass(frozen=True, slots=True)
class Kept:
    """An earlier version as retention sees it: its id (later versions have higher ones)
    and when it was last seen current (its ``accessed_time``; None if never known)."""

    id: int
    seen: datetime | None


def _month(when: datetime) -> int:
    return when.year * 12 + when.month - 1


def to_drop(versions: Sequence[Kept], now: datetime, retention: Retention) -> list[int]:
    """The ids of one page's ``versions`` that ``retention`` lets go at visit ``now``, in id
    order (pure): all but the last ``retention.versions`` and, of the calendar months of
    the ``retention.months`` up to ``now``'s (which counts), each month's last version."""
    ordered = sorted(versions, key=lambda v: v.id)
    last = max(retention.versions, 0)
    newest_of_month: dict[int, int] = {}
    first_month = _month(now) - max(retention.months, 0) + 1
    for v in ordered:
        if v.seen is not None and _month(v.seen) >= first_month:
            newest_of_month[_month(v.seen)] = v.id  # ascending ids: the last one wins
    kept = set(newest_of_month.values()) | {v.id for v in ordered[max(len(ordered) - last, 0) :]}
    return [v.id for v in ordered if v.id not in kept]


@dataclass(frozen=True, slots=True)
class VersionRow:
    """An earlier version a change replaced, as it was stored; ``replaced_at``: the visit
    that replaced it (retention's "now" for its page)."""

    page_id: int
    accessed_time: datetime | None
    http_status_code: int | None
    content_hash: str | None
    page_type_code: str | None
    changed_time: datetime | None
    html_content: str | None
    replaced_at: datetime


def stored_html(conn: Connection, ids: Iterable[int]) -> dict[int, str | None]:
    """The HTML of pages ``ids`` as their rows hold it now (before the batch writes them)."""
    found: dict[int, str | None] = {}
    for part in chunks(sorted(set(ids))):
        q = select(PAGE.c.id, PAGE.c.html_content).where(PAGE.c.id.in_(part))
        found.update((pid, html) for pid, html in conn.execute(q))
    return found


Insert = Callable[..., Any]
_C = PAGE_VERSION_CONTENT.c
_V = PAGE_VERSION.c


def _content_ids(conn: Connection, pages: Sequence[int]) -> dict[tuple[int, str], int]:
    ids: dict[tuple[int, str], int] = {}
    for part in chunks(pages):
        q = select(_C.id, _C.page_id, _C.html_hash).where(_C.page_id.in_(part))
        ids.update(((pid, key), cid) for cid, pid, key in conn.execute(q))
    return ids


def add_versions(
    conn: Connection, insert: Insert, versions: Sequence[VersionRow], retention: Retention
) -> int:
    """Store ``versions`` (in order) and apply ``retention`` to their pages; the number of
    versions dropped. ``insert``: the dialect's (ON CONFLICT DO NOTHING)."""
    if not versions:
        return 0
    pages = sorted({v.page_id for v in versions})
    keyed = [(v, None if v.html_content is None else html_hash(v.html_content)) for v in versions]
    contents = _content_ids(conn, pages)
    new = {(v.page_id, key): v.html_content for v, key in keyed if key is not None}
    rows = [
        {"page_id": pid, "html_hash": key, "html_content": html,
         "size": len(html.encode("utf-8", "surrogatepass"))}
        for (pid, key), html in new.items() if (pid, key) not in contents and html is not None
    ]  # fmt: skip
    if rows:
        conn.execute(insert(PAGE_VERSION_CONTENT).on_conflict_do_nothing(), rows)
        contents = _content_ids(conn, pages)
    conn.execute(PAGE_VERSION.insert(), [
        {"page_id": v.page_id, "accessed_time": v.accessed_time,
         "http_status_code": v.http_status_code, "content_hash": v.content_hash,
         "page_type_code": v.page_type_code, "changed_time": v.changed_time,
         "content_id": None if key is None else contents[(v.page_id, key)]}
        for v, key in keyed
    ])  # fmt: skip
    now: dict[int, datetime] = {}
    for v in versions:
        now[v.page_id] = max(now.get(v.page_id, v.replaced_at), v.replaced_at)
    return _prune(conn, pages, now, retention, contents)


def _prune(
    conn: Connection,
    pages: Sequence[int],
    now: dict[int, datetime],
    retention: Retention,
    contents: dict[tuple[int, str], int],
) -> int:
    """Apply ``retention`` to ``pages``; drop the contents no kept version points at."""
    held: dict[int, list[Kept]] = {}
    pointed: dict[int, int | None] = {}
    for part in chunks(pages):
        q = select(_V.id, _V.page_id, _V.accessed_time, _V.content_id).where(_V.page_id.in_(part))
        for vid, pid, seen, cid in conn.execute(q):
            held.setdefault(pid, []).append(Kept(vid, seen))
            pointed[vid] = cid
    dropped = [vid for pid, kept in held.items() for vid in to_drop(kept, now[pid], retention)]
    for part in chunks(dropped):
        conn.execute(PAGE_VERSION.delete().where(_V.id.in_(part)))
    gone = set(dropped)
    used = {cid for vid, cid in pointed.items() if vid not in gone}
    orphans = sorted(cid for cid in contents.values() if cid not in used)
    for part in chunks(orphans):
        conn.execute(PAGE_VERSION_CONTENT.delete().where(_C.id.in_(part)))
    return len(dropped)
