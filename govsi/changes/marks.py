"""Each saved filter's high-water mark in crawldb: the last change it was notified of.

One ``crawl_meta`` row per saved filter, ``notify <hash of its name>`` =
``<last id>|<floor>|<holder>|<held until>``: the last ``page_change`` id sent, the visit
time the next look starts from (``floor``: the start of the last run that sent; changes
visited earlier were looked at then), and the worker sending now with its claim's end
(empty: none). A worker claims the row before it looks (``claim``: one statement that
locks it, as ``store.hostbudget`` does), sends, and ``settle``s it: the mark moves only
after a successful send, and only by the holder. So several workers closing at once send
each change once (the others find the row held and leave their changes to the next
notification), a failed send is sent again next time, and a claim whose worker died
expires. A filter's first row (``open_marks``, as a run starts) starts from that run: the
first notification lists the crawl's changes from then, never the whole history.

An unreadable row fails closed: nothing is sent from it this time (logged), and it is
written anew from the newest change, so the next notification starts there.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Connection, Engine, func, select

from govsi.store import meta
from govsi.store.schema import PAGE_CHANGE

__all__ = ["Mark", "claim", "mark_key", "open_marks", "read_mark", "settle"]

logger = logging.getLogger(__name__)

_NONE = datetime.min


def mark_key(name: str) -> str:
    """The filter's ``crawl_meta`` key (a name may be longer than the key's 50)."""
    return "notify " + hashlib.blake2b(name.encode(), digest_size=16).hexdigest()


@dataclass(frozen=True, slots=True)
class Mark:
    """A filter's row as stored."""

    last_id: int = 0  # the last page_change id sent (0: none yet)
    floor: datetime = _NONE  # changes visited before it are not looked for
    holder: str = ""  # the worker sending now ("" none)
    held_until: datetime = _NONE

    def value(self) -> str:
        floor, until = self.floor.isoformat(), self.held_until.isoformat()
        return f"{self.last_id}|{floor}|{self.holder}|{until}"

    def held(self, now: datetime) -> bool:
        """Whether a worker holds it (and has not outlived its claim) at ``now``."""
        return bool(self.holder) and self.held_until > now


def read_mark(value: str | None) -> Mark | None:
    """A stored value as a mark (no value: a filter never notified); None: unreadable."""
    if value is None:
        return Mark()
    parts = value.split("|")
    if len(parts) != 4:
        return None
    try:
        last_id = int(parts[0])
        floor, until = datetime.fromisoformat(parts[1]), datetime.fromisoformat(parts[3])
    except ValueError:
        return None
    if last_id < 0 or floor.tzinfo is not None or until.tzinfo is not None:
        return None
    return Mark(last_id, floor, parts[2], until)


def open_marks(engine: Engine, names: Iterable[str], start: datetime) -> None:
    """The rows of filters that have none, starting from ``start`` (this run's start; a
    row an earlier or concurrent run made is kept)."""
    with engine.begin() as conn:
        for name in names:
            meta.add(conn, mark_key(name), Mark(0, start).value())


def claim(
    engine: Engine, name: str, holder: str, now: datetime, until: datetime, start: datetime
) -> Mark | None:
    """The filter's mark, now held by ``holder`` until ``until``; None when another
    worker holds it, or when it was unreadable (then written anew from the newest change).
    A filter without a row starts from ``start``."""
    key = mark_key(name)
    with engine.begin() as conn:
        value = meta.lock(conn, key, Mark(0, start).value())
        mark = read_mark(value)
        if mark is None:
            newest = conn.execute(select(func.max(PAGE_CHANGE.c.id))).scalar() or 0
            logger.warning("changes notification %r: its mark in crawl_meta reads %r; nothing "
                           "sent this time, the next notification starts from change %d",
                           name, value, newest)  # fmt: skip
            _write(conn, key, Mark(newest, now))
            return None
        if mark.held(now) and mark.holder != holder:
            return None
        _write(conn, key, Mark(mark.last_id, mark.floor, holder, until))
        return Mark(mark.last_id, mark.floor)


def settle(engine: Engine, name: str, holder: str, sent: Mark | None) -> bool:
    """The claim of ``holder`` given back; the mark moved to ``sent`` when given (after a
    successful send), else kept. False when ``holder`` no longer held it (its claim
    expired and another worker took it over): nothing is written."""
    key = mark_key(name)
    with engine.begin() as conn:
        value = meta.read(conn, key)
        mark = read_mark(value)
        if mark is None or mark.holder != holder:
            return False
        _write(conn, key, sent or Mark(mark.last_id, mark.floor), value)
        return True


def _write(conn: Connection, key: str, mark: Mark, was: str | None = None) -> None:
    meta.write(conn, key, mark.value(), was)
