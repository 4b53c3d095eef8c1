"""What the index reads from crawldb: the pages with text, their version marks, and their
in-links (for the link prior)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Engine, bindparam, text

from govsi.search.document import SearchDocument
from govsi.store.database import chunks
from govsi.text.limits import MAX_TITLE_CHARS, TextLimits

# What the index reads of a page's text, at most: what a crawl keeps of one by default
# (TEXT_MAX_CHARS); a crawldb written with a larger bound, or by another tool, is read up
# to this much (one page's analysis costs up to ~65 bytes and 2 µs per character).
TEXT_CHARS = TextLimits.max_chars

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
    engine: Engine, ids: Sequence[int], text_chars: int = TEXT_CHARS
) -> Iterator[SearchDocument]:
    """The ``SearchDocument`` of each of ``ids`` still findable, read in chunks: at most
    ``text_chars`` of its text and ``MAX_TITLE_CHARS`` of its title, cut in the query."""
    sql = text(
        "SELECT t.page_id, p.url, s.domain, t.kind, substr(t.title, 1, :title_chars), "
        "substr(t.text, 1, :text_chars), t.language, "
        "t.document_date, p.accessed_time, p.depth, t.extracted_at "
        "FROM page_text t JOIN page p ON p.id = t.page_id JOIN site s ON s.id = p.site_id "
        f"WHERE {_FINDABLE} AND t.page_id IN :ids"
    ).bindparams(bindparam("ids", expanding=True))
    with engine.connect() as conn:
        for part in chunks(list(ids), 500):
            values = {"ids": list(part), "text_chars": text_chars,
                      "title_chars": MAX_TITLE_CHARS}  # fmt: skip
            for row in conn.execute(sql, values):
                yield _document(row)


def _document(row: Any) -> SearchDocument:
    pid, url, host, kind, title, body, language, doc_date, accessed, depth, mark = row
    return SearchDocument(
        pid, url, host or "", kind, title or "", body or "", language,
        _when(doc_date) or _when(accessed), depth, str(mark),
    )  # fmt: skip


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
