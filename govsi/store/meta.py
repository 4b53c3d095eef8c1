"""``crawl_meta`` rows, the small shared values of a crawl (a host's revisit budget, the
revisit round, a saved filter's notification mark): read one, add one if missing, lock
one, write one (only over the value read, when asked), on SQLite and PostgreSQL.

``lock`` makes the row, or keeps it as it is, in one upsert that returns its value; on
PostgreSQL that update locks the row to the end of the transaction (as ``SELECT ... FOR
UPDATE`` would), so two workers updating one value take turns; SQLite has one writer at
a time.
"""

from __future__ import annotations

from sqlalchemy import Connection, select, update
from sqlalchemy.dialects import postgresql, sqlite

from govsi.store.schema import CRAWL_META

__all__ = ["add", "lock", "read", "write"]


def _insert(conn: Connection) -> postgresql.Insert | sqlite.Insert:
    if conn.dialect.name == "postgresql":
        return postgresql.insert(CRAWL_META)
    return sqlite.insert(CRAWL_META)


def read(conn: Connection, key: str) -> str | None:
    """The row's value; None when there is no row."""
    value: str | None = conn.execute(
        select(CRAWL_META.c.value).where(CRAWL_META.c.key == key)
    ).scalar()
    return value


def add(conn: Connection, key: str, value: str) -> None:
    """The row made with ``value`` unless there is one (which is kept)."""
    conn.execute(_insert(conn).values(key=key, value=value).on_conflict_do_nothing())


def lock(conn: Connection, key: str, fresh: str) -> str | None:
    """The row's value, the row made with ``fresh`` if there was none, and locked until
    the transaction ends."""
    upsert = (
        _insert(conn)
        .values(key=key, value=fresh)
        .on_conflict_do_update(
            index_elements=[CRAWL_META.c.key], set_={"value": CRAWL_META.c.value}
        )
        .returning(CRAWL_META.c.value)
    )
    value: str | None = conn.execute(upsert).scalar()
    return value


def write(conn: Connection, key: str, value: str, was: str | None = None) -> bool:
    """The row's value set to ``value``; with ``was``, only while it still reads so
    (another worker's write wins). False when no row was written."""
    stmt = update(CRAWL_META).where(CRAWL_META.c.key == key)
    if was is not None:
        stmt = stmt.where(CRAWL_META.c.value == was)
    return conn.execute(stmt.values(value=value)).rowcount > 0
