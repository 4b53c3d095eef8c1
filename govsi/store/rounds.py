"""A REVISIT=all round in crawldb: when it started, so that every worker on the crawl, and
a run resumed after a kill, revisits what was visited before that, and only once.

The round is one ``crawl_meta`` row, ``revisit_round``: ``<start>|<last claim>`` (ISO,
naive UTC). A worker opening a round joins the one in the row while it is unfinished: some
page is still claimed (a run that ends normally gives its claims back; a killed one leaves
them) and a claim was made within ``alive_within`` seconds. Else it starts a new one. Each
batch claimed keeps the round alive; the last worker to end normally ends it. So the next
REVISIT=all run after a kill finishes that round instead of starting it again, and workers
starting together, before anything is claimed, each start their own at about the same time
(what one revisits, after all of them started, is not due for the others).

Every run with revisits (due or all) also marks the last round for ``scrapy report``: the
``crawl_meta`` row ``round_started`` (naive UTC, ``YYYY-MM-DD HH:MM:SS.ffffff``, the form
SQLite stores timestamps in, so it compares in SQL as it is). A run starting within
``REVISIT_MIN_INTERVAL`` of the round's start joins it (a run resumed the same day,
workers starting together); the report's last round is every visit since (``visit_time``).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import Connection, delete, exists, select, update

from govsi.store import meta
from govsi.store.schema import CRAWL_META, PAGE

__all__ = ["STARTED", "end_round", "join_round", "mark_round", "round_started", "touch_round"]

KEY = "revisit_round"
STARTED = "round_started"


def _value(start: datetime, last: datetime) -> str:
    return f"{start.isoformat()}|{last.isoformat()}"


def _read(conn: Connection) -> tuple[str, datetime, datetime] | None:
    value = meta.read(conn, KEY)
    if value is None:
        return None
    try:
        start, last = (datetime.fromisoformat(part) for part in value.split("|", 1))
    except ValueError:
        return (value, datetime.min, datetime.min)  # unreadable: taken as long dead
    return (value, start, last)


def join_round(conn: Connection, now: datetime, alive_within: float) -> datetime:
    """The start of the round this worker works in: the one in crawldb if it is alive,
    else one starting ``now``. Run inside a transaction; two workers starting at once end
    in the same round (one statement decides)."""
    found = _read(conn)
    held = conn.execute(select(exists().where(PAGE.c.revisit_claim.is_not(None)))).scalar()
    if found is not None and held and found[2] >= now - timedelta(seconds=alive_within):
        return found[1]
    fresh = _value(now, now)
    if found is None:
        meta.add(conn, KEY, fresh)
    else:  # a dead round: replaced, unless another worker replaced it first
        meta.write(conn, KEY, fresh, was=found[0])
    joined = _read(conn)
    return now if joined is None else joined[1]


def touch_round(conn: Connection, start: datetime, now: datetime) -> None:
    """A claim in the round that started at ``start``: it is alive."""
    conn.execute(
        update(CRAWL_META)
        .where(CRAWL_META.c.key == KEY, CRAWL_META.c.value.like(f"{start.isoformat()}|%"))
        .values(value=_value(start, now))
    )


def end_round(conn: Connection, start: datetime) -> None:
    """The round that started at ``start`` is over (its last worker ended normally)."""
    conn.execute(
        delete(CRAWL_META).where(
            CRAWL_META.c.key == KEY, CRAWL_META.c.value.like(f"{start.isoformat()}|%")
        )
    )


def round_started(
    existing: datetime | None, start: datetime, now: datetime, min_interval: float
) -> datetime:
    """When the last round started, once a run starting at ``now`` revisits from ``start``
    (now, or the start of the REVISIT=all round it joined): the round ``existing`` marks if
    it started within ``min_interval`` before now (then from the earlier start), else a
    new one from ``start``."""
    if existing is not None and now - timedelta(seconds=min_interval) < existing:
        return min(existing, start)
    return start


def mark_round(conn: Connection, start: datetime, now: datetime, min_interval: float) -> datetime:
    """Record in ``round_started`` the round a run starting at ``now`` belongs to
    (``round_started``'s rule) and return its start. Run inside a transaction; of workers
    starting at once, the first to write wins and the others join it."""
    found = meta.read(conn, STARTED)
    try:
        existing = None if found is None else datetime.fromisoformat(found)
    except ValueError:
        existing = None  # unreadable: a new round
    value = round_started(existing, start, now, min_interval)
    text = value.isoformat(sep=" ", timespec="microseconds")
    if found is None:
        meta.add(conn, STARTED, text)
    elif text != found:
        meta.write(conn, STARTED, text, was=found)
    stored = meta.read(conn, STARTED)
    return value if stored is None else datetime.fromisoformat(stored)
