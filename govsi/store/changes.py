"""The changes visits found, as ``page_change`` rows (docs/stored.md, "Changes").

``change_kind(before, after)`` names what a visit that fetched ``after`` over the stored
``before`` was to a reader of the copy (pure): ``new`` for the first answer that gave a
copy (HTML or a document, 2xx; not an error, not a copy of another page); else
``govsi.revisit.change.outcome``'s ``changed``, ``gone`` or ``moved`` (a change of MAIN
content, status, type or a redirect's target: a template-only change is none) where
either side was a readable page (a URL only ever answering with errors or redirects is no
news). A 304, a failed revisit, a steady page and a record older than its row add none.

``ChangeRows`` gathers a batch's rows as ``visits.PageWrites`` decides each visit (in
order) and writes them in the batch's transaction, before the text rows are replaced:
``text_before`` is the main text the visit replaced: for a page's first change in the
batch its ``page_text.text`` as stored (read in one query per batch; "" for a stored row
with no text, NULL where there is no row), for a later one the text the batch's previous
record of that page gave. ``title`` is the page's after the visit (its record's text's;
else the one before), a gone or moved page's before it. Rows are never added twice for
one visit: a batch retried after a failed commit starts again from its rolled-back
state; a record written again (a spill replayed) is either older than its row (skipped)
or the very version the row holds (``same``).

Retention (``Retention``: HISTORY_KEEP_VERSIONS, HISTORY_KEEP_MONTHS) is applied to a page
whenever it gets a change, in the same transaction: rows of visits more than ``months``
months before this one are deleted, and of the rest only the page's last ``versions``
keep their ``text_before`` (the others keep their row, text NULL). So a page's rows and
texts cannot only grow, and the work per write is bounded by what retention keeps.

``backfill(conn)`` makes the rows of the visits before revision 0021 (its migration) from
what crawldb kept, in set-based SQL: a ``new`` row at each page's first known version that
was a copy, and one row per ``page_version`` (the version a change replaced), its kind by
what came after; ``text_before`` NULL (the replaced main text was not kept).
"""

from __future__ import annotations

import calendar
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final

from sqlalchemy import (
    Connection,
    and_,
    bindparam,
    case,
    func,
    insert,
    literal,
    null,
    or_,
    select,
    update,
)
from sqlalchemy.sql.elements import ColumnElement

from govsi.items import ChangeKind, PageText, PageType
from govsi.revisit.change import Outcome, Version, outcome
from govsi.store.database import chunks
from govsi.store.history import Retention
from govsi.store.schema import PAGE, PAGE_CHANGE, PAGE_TEXT, PAGE_VERSION

__all__ = ["ChangeRows", "backfill", "change_kind", "months_before"]

# page_change.title's width (String(1000)): a longer title is cut, not refused.
TITLE_CHARS: Final = 1000
# A version a reader reads: a page, a document or a copy of another page, answered 2xx.
_READABLE: Final[frozenset[PageType]] = frozenset({"HTML", "BINARY", "DUPLICATE"})
# A first answer that is news: a page or a document of its own.
_NEW: Final[frozenset[PageType]] = frozenset({"HTML", "BINARY"})
# A row that never had an answer: its first one is its first visit.
_UNANSWERED: Final[frozenset[PageType | None]] = frozenset({None, "FRONTIER", "ERROR"})
# The visit outcomes that are news over an answered row.
_NEWS: Final[dict[Outcome, ChangeKind]] = {"changed": "changed", "gone": "gone", "moved": "moved"}


def _ok(status: int | None) -> bool:
    return status is not None and 200 <= status < 300


def change_kind(before: Version, after: Version) -> ChangeKind | None:
    """What a visit that fetched ``after`` over the stored ``before`` found, as news to a
    reader of the copy; None: nothing to tell (see the module's docstring)."""
    if before.page_type in _UNANSWERED:
        new = after.page_type in _NEW and _ok(after.http_status_code)
        return "new" if new else None
    found = _NEWS.get(outcome(before, after))
    if found is None:
        return None
    readable = (before.page_type in _READABLE and _ok(before.http_status_code)) or (
        after.page_type in _READABLE and _ok(after.http_status_code)
    )
    return found if readable else None


def months_before(when: datetime, months: int) -> datetime:
    """``when`` moved back ``months`` calendar months (the day cut to the month's last)."""
    index = when.year * 12 + when.month - 1 - max(months, 0)
    year, month = divmod(index, 12)
    day = min(when.day, calendar.monthrange(year, month + 1)[1])
    return when.replace(year=year, month=month + 1, day=day)


# The text a page holds as the batch goes: (title, text); None: its stored page_text.
_Text = tuple[str | None, str | None]


@dataclass(frozen=True, slots=True)
class _Pending:
    page_id: int
    visit_time: datetime
    kind: ChangeKind
    title_after: str | None
    before: _Text | None  # None: the page_text row as stored before the batch


@dataclass
class ChangeRows:
    """One batch's ``page_change`` rows, in visit order, written by ``write``."""

    retention: Retention = field(default_factory=Retention)
    pending: list[_Pending] = field(default_factory=list)
    # Pages whose text a record of this batch replaced: what it is now.
    current: dict[int, _Text] = field(default_factory=dict)

    def add(self, pid: int, when: datetime, kind: ChangeKind, text: PageText | None) -> None:
        """A visit at ``when`` found page ``pid`` ``kind``; ``text``: its record's."""
        title = text.title if text is not None else None
        before = None if kind == "new" else self.current.get(pid)
        self.pending.append(_Pending(pid, when, kind, title or None, before))

    def replaced(self, pid: int, text: PageText | None) -> None:
        """A record of this batch replaced page ``pid``'s text with ``text`` (None: none)."""
        self.current[pid] = (text.title, text.text) if text is not None else (None, None)

    def write(self, conn: Connection) -> int:
        """Insert the rows and apply retention to their pages; the rows added. Runs before
        the batch touches ``page_text``."""
        if not self.pending:
            return 0
        stored = _stored_texts(
            conn, {p.page_id for p in self.pending if p.kind != "new" and p.before is None}
        )
        rows = []
        for p in self.pending:
            before: _Text = (None, None)
            if p.kind != "new":
                before = p.before if p.before is not None else stored.get(p.page_id, (None, None))
            after = None if p.kind in ("gone", "moved") else p.title_after
            title = after or before[0]
            rows.append({
                "page_id": p.page_id, "visit_time": p.visit_time, "kind": p.kind,
                "title": title[:TITLE_CHARS] if title else None, "text_before": before[1],
            })  # fmt: skip
        conn.execute(insert(PAGE_CHANGE), rows)
        # A page found new had no rows before (a row never goes back to unanswered): its
        # one row is kept whole. So a first crawl pays nothing for retention.
        latest: dict[int, datetime] = {}
        for p in self.pending:
            if p.kind != "new":
                latest[p.page_id] = max(latest.get(p.page_id, p.visit_time), p.visit_time)
        if latest:
            _retain(conn, latest, self.retention)
        return len(rows)


def _stored_texts(conn: Connection, ids: Iterable[int]) -> dict[int, _Text]:
    """The (title, text) of pages ``ids``' page_text rows as stored; a row's missing text
    is "" (known empty), a page without a row is left out (not known)."""
    found: dict[int, _Text] = {}
    for part in chunks(sorted(set(ids))):
        q = select(PAGE_TEXT.c.page_id, PAGE_TEXT.c.title, PAGE_TEXT.c.text).where(
            PAGE_TEXT.c.page_id.in_(part)
        )
        found.update((pid, (title, text or "")) for pid, title, text in conn.execute(q))
    return found


_C = PAGE_CHANGE.c
_EXPIRED = PAGE_CHANGE.delete().where(
    _C.page_id == bindparam("p"), _C.visit_time < bindparam("cutoff")
)


def _retain(conn: Connection, latest: dict[int, datetime], retention: Retention) -> None:
    """Retention for the pages of ``latest`` (page -> its newest visit in the batch)."""
    pages = sorted(latest)
    conn.execute(_EXPIRED, [
        {"p": pid, "cutoff": months_before(latest[pid], retention.months)} for pid in pages
    ])  # fmt: skip
    newest = PAGE_CHANGE.alias("newest")
    kept = (
        select(newest.c.id)
        .where(newest.c.page_id == bindparam("p"))
        .order_by(newest.c.visit_time.desc(), newest.c.id.desc())
        .limit(max(retention.versions, 0))
    )
    # A text beyond the last ``versions`` rows: at most the rows this batch added, unless
    # the setting was lowered, when the page's older texts go at once too.
    forget = (
        update(PAGE_CHANGE)
        .where(_C.page_id == bindparam("p"), _C.text_before.is_not(None), _C.id.not_in(kept))
        .values(text_before=None)
    )
    conn.execute(forget, [{"p": pid} for pid in pages])


# -- backfill (migration 0021) ----------------------------------------------------------------


def _copy(ptype: ColumnElement[Any], status: ColumnElement[Any]) -> ColumnElement[bool]:
    return and_(ptype.in_(sorted(_NEW)), status.between(200, 299))


def _readable(ptype: ColumnElement[Any], status: ColumnElement[Any]) -> ColumnElement[bool]:
    return and_(ptype.in_(sorted(_READABLE)), status.between(200, 299))


def backfill(conn: Connection) -> int:
    """Rows for the visits crawldb recorded before ``page_change`` existed (see the
    module's docstring); the rows added. Two INSERT ... SELECT statements: the database
    does the work, in no more memory here than the statement's text."""
    v = PAGE_VERSION.c
    # Each version with the id of the next one of its page (None: the page's row came next).
    ordered = select(
        v.id, v.page_id, v.page_type_code, v.http_status_code, v.accessed_time,
        func.lead(v.id).over(partition_by=v.page_id, order_by=v.id).label("next_id"),
    ).subquery("ordered")  # fmt: skip
    nxt = PAGE_VERSION.alias("nxt")
    title = func.substr(PAGE_TEXT.c.title, 1, TITLE_CHARS)
    after_type = case((ordered.c.next_id.is_(None), PAGE.c.page_type_code),
                      else_=nxt.c.page_type_code)  # fmt: skip
    after_status = case((ordered.c.next_id.is_(None), PAGE.c.http_status_code),
                        else_=nxt.c.http_status_code)  # fmt: skip
    after_seen = case(
        (ordered.c.next_id.is_(None), func.coalesce(PAGE.c.changed_time, PAGE.c.accessed_time)),
        else_=func.coalesce(nxt.c.changed_time, nxt.c.accessed_time),
    )
    seen = func.coalesce(after_seen, ordered.c.accessed_time)
    before_type, before_status = ordered.c.page_type_code, ordered.c.http_status_code
    kind = case(
        (before_type.in_(["FRONTIER", "ERROR"]) | before_type.is_(None),
         case((_copy(after_type, after_status), literal("new")), else_=null())),
        (~or_(_readable(before_type, before_status), _readable(after_type, after_status)),
         null()),
        (after_status.in_([404, 410]), literal("gone")),
        (after_status.between(300, 399), literal("moved")),
        else_=literal("changed"),
    )  # fmt: skip
    replaced = (
        select(ordered.c.page_id, seen, kind, title, null())
        .select_from(ordered)
        .join(PAGE, PAGE.c.id == ordered.c.page_id)
        .outerjoin(nxt, nxt.c.id == ordered.c.next_id)
        .outerjoin(PAGE_TEXT, PAGE_TEXT.c.page_id == ordered.c.page_id)
        .where(kind.is_not(None), seen.is_not(None))
    )
    # Each page's first known version: its earliest page_version, else its row.
    first_id = (
        select(v.page_id, func.min(v.id).label("first_id")).group_by(v.page_id).subquery("first")
    )
    first = PAGE_VERSION.alias("first_version")
    first_type = func.coalesce(first.c.page_type_code, PAGE.c.page_type_code)
    first_status = case((first.c.id.is_(None), PAGE.c.http_status_code),
                        else_=first.c.http_status_code)  # fmt: skip
    first_seen = case(
        (first.c.id.is_(None), func.coalesce(PAGE.c.changed_time, PAGE.c.accessed_time)),
        else_=func.coalesce(first.c.changed_time, first.c.accessed_time,
                            PAGE.c.changed_time, PAGE.c.accessed_time),
    )  # fmt: skip
    new = (
        select(PAGE.c.id, first_seen, literal("new"), title, null())
        .select_from(PAGE)
        .outerjoin(first_id, first_id.c.page_id == PAGE.c.id)
        .outerjoin(first, first.c.id == first_id.c.first_id)
        .outerjoin(PAGE_TEXT, PAGE_TEXT.c.page_id == PAGE.c.id)
        .where(_copy(first_type, first_status), first_seen.is_not(None))
    )
    columns = ["page_id", "visit_time", "kind", "title", "text_before"]
    added = 0
    for query in (new, replaced):
        result = conn.execute(insert(PAGE_CHANGE).from_select(columns, query))
        added += max(result.rowcount, 0)
    return added
