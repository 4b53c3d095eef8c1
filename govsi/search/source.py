"""What the index reads from crawldb: the pages with text, their version marks, and their
in-links (for the link prior). crawldb's rows are taken as found, whoever wrote them: a
date no reader could take is dropped (``plausible_date``), a row that cannot be read is
left out and named (``Skip``)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Engine, bindparam, text
from sqlalchemy.exc import DBAPIError

from govsi.search.document import SearchDocument
from govsi.store.database import chunks
from govsi.text.dates import plausible_date
from govsi.text.limits import MAX_TITLE_CHARS, TextLimits

logger = logging.getLogger(__name__)

# A page left out of an update, and why: ``Skip(page_id, reason)``.
Skip = Callable[[int, str], None]

# What the index reads of a page's text, at most: what a crawl keeps of one by default
# (TEXT_MAX_CHARS); a crawldb written with a larger bound, or by another tool, is read up
# to this much (one page's analysis costs memory and time in proportion to its characters:
# bench/README, bench.huge_inputs).
TEXT_CHARS = TextLimits.max_chars

# Rows the driver holds at once while they are read (PostgreSQL: a server-side cursor):
# with the IN list's 500 ids fetched at once, 500 texts of up to TEXT_CHARS each were held.
ROWS_HELD = 20

# Texts worth finding: read whole, or in part before the time ran out.
_FINDABLE = "t.status IN ('ok', 'timeout') AND t.text IS NOT NULL"


def versions(engine: Engine) -> dict[int, str]:
    """Every findable page's id and its text's version mark (``extracted_at``)."""
    with engine.connect() as conn:
        rows = conn.execute(
            text(f"SELECT t.page_id, t.extracted_at FROM page_text t WHERE {_FINDABLE}")
        )
        return {pid: str(mark) for pid, mark in rows}


def documents(
    engine: Engine,
    ids: Sequence[int],
    text_chars: int = TEXT_CHARS,
    skip: Skip | None = None,
    now: datetime | None = None,
) -> Iterator[SearchDocument]:
    """The ``SearchDocument`` of each of ``ids`` still findable, read in chunks: at most
    ``text_chars`` of its text and ``MAX_TITLE_CHARS`` of its title, cut in the query.
    What is left of a chunk that fails is read a page at a time: a page that fails alone
    is left out and told to ``skip`` (without one, raised), the rest read; crawldb lost
    (its connection gone) raises. Dates not plausible at ``now`` (default: the clock's)
    are dropped."""
    when = now or datetime.now(UTC)
    with engine.connect() as conn:
        for part in chunks(list(ids), 500):
            read: set[int] = set()
            try:
                for doc in _read(conn, part, text_chars, when):
                    read.add(doc.page_id)
                    yield doc
            except Exception as e:  # a driver's decoding error, a broken row
                if _lost(e):
                    raise
                conn.rollback()
                for pid in (p for p in part if p not in read):
                    try:
                        alone = list(_read(conn, [pid], text_chars, when))
                    except Exception as e:
                        if skip is None or _lost(e):
                            raise
                        conn.rollback()
                        skip(pid, f"not read from crawldb: {e!r}"[:500])
                        continue
                    yield from alone


def _lost(error: Exception) -> bool:
    """Whether ``error`` is crawldb lost (a connection gone), not a row: every page would
    fail alike, so the update stops and the next one goes on."""
    return isinstance(error, DBAPIError) and error.connection_invalidated


def _read(
    conn: Any, ids: Sequence[int], text_chars: int, now: datetime
) -> Iterator[SearchDocument]:
    values = {"ids": list(ids), "text_chars": text_chars, "title_chars": MAX_TITLE_CHARS}
    rows = conn.execution_options(yield_per=ROWS_HELD).execute(_DOCUMENTS, values)
    for row in rows:
        yield _document(row, now)


_DOCUMENTS = text(
    "SELECT t.page_id, p.url, s.domain, t.kind, substr(t.title, 1, :title_chars), "
    "substr(t.text, 1, :text_chars), t.language, "
    "t.document_date, p.accessed_time, p.depth, t.extracted_at "
    "FROM page_text t JOIN page p ON p.id = t.page_id JOIN site s ON s.id = p.site_id "
    f"WHERE {_FINDABLE} AND t.page_id IN :ids"
).bindparams(bindparam("ids", expanding=True))


def _document(row: Any, now: datetime) -> SearchDocument:
    pid, url, host, kind, title, body, language, doc_date, accessed, depth, mark = row
    date = _plausible(doc_date, now) or _plausible(accessed, now)
    return SearchDocument(
        pid, url, host or "", kind, title or "", body or "", language, date, depth, str(mark),
    )  # fmt: skip


def _plausible(value: Any, now: datetime) -> datetime | None:
    """A date column's value as naive UTC when plausible (crawldb's older rows, or another
    tool's, may hold any)."""
    when = plausible_date(_when(value), now)
    return None if when is None else when.replace(tzinfo=None)


def _when(value: Any) -> datetime | None:
    if value is None or isinstance(value, datetime):
        return value
    try:
        return datetime.fromisoformat(str(value))  # SQLite gives text
    except ValueError:
        return None


def inlinks(engine: Engine) -> dict[int, int]:
    """Each page's in-links from other pages (``link``, self-links left out)."""
    sql = text("SELECT to_page, count(*) FROM link WHERE from_page <> to_page GROUP BY to_page")
    with engine.connect() as conn:
        return {pid: n for pid, n in conn.execute(sql)}


def texts(engine: Engine, ids: Sequence[int]) -> dict[int, str]:
    """The text of each of ``ids`` (for snippets)."""
    if not ids:
        return {}
    sql = text("SELECT page_id, text FROM page_text WHERE page_id IN :ids").bindparams(
        bindparam("ids", expanding=True)
    )
    with engine.connect() as conn:
        return {pid: body or "" for pid, body in conn.execute(sql, {"ids": list(ids)})}
