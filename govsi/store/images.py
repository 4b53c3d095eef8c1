"""Image rows, each picture's bytes stored once: a (page, image) row per page that shows
it, a download's outcome on every row of its URL, its bytes on the URL's first row only."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlalchemy import Connection, bindparam, func, select, update

from govsi.store.database import chunks
from govsi.store.schema import IMAGE


def record_images(conn: Connection, fetched: list[dict[str, Any]]) -> None:
    """A download's outcome goes on every row of its URL; its bytes on the first row
    only (the lowest id), so a logo on 500 pages is stored once."""
    meta = [{k: v for k, v in r.items() if k != "data"} for r in fetched]
    conn.execute(update(IMAGE).where(IMAGE.c.url == bindparam("b_url")), meta)
    first = select(func.min(IMAGE.c.id)).where(IMAGE.c.url == bindparam("b_url"))
    with_data = [{"b_url": r["b_url"], "data": r["data"]} for r in fetched if r["data"]]
    if with_data:
        stmt = update(IMAGE).where(IMAGE.c.id == first.scalar_subquery())
        conn.execute(stmt, with_data)


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
        ).where(IMAGE.c.id.in_(first), IMAGE.c.accessed_time.is_not(None))
        for found in conn.execute(q):
            known.setdefault(found.url, dict(found._mapping))
    full = []
    for r in rows:
        prev = known.get(r["url"], {})
        full.append(
            {
                **r,
                "content_type": prev.get("content_type"),
                "data": None,  # on the URL's first row only
                "accessed_time": prev.get("accessed_time"),
                "http_status_code": prev.get("http_status_code"),
            }
        )
    conn.execute(insert(IMAGE).on_conflict_do_nothing(index_elements=["page_id", "url"]), full)
