"""A fetched page's record written over its row as stored: what the visit changes.

Each ``FetchedPage`` of a batch is compared with its row as stored (read at the start of
the batch's transaction, and locked there on PostgreSQL, so that two workers' writes of one
page happen one after the other) and makes one of four writes:

- ``write``: the row takes the record, as on a first visit. Over a stored copy, a change
  (``govsi.revisit.change``: of type, status, a redirect's target or main content) first
  hands the replaced version to ``govsi.store.history`` (``page_version``, its HTML stored
  once per distinct content, the page's history cut back to what HISTORY_KEEP_VERSIONS and
  HISTORY_KEEP_MONTHS keep) and sets ``changed_time`` to this visit; the page's links,
  images, document row, text and LSH keys are replaced by the new version's. A steady page
  keeps its ``changed_time`` and gets no version row; its text row stays as it was (the
  same main text or bytes: an index has nothing to redo), or is added if it had none.
- ``visit``: a 304 to a conditional request: only the visit (``accessed_time``, any new
  validators); the copy stays.
- ``failed``: a revisit that got no usable answer (a fetch error, a server error, robots.txt
  now forbids it): the copy stays; the reason goes in ``fetch_error``, the next try comes
  after ``REVISIT_MIN_INTERVAL``.
- ``skip``: a record older or weaker than the row (a replayed spill, another worker's DNS
  failure): nothing of it is written. Writes never go backwards.

Every visit but a skipped one sets ``next_visit`` and ``revisit_history``
(``govsi.revisit.schedule``), records what it found and when (``visit_outcome``:
``govsi.revisit.change.outcome``; ``visit_time``) and clears the row's revisit claim. A
write that was news (new, changed, gone, moved) adds its ``page_change`` row, with the
text it replaced (``govsi.store.changes``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from sqlalchemy import Connection, and_, bindparam, case, func, or_, select, update
from sqlalchemy.sql import Executable

from govsi.items import FetchedPage, PageText, PageType
from govsi.revisit.change import Change, Version, change, outcome
from govsi.revisit.schedule import next_visit
from govsi.store.changes import ChangeRows, change_kind
from govsi.store.database import chunks
from govsi.store.history import Retention, VersionRow, add_versions, stored_html
from govsi.store.images import drop_images, insert_images
from govsi.store.schema import LINK, PAGE, PAGE_DATA, PAGE_LSH, PAGE_TEXT, utcnow
from govsi.web.contenttypes import filename_of
from govsi.web.urls import host_of

__all__ = ["PageWrites", "Schedule", "Stored", "outcome_rank", "read_stored"]

Plan = Literal["write", "visit", "failed", "skip"]


def outcome_rank(page_type: PageType | None) -> int:
    """How far a page's row has come: not fetched (FRONTIER, with or without a reason) <
    fetch failed (ERROR) < fetched (HTML, BINARY, DUPLICATE, OTHER)."""
    return {None: 0, "FRONTIER": 0, "ERROR": 1}.get(page_type, 2)


_stored_rank = case(
    (PAGE.c.page_type_code.is_(None), 0),
    (PAGE.c.page_type_code == "FRONTIER", 0),
    (PAGE.c.page_type_code == "ERROR", 1),
    else_=2,
)
# The same rule in SQL, kept in the UPDATE itself as a second guard: a record moves a row
# forward, or replaces one of the same rank that is not newer.
_NOT_BACKWARDS = or_(
    _stored_rank < bindparam("b_rank"),
    and_(
        _stored_rank == bindparam("b_rank"),
        or_(
            PAGE.c.accessed_time.is_(None),
            bindparam("b_accessed").is_(None),
            PAGE.c.accessed_time <= bindparam("b_accessed"),
        ),
    ),
)
_WRITE = update(PAGE).where(PAGE.c.id == bindparam("b_id"), _NOT_BACKWARDS)
# A 304: the visit, and the validators it sent (a 304 that sends none keeps the stored ones).
_VISIT = (
    update(PAGE)
    .where(PAGE.c.id == bindparam("b_id"))
    .values(
        etag=func.coalesce(bindparam("b_etag"), PAGE.c.etag),
        last_modified=func.coalesce(bindparam("b_last_modified"), PAGE.c.last_modified),
    )
)
_FAILED = update(PAGE).where(PAGE.c.id == bindparam("b_id"))
_UNCLAIMED = {"revisit_claim": None, "revisit_claimed_at": None}


@dataclass(frozen=True, slots=True)
class Schedule:
    """The next visit of a page (REVISIT_MIN_INTERVAL, REVISIT_MAX_INTERVAL, a hub's
    REVISIT_HUB_MIN_INTERVAL, seconds)."""

    min_interval: float
    max_interval: float
    hub_min_interval: float | None = None

    def after(
        self,
        history: str | None,
        changed: bool,
        visited: datetime,
        previous: datetime | None,
        new_links: int = 0,
        price: float | None = None,
    ) -> tuple[datetime, str | None]:
        """(the next visit, the history to store: NULL while no interval was observed).
        ``price``: the host's fitted one (``govsi.store.hostbudget``); None: the default."""
        due, kept = next_visit(
            history, changed, visited, previous, min_interval=self.min_interval,
            max_interval=self.max_interval, hub_min_interval=self.hub_min_interval,
            new_links=new_links, price=price,
        )  # fmt: skip
        return due, kept or None

    def retry(self, failed: datetime) -> datetime:
        """When a revisit that failed is tried again: it taught nothing of the page."""
        return failed + timedelta(seconds=self.min_interval)


@dataclass(frozen=True, slots=True)
class Stored:
    """A page's row as stored, what a visit is compared with."""

    page_type: PageType | None = None
    http_status_code: int | None = None
    content_hash: str | None = None
    accessed_time: datetime | None = None
    changed_time: datetime | None = None
    history: str | None = None
    size: int | None = None  # its document's (page_data.size)
    target: str | None = None  # where a redirect leads (its link)

    @property
    def rank(self) -> int:
        return outcome_rank(self.page_type)

    @property
    def version(self) -> Version:
        return Version(self.page_type, self.http_status_code, self.content_hash,
                       self.size, self.target)  # fmt: skip


def read_stored(conn: Connection, ids: Iterable[int]) -> dict[int, Stored]:
    """The rows of pages ``ids`` as stored; on PostgreSQL locked until the transaction
    ends (FOR NO KEY UPDATE, in id order: what an UPDATE takes anyway, taken first)."""
    found: dict[int, Stored] = {}
    ordered = sorted(set(ids))
    for part in chunks(ordered):
        q = (
            select(PAGE.c.id, PAGE.c.page_type_code, PAGE.c.http_status_code,
                   PAGE.c.content_hash, PAGE.c.accessed_time, PAGE.c.changed_time,
                   PAGE.c.revisit_history)
            .where(PAGE.c.id.in_(part))
            .order_by(PAGE.c.id)
        )  # fmt: skip
        if conn.dialect.name == "postgresql":
            q = q.with_for_update(key_share=True)
        for pid, *row in conn.execute(q):
            found[pid] = Stored(*row)
    documents = [p for p, s in found.items() if s.page_type == "BINARY"]
    for part in chunks(documents):
        sizes = select(PAGE_DATA.c.page_id, PAGE_DATA.c.size).where(PAGE_DATA.c.page_id.in_(part))
        for pid, size in conn.execute(sizes):
            found[pid] = replace(found[pid], size=size)
    redirects = [p for p, s in found.items() if 300 <= (s.http_status_code or 0) < 400]
    target = PAGE.alias("target")
    for part in chunks(redirects):
        q = (
            select(LINK.c.from_page, func.min(target.c.url))
            .join(target, target.c.id == LINK.c.to_page)
            .where(LINK.c.from_page.in_(part))
            .group_by(LINK.c.from_page)
        )
        for pid, url in conn.execute(q):
            found[pid] = replace(found[pid], target=url)
    return found


def plan(stored: Stored, item: FetchedPage) -> Plan:
    """Which write ``item`` makes over its row ``stored`` (see the module's docstring)."""
    when, then = item.accessed_time, stored.accessed_time
    older = when is not None and then is not None and when < then
    if item.not_modified:
        return "visit" if then is not None and not older else "skip"
    rank = outcome_rank(item.page_type)
    if rank > stored.rank or (rank == stored.rank and not older):
        return "write"
    if item.revisit is not None and not older:
        return "failed"  # a revisit that got no copy: the stored one stays
    return "skip"


def version_of(item: FetchedPage) -> Version:
    status = item.http_status_code or 0
    target = item.links[0] if 300 <= status < 400 and item.links else None
    return Version(item.page_type, item.http_status_code, item.content_hash, item.size, target)


Row = dict[str, Any]


@dataclass
class Runs:
    """Statements with their parameter rows, executed in the order added: consecutive rows
    of one statement (and one set of keys) as one executemany."""

    runs: list[tuple[Executable, list[Row]]] = field(default_factory=list)

    def add(self, statement: Executable, row: Row) -> None:
        if self.runs:
            last, rows = self.runs[-1]
            if last is statement and rows[0].keys() == row.keys():
                rows.append(row)
                return
        self.runs.append((statement, [row]))

    def execute(self, conn: Connection) -> None:
        for statement, rows in self.runs:
            conn.execute(statement, rows)


@dataclass(frozen=True, slots=True)
class _Replaced:
    """A version a change replaced: the row as stored then; its HTML, or None with
    ``from_row`` when the row as stored before the batch holds it."""

    pid: int
    stored: Stored
    replaced_at: datetime
    html: str | None
    from_row: bool

    def row(self, html_of: dict[int, str | None]) -> VersionRow:
        s = self.stored
        html = html_of.get(self.pid) if self.from_row else self.html
        return VersionRow(self.pid, s.accessed_time, s.http_status_code, s.content_hash,
                          s.page_type, s.changed_time, html, self.replaced_at)  # fmt: skip


@dataclass
class PageWrites:
    """What one batch's page records write, decided record by record (in order) on the
    rows as stored, then written by ``execute`` in the batch's transaction."""

    stored: dict[int, Stored]
    schedule: Schedule
    store_binary_data: bool
    retention: Retention = field(default_factory=Retention)
    # Hosts' fitted prices (host -> seconds squared); a host not in it: the default.
    prices: dict[str, float] = field(default_factory=dict)
    runs: Runs = field(default_factory=Runs)
    # Versions replaced, in order; the HTML each page written has after its last record.
    replaced_versions: list[_Replaced] = field(default_factory=list)
    html: dict[int, str | None] = field(default_factory=dict)
    # Per page written: its links (target page ids) and images (URL -> row), the last
    # record's; pages whose stored version these replace; document and LSH rows.
    links: dict[int, set[int]] = field(default_factory=dict)
    images: dict[int, dict[str, Row]] = field(default_factory=dict)
    replaced: set[int] = field(default_factory=set)
    documents: dict[int, Row] = field(default_factory=dict)
    # page_text rows replacing the stored one (whose page is in ``texts_gone`` too), and
    # rows of steady pages, added only where there is none.
    texts: dict[int, Row] = field(default_factory=dict)
    texts_gone: set[int] = field(default_factory=set)
    texts_if_none: dict[int, Row] = field(default_factory=dict)
    lsh: dict[int, list[int]] = field(default_factory=dict)
    changes: Counter[str] = field(default_factory=Counter)
    # The page_change rows of the batch's visits (govsi.store.changes).
    news: ChangeRows = field(default_factory=ChangeRows)
    # Per page written: links of its record crawldb had no row of (the writer's count).
    new_links: dict[int, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.news.retention = self.retention

    def add(self, pid: int, item: FetchedPage, page_id: Callable[[str], int]) -> None:
        stored = self.stored.get(pid, Stored())
        kind = plan(stored, item)
        if kind == "visit":
            self._visit(pid, stored, item)
        elif kind == "failed":
            when = item.accessed_time or utcnow()
            row = {"b_id": pid, "fetch_error": item.fetch_error,
                   "next_visit": self.schedule.retry(when), "visit_outcome": "kept",
                   "visit_time": when, **_UNCLAIMED}  # fmt: skip
            self.runs.add(_FAILED, row)
        elif kind == "write":
            self._write(pid, stored, item, page_id)

    def _visit(self, pid: int, stored: Stored, item: FetchedPage) -> None:
        assert item.accessed_time is not None
        due, history = self.schedule.after(
            stored.history, False, item.accessed_time, stored.accessed_time,
            price=self._price(item),
        )  # fmt: skip
        self.runs.add(_VISIT, {
            "b_id": pid, "accessed_time": item.accessed_time, "b_etag": item.etag,
            "b_last_modified": item.last_modified, "next_visit": due,
            "revisit_history": history, "visit_outcome": "not_modified",
            "visit_time": item.accessed_time, **_UNCLAIMED,
        })  # fmt: skip
        self.stored[pid] = replace(stored, accessed_time=item.accessed_time, history=history)

    def _price(self, item: FetchedPage) -> float | None:
        return self.prices.get(host_of(item.url)) if self.prices else None

    def _write(
        self, pid: int, stored: Stored, item: FetchedPage, page_id: Callable[[str], int]
    ) -> None:
        row = _page_row(pid, item)
        if item.duplicate_of:
            row["duplicate_of"] = page_id(item.duplicate_of)
        if item.near_duplicate_of:
            row["near_duplicate_of"] = page_id(item.near_duplicate_of)
        after = version_of(item)
        changed_time = stored.changed_time
        history = stored.history
        steady = False
        if item.accessed_time is not None:  # a fetch, not a FRONTIER row's reason
            replaces = stored.rank > 0
            found: Change | None = change(stored.version, after) if replaces else None
            if found is not None:
                known = pid in self.html
                self.replaced_versions.append(_Replaced(
                    pid, stored, item.accessed_time, self.html.get(pid), from_row=not known
                ))  # fmt: skip
                self.changes[found] += 1
            if not replaces or found is not None:
                changed_time = item.accessed_time
            previous = stored.accessed_time if replaces else None
            due, history = self.schedule.after(
                stored.history, found is not None, item.accessed_time, previous,
                self.new_links.get(pid, 0), self._price(item),
            )  # fmt: skip
            row.update(etag=item.etag, last_modified=item.last_modified,
                       changed_time=changed_time, next_visit=due, revisit_history=history,
                       visit_outcome=outcome(stored.version, after),
                       visit_time=item.accessed_time, **_UNCLAIMED)  # fmt: skip
            if replaces:
                self.replaced.add(pid)
            steady = replaces and found is None
            news = change_kind(stored.version, after)
            if news is not None:
                self.news.add(pid, item.accessed_time, news, item.text)
        self.runs.add(_WRITE, row)
        self.html[pid] = row["html_content"]
        self.stored[pid] = Stored(
            item.page_type, item.http_status_code, item.content_hash, item.accessed_time,
            changed_time, history, item.size, after.target,
        )  # fmt: skip
        targets = {page_id(u) for u in item.links}
        if item.duplicate_of:
            targets.add(page_id(item.duplicate_of))
        self.links[pid] = targets
        self.images[pid] = {
            url: {"page_id": pid, "url": url, "filename": filename_of(url)} for url in item.images
        }
        self.lsh[pid] = list(item.band_keys)
        self.documents.pop(pid, None)
        self._text(pid, item, steady, had_row=stored.rank > 0)
        if item.page_type == "BINARY":
            self.documents[pid] = {
                "page_id": pid,
                "data_type_code": item.data_type,
                "data": item.data if self.store_binary_data else None,
                "size": item.size,
            }

    def _text(self, pid: int, item: FetchedPage, steady: bool, had_row: bool) -> None:
        """``had_row``: the page was fetched before, so it may have a text row (a text row
        is written only with its fetched page, in one transaction)."""
        self.texts.pop(pid, None)
        self.texts_if_none.pop(pid, None)
        row = text_row(pid, item.text) if item.text is not None else None
        if steady:
            if row is not None:
                self.texts_if_none[pid] = row
            return
        if had_row:
            self.texts_gone.add(pid)
        if row is not None:
            self.texts[pid] = row
        self.news.replaced(pid, item.text)

    def execute(self, conn: Connection, insert: Callable[..., Any]) -> None:
        """Write it all, in order. ``insert``: the dialect's (ON CONFLICT DO NOTHING)."""
        # The HTML of versions replaced is read before the rows are written over.
        html_of = stored_html(conn, {r.pid for r in self.replaced_versions if r.from_row})
        # So are the texts the visits' changes replaced.
        self.news.write(conn)
        self.runs.execute(conn)
        versions = [r.row(html_of) for r in self.replaced_versions]
        add_versions(conn, insert, versions, self.retention)
        replaced = sorted(self.replaced)
        # A page re-fetched after a hard stop must not end up with two documents either.
        for table, column, ids in (
            (PAGE_DATA, PAGE_DATA.c.page_id, sorted(set(replaced) | set(self.documents))),
            (PAGE_TEXT, PAGE_TEXT.c.page_id, sorted(self.texts_gone)),
            (PAGE_LSH, PAGE_LSH.c.page_id, replaced),
            (LINK, LINK.c.from_page, replaced),
        ):
            for part in chunks(ids):
                conn.execute(table.delete().where(column.in_(part)))
        if self.documents:
            conn.execute(PAGE_DATA.insert(), list(self.documents.values()))
        if self.texts:
            conn.execute(PAGE_TEXT.insert(), list(self.texts.values()))
        if self.texts_if_none:
            rows = list(self.texts_if_none.values())
            conn.execute(insert(PAGE_TEXT).on_conflict_do_nothing(), rows)
        lsh = [{"band_key": k, "page_id": p} for p, keys in self.lsh.items() for k in keys]
        if lsh:
            conn.execute(insert(PAGE_LSH).on_conflict_do_nothing(), lsh)
        links = sorted((a, b) for a, targets in self.links.items() for b in targets)
        if links:
            rows = [{"from_page": a, "to_page": b} for a, b in links]
            conn.execute(insert(LINK).on_conflict_do_nothing(), rows)
        if replaced:
            drop_images(conn, {pid: set(self.images.get(pid, ())) for pid in replaced})
        images = [row for shown in self.images.values() for row in shown.values()]
        if images:
            insert_images(conn, insert, images)


def text_row(pid: int, text: PageText) -> Row:
    """``page_text``'s row of page ``pid`` (dates as crawldb keeps them: naive UTC)."""
    date = text.date
    if date is not None and date.tzinfo is not None:
        date = date.astimezone(UTC).replace(tzinfo=None)
    return {
        "page_id": pid, "kind": text.kind, "status": text.status, "reason": text.reason,
        "title": text.title, "language": text.language, "text": text.text or None,
        "truncated": text.truncated, "document_date": date, "extracted_at": utcnow(),
    }  # fmt: skip


def _page_row(pid: int, item: FetchedPage) -> Row:
    return {
        "b_id": pid,
        "b_rank": outcome_rank(item.page_type),
        "b_accessed": item.accessed_time,
        "page_type_code": item.page_type,
        "html_content": item.html_content if item.page_type == "HTML" else None,
        "http_status_code": item.http_status_code,
        "accessed_time": item.accessed_time,
        "content_type": (item.content_type or "")[:255] or None,
        "fetch_error": item.fetch_error,
        "nofollow": item.nofollow,
        "rendered": item.rendered,
        "content_hash": item.content_hash,
        "minhash": item.minhash,
        "key_version": item.key_version if item.content_hash else None,
        "text_hash": item.text_hash,
        "duplicate_of": None,
        "near_duplicate_of": None,
        "similarity": item.similarity if item.near_duplicate_of else None,
    }
