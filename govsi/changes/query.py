"""The changes under a filter, newest first, and one change with its diff, from crawldb.

``list_changes`` asks SQL for the filter's time, hosts, kinds and types (newest first by
``(visit_time, id)``, a LIMIT, paging by an id cursor). Search words are matched here, not
in the Tantivy index: the words must meet a change's own versions (a gone page's last text,
which the index has dropped; a changed page's text after that change, which the index has
replaced since), so candidates are read newest first in chunks, each text cut to
CHANGES_MATCH_MAX_CHARS, until ``limit`` match or CHANGES_SCAN_MAX were read
(``ChangeList.stopped``: more may match further back; narrow the window).

A change's diff: left, the text the visit replaced (``text_before``; empty for a new
page); right, the next change's ``text_before`` or, for the page's latest change, its
``page_text`` (empty for a gone or moved page). A side crawldb no longer keeps makes no
diff (``ChangeDetail.diff`` None).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

from sqlalchemy import Connection, Engine, Select, and_, case, func, or_, select
from sqlalchemy.sql.elements import ColumnElement

from govsi.changes.config import DEFAULT_CONFIG, ChangesConfig
from govsi.changes.diff import WordDiff, excerpt, word_diff
from govsi.changes.filters import ChangeFilter, parse_since
from govsi.changes.matching import matches, query_words
from govsi.items import ChangeKind
from govsi.store import schema
from govsi.store.database import chunks

__all__ = [
    "ChangeDetail",
    "ChangeEntry",
    "ChangeFilter",
    "ChangeList",
    "change_detail",
    "find_changes",
    "list_changes",
    "parse_since",
]

EXCERPT_CHARS = 200
# Candidates read per statement while search words are matched.
SCAN_CHUNK = 200
# A diff's timeout once the list's budget is spent (0 would mean none).
_AT_ONCE = 1e-6
_C, _P, _S = schema.PAGE_CHANGE, schema.PAGE, schema.SITE


@dataclass(frozen=True, slots=True)
class ChangeEntry:
    id: int
    page_id: int
    url: str
    host: str
    kind: ChangeKind
    time: datetime  # the visit's, naive UTC
    title: str | None
    doc_type: str | None  # html, pdf, doc, ...; None for another page type
    added: str  # short excerpts of the diff ("" for none), printable
    removed: str


@dataclass(frozen=True, slots=True)
class ChangeDetail:
    entry: ChangeEntry
    diff: WordDiff | None  # None: a side's text is no longer kept
    before_known: bool
    after_known: bool


@dataclass(frozen=True, slots=True)
class ChangeList:
    """A page of changes; ``stopped``: the search words' scan reached CHANGES_SCAN_MAX
    before ``limit`` matched, so older changes may match too (``next_before`` resumes)."""

    entries: list[ChangeEntry]
    stopped: bool = False
    next_before: int | None = None  # the cursor of the next page, None at the end
    scanned: int = 0


def _doc_type() -> ColumnElement[Any]:
    data_type = (
        select(func.min(schema.PAGE_DATA.c.data_type_code))
        .where(schema.PAGE_DATA.c.page_id == _P.c.id)
        .scalar_subquery()
    )
    return case(
        (_P.c.page_type_code == "HTML", "html"),
        (_P.c.page_type_code == "BINARY", func.lower(data_type)),
        else_=None,
    )


def _next_change() -> ColumnElement[Any]:
    later = _C.alias("later")
    return (
        select(later.c.id)
        .where(
            later.c.page_id == _C.c.page_id,
            or_(
                later.c.visit_time > _C.c.visit_time,
                and_(later.c.visit_time == _C.c.visit_time, later.c.id > _C.c.id),
            ),
        )
        .order_by(later.c.visit_time, later.c.id)
        .limit(1)
        .scalar_subquery()
    )


def _select(doc_type: ColumnElement[Any]) -> Select[Any]:
    """Changes with their page's URL, host and type, and the page's next change: id,
    page_id, url, domain, kind, visit_time, title, doc_type, next_id."""
    return select(
        _C.c.id, _C.c.page_id, _P.c.url, _S.c.domain, _C.c.kind, _C.c.visit_time,
        _C.c.title, doc_type.label("doc_type"), _next_change().label("next_id"),
    ).select_from(
        _C.join(_P, _P.c.id == _C.c.page_id).outerjoin(_S, _S.c.id == _P.c.site_id)
    )  # fmt: skip


def _rows(conn: Connection, flt: ChangeFilter, limit: int, before: int | None) -> list[Any]:
    """Up to ``limit`` changes under ``flt`` but its search words, newest first, after
    the cursor ``before`` (``_select``'s columns)."""
    doc_type = _doc_type()
    stmt = _select(doc_type).order_by(_C.c.visit_time.desc(), _C.c.id.desc()).limit(limit)
    if flt.since is not None:
        stmt = stmt.where(_C.c.visit_time >= flt.since)
    if flt.until is not None:
        stmt = stmt.where(_C.c.visit_time < flt.until)
    if flt.hosts:
        stmt = stmt.where(_S.c.domain.in_(flt.hosts))
    if flt.kinds:
        stmt = stmt.where(_C.c.kind.in_(flt.kinds))
    if flt.types:
        stmt = stmt.where(doc_type.in_(flt.types))
    if before is not None:
        at = conn.execute(select(_C.c.visit_time).where(_C.c.id == before)).scalar()
        stmt = stmt.where(
            _C.c.id < before
            if at is None
            else or_(_C.c.visit_time < at, and_(_C.c.visit_time == at, _C.c.id < before))
        )
    return list(conn.execute(stmt))


@dataclass(frozen=True, slots=True)
class _Sides:
    before: str | None  # None: not kept
    after: str | None


def _ended(row: Any) -> bool:
    """A gone or moved page's change: nothing after it."""
    return row.kind in ("gone", "moved")


def _texts(
    conn: Connection, rows: Sequence[Any], max_chars: int, matched_only: bool = False
) -> dict[int, _Sides]:
    """Each change's two sides, cut to ``max_chars`` + 1 characters (so that a diff knows
    it was cut), in two statements per chunk of ids; ``matched_only``: only the side its
    search words are matched against (after it, or a gone or moved page's before)."""
    cut = max_chars + 1
    ids = {r.next_id for r in rows if r.next_id is not None and not _ended(r)}
    ids |= {r.id for r in rows if r.kind != "new" and (_ended(r) or not matched_only)}
    befores: dict[int, str | None] = {}
    for part in chunks(sorted(ids)):
        text = func.substr(_C.c.text_before, 1, cut)
        for id_, value in conn.execute(select(_C.c.id, text).where(_C.c.id.in_(part))):
            befores[id_] = value
    latest = sorted({r.page_id for r in rows if r.next_id is None and not _ended(r)})
    current: dict[int, str | None] = {}
    text_ = schema.PAGE_TEXT.c
    for part in chunks(latest):
        stmt = select(text_.page_id, func.substr(text_.text, 1, cut))
        for page_id, value in conn.execute(stmt.where(text_.page_id.in_(part))):
            current[page_id] = value
    sides = {}
    for r in rows:
        before = "" if r.kind == "new" else befores.get(r.id)
        if _ended(r):
            after: str | None = ""
        else:
            after = current.get(r.page_id) if r.next_id is None else befores.get(r.next_id)
        sides[r.id] = _Sides(before, after)
    return sides


def _entry(row: Any, diff: WordDiff | None) -> ChangeEntry:
    return ChangeEntry(
        row.id, row.page_id, row.url or "", row.domain or "", cast(ChangeKind, row.kind),
        row.visit_time, row.title, row.doc_type,
        excerpt(diff, "insert", EXCERPT_CHARS) if diff else "",
        excerpt(diff, "delete", EXCERPT_CHARS) if diff else "",
    )  # fmt: skip


def _diff(sides: _Sides, max_chars: int, timeout: float) -> WordDiff | None:
    if sides.before is None or sides.after is None:
        return None
    return word_diff(sides.before, sides.after, max_chars=max_chars, timeout=timeout)


def _entries(conn: Connection, rows: Sequence[Any], config: ChangesConfig) -> list[ChangeEntry]:
    """The entries of ``rows`` with their excerpts, their texts read ``SCAN_CHUNK`` rows at
    a time (a long list never holds all its texts), their diffs within
    CHANGES_EXCERPT_DIFF_TIMEOUT each and CHANGES_EXCERPT_BUDGET in all."""
    ends = time.monotonic() + config.excerpt_budget
    entries = []
    for part in chunks(rows, SCAN_CHUNK):
        sides = _texts(conn, part, config.excerpt_max_chars)
        for r in part:
            # Past the list's budget a diff stops at once: its common start and end
            # trimmed, the rest removed and added whole (a coarse excerpt, linear).
            left = max(ends - time.monotonic(), _AT_ONCE)
            timeout = min(config.excerpt_timeout, left) if config.excerpt_timeout else left
            entries.append(_entry(r, _diff(sides[r.id], config.excerpt_max_chars, timeout)))
    return entries


def _matching(
    conn: Connection, rows: Sequence[Any], flt: ChangeFilter, config: ChangesConfig
) -> Iterable[Any]:
    wanted = query_words(flt.query)
    sides = _texts(conn, rows, config.match_max_chars, matched_only=True)
    for r in rows:
        side = sides[r.id]
        text = side.before if _ended(r) else side.after
        if matches(wanted, r.title or "", r.url or "", text or ""):
            yield r


def find_changes(
    engine: Engine,
    flt: ChangeFilter,
    *,
    limit: int = 50,
    before: int | None = None,
    config: ChangesConfig = DEFAULT_CONFIG,
) -> ChangeList:
    """Up to ``limit`` changes under ``flt``, newest first (visit time, then id, both
    descending), after the cursor ``before`` (the last id of the page before), with their
    excerpts; whether a search-word scan stopped at its bound, and the next cursor."""
    limit = max(1, limit)
    with engine.connect() as conn:
        if not query_words(flt.query):
            rows = _rows(conn, flt, limit + 1, before)
            more = len(rows) > limit
            rows = rows[:limit]
            next_before = rows[-1].id if more else None
            return ChangeList(_entries(conn, rows, config), False, next_before, len(rows))
        return _scan(conn, flt, limit, before, config)


def _scan(
    conn: Connection, flt: ChangeFilter, limit: int, cursor: int | None, config: ChangesConfig
) -> ChangeList:
    """``find_changes`` with search words: candidates read a chunk at a time, newest
    first, until ``limit`` match, none is left, or CHANGES_SCAN_MAX were read."""
    found: list[Any] = []
    scanned = 0
    while True:
        want = min(SCAN_CHUNK, config.scan_max - scanned)
        if want <= 0:
            return ChangeList(_entries(conn, found, config), True, cursor, scanned)
        chunk = _rows(conn, flt, want, cursor)
        scanned += len(chunk)
        for row in _matching(conn, chunk, flt, config):
            found.append(row)
            if len(found) == limit:
                return ChangeList(_entries(conn, found, config), False, row.id, scanned)
        if len(chunk) < want:
            return ChangeList(_entries(conn, found, config), False, None, scanned)
        cursor = chunk[-1].id


def list_changes(
    engine: Engine,
    flt: ChangeFilter,
    *,
    limit: int = 50,
    before: int | None = None,
    config: ChangesConfig = DEFAULT_CONFIG,
) -> list[ChangeEntry]:
    """``find_changes``'s entries: up to ``limit`` changes under ``flt``, newest first
    (``visit_time`` desc, ``id`` desc), after the paging cursor ``before`` (an id)."""
    return find_changes(engine, flt, limit=limit, before=before, config=config).entries


def change_detail(
    engine: Engine, change_id: int, config: ChangesConfig = DEFAULT_CONFIG
) -> ChangeDetail | None:
    """The change ``change_id`` with its diff (CHANGES_DIFF_MAX_CHARS, CHANGES_DIFF_TIMEOUT);
    None when there is no such change."""
    with engine.connect() as conn:
        rows = list(conn.execute(_select(_doc_type()).where(_C.c.id == change_id)))
        if not rows:
            return None
        sides = _texts(conn, rows, config.diff_max_chars)[change_id]
    diff = _diff(sides, config.diff_max_chars, config.diff_timeout)
    entry = _entry(rows[0], diff)
    return ChangeDetail(entry, diff, sides.before is not None, sides.after is not None)
