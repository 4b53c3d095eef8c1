"""Image rows, each picture's bytes stored once: a (page, image) row per page that shows
it, a download's outcome on every row of its URL, its bytes on the URL's first row only.

A download's outcome never goes backwards: rows visited later keep theirs. A revisit
replaces the outcome, the bytes' hash, the validators and the bytes themselves (none when
the URL no longer serves the picture); a 304 records only the visit. A page that no longer
shows a picture loses its row, and the bytes move on to the URL's next row.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlalchemy import Connection, bindparam, func, or_, select, update

from govsi.items import FetchedImage
from govsi.store.database import chunks
from govsi.store.schema import IMAGE

# Rows not visited after the record's download.
_NOT_LATER = or_(IMAGE.c.accessed_time.is_(None), IMAGE.c.accessed_time <= bindparam("b_accessed"))
_OUTCOME = update(IMAGE).where(IMAGE.c.url == bindparam("b_url"), _NOT_LATER)
_FIRST = select(func.min(IMAGE.c.id)).where(IMAGE.c.url == bindparam("b_url")).scalar_subquery()
_DATA = update(IMAGE).where(IMAGE.c.id == _FIRST, _NOT_LATER)
# A visit gives back the picture's revisit claim (its time stays: done for the round).
_NOT_MODIFIED = _OUTCOME.values(
    etag=func.coalesce(bindparam("b_etag"), IMAGE.c.etag),
    last_modified=func.coalesce(bindparam("b_last_modified"), IMAGE.c.last_modified),
    revisit_claim=None,
)


def record_images(conn: Connection, fetched: list[FetchedImage], store_data: bool) -> None:
    """Each download's outcome on every row of its URL; its bytes (``store_data``) on the
    first row only (the lowest id), so a logo on 500 pages is stored once."""
    full = [i for i in fetched if not i.not_modified]
    if full:
        conn.execute(_OUTCOME, [{
            "b_url": i.url, "b_accessed": i.accessed_time, "accessed_time": i.accessed_time,
            "content_type": (i.content_type or "")[:50] or None,
            "http_status_code": i.http_status_code, "content_hash": i.content_hash,
            "etag": i.etag, "last_modified": i.last_modified, "revisit_claim": None,
        } for i in full])  # fmt: skip
        # A revisit's answer is the picture now, whatever it was: bytes, or none.
        with_data = [
            {"b_url": i.url, "b_accessed": i.accessed_time, "data": i.data}
            for i in full
            if store_data and (i.data or i.revisit is not None)
        ]
        if with_data:
            conn.execute(_DATA, with_data)
    kept = [i for i in fetched if i.not_modified]
    if kept:
        conn.execute(_NOT_MODIFIED, [{
            "b_url": i.url, "b_accessed": i.accessed_time, "accessed_time": i.accessed_time,
            "b_etag": i.etag, "b_last_modified": i.last_modified,
        } for i in kept])  # fmt: skip


def insert_images(conn: Connection, insert: Callable[..., Any], rows: list[dict[str, Any]]) -> None:
    """New (page, image) rows take the outcome of an earlier download of the same URL,
    if any, from that URL's first row, read without its bytes. ``insert``: the dialect's
    ``insert`` (PostgreSQL's or SQLite's, for ON CONFLICT DO NOTHING)."""
    urls = sorted({r["url"] for r in rows})
    known: dict[str, dict[str, Any]] = {}
    for part in chunks(urls):
        first = select(func.min(IMAGE.c.id)).where(IMAGE.c.url.in_(part)).group_by(IMAGE.c.url)
        q = select(
            IMAGE.c.url,
            IMAGE.c.content_type,
            IMAGE.c.accessed_time,
            IMAGE.c.http_status_code,
            IMAGE.c.content_hash,
            IMAGE.c.etag,
            IMAGE.c.last_modified,
        ).where(IMAGE.c.id.in_(first), IMAGE.c.accessed_time.is_not(None))
        for found in conn.execute(q):
            known.setdefault(found.url, dict(found._mapping))
    copied = ("content_type", "accessed_time", "http_status_code", "content_hash", "etag",
              "last_modified")  # fmt: skip
    full = []
    for r in rows:
        prev = known.get(r["url"], {})
        # The bytes are on the URL's first row only.
        full.append({**r, "data": None, **{k: prev.get(k) for k in copied}})
    conn.execute(insert(IMAGE).on_conflict_do_nothing(index_elements=["page_id", "url"]), full)


def drop_images(conn: Connection, shown: dict[int, set[str]]) -> None:
    """Rows of pictures the pages ``shown`` (page id -> the image URLs it shows now) no
    longer show are removed; bytes on a removed row move to its URL's next row first."""
    gone: list[int] = []
    for part in chunks(sorted(shown)):
        q = select(IMAGE.c.id, IMAGE.c.page_id, IMAGE.c.url).where(IMAGE.c.page_id.in_(part))
        gone.extend(i for i, page, url in conn.execute(q) if url not in shown[page])
    if not gone:
        return
    gone.sort()
    holding: list[tuple[int, str]] = []
    for part in chunks(gone):
        q = select(IMAGE.c.id, IMAGE.c.url).where(IMAGE.c.id.in_(part), IMAGE.c.data.is_not(None))
        holding.extend((r.id, r.url) for r in conn.execute(q))
    leaving = set(gone)
    for row_id, url in holding:
        source = IMAGE.alias("source")
        rest = [i for i in _ids_of(conn, url) if i not in leaving]
        if rest:
            data = select(source.c.data).where(source.c.id == row_id).scalar_subquery()
            conn.execute(update(IMAGE).where(IMAGE.c.id == rest[0]).values(data=data))
    for part in chunks(gone):
        conn.execute(IMAGE.delete().where(IMAGE.c.id.in_(part)))


def _ids_of(conn: Connection, url: str) -> list[int]:
    q = select(IMAGE.c.id).where(IMAGE.c.url == url).order_by(IMAGE.c.id)
    return list(conn.execute(q).scalars())
