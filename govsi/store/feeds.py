"""crawldb's ``feed`` table: feeds and sitemaps found (a row made once per URL), their polls
written over the row (the writer, in its batch's transaction), and the reads a run makes of
them (every row's validators; the due polls each worker takes).

A poll never goes backwards: an older poll written after a newer one (a spill replayed) is
ignored, and a 304 keeps the validators the earlier 200 stored when it repeats none.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime, timedelta
from typing import Any, NamedTuple

from sqlalchemy import Connection, Engine, or_, select, update

from govsi.items import FeedKind, FeedState
from govsi.store.schema import FEED

__all__ = ["StoredFeed", "claim_polls", "record_feeds", "stored_feeds"]


class StoredFeed(NamedTuple):
    """A feed row as a run reads it: what a conditional poll sends, and when it is due."""

    url: str
    kind: FeedKind
    etag: str | None
    last_modified: str | None
    next_poll: datetime | None


def record_feeds(
    conn: Connection,
    items: Iterable[FeedState],
    site_ids: dict[str, int],
    insert: Callable[[Any], Any],
) -> None:
    """Rows for feeds not stored yet, then each poll over its row. ``insert``: the
    dialect's INSERT with ``on_conflict_do_nothing``; ``site_ids``: every item's host."""
    items = list(items)
    found: dict[str, FeedState] = {}
    for item in items:
        found.setdefault(item.url, item)
    if found:
        rows = [
            {"url": i.url, "site_id": site_ids.get(i.host), "kind": i.kind,
             "found_on": i.found_on, "found_at": i.polled_at}
            for i in found.values()
        ]  # fmt: skip
        conn.execute(insert(FEED).on_conflict_do_nothing(index_elements=["url"]), rows)
    for item in items:
        if item.polled_at is None:
            continue
        values: dict[str, Any] = {
            "polled_at": item.polled_at,
            "poll_status": item.status,
            "poll_error": item.error,
            "next_poll": item.next_poll,
        }
        if item.status != 304:
            # A 304 says nothing of the entries; a 200 (or a failure) replaces them.
            values |= {"entries": item.entries, "new_entries": item.new_entries}
        if item.status is not None and item.status < 400:
            values["etag"] = item.etag if item.etag or item.status != 304 else FEED.c.etag
            values["last_modified"] = (
                item.last_modified if item.last_modified or item.status != 304
                else FEED.c.last_modified
            )  # fmt: skip
        conn.execute(
            update(FEED)
            .where(FEED.c.url == item.url)
            .where(or_(FEED.c.polled_at.is_(None), FEED.c.polled_at <= item.polled_at))
            .values(**values)
        )


def stored_feeds(engine: Engine) -> dict[str, StoredFeed]:
    """Every feed and sitemap crawldb holds, by URL (a crawl holds a few per host)."""
    query = select(FEED.c.url, FEED.c.kind, FEED.c.etag, FEED.c.last_modified, FEED.c.next_poll)
    with engine.connect() as conn:
        return {row.url: StoredFeed(*row) for row in conn.execute(query)}


def claim_polls(engine: Engine, due: dict[str, timedelta], now: datetime) -> list[str]:
    """The due feeds of ``due`` (URL -> its poll interval) this worker polls: each one's
    ``next_poll`` moved an interval on, where it has come (or was never set), by one UPDATE
    that only one worker's can change; the others leave it. A poll that never ends is due
    again an interval later."""
    taken: list[str] = []
    with engine.begin() as conn:
        for url, interval in due.items():
            result = conn.execute(
                update(FEED)
                .where(FEED.c.url == url)
                .where(or_(FEED.c.next_poll.is_(None), FEED.c.next_poll <= now))
                .values(next_poll=now + interval)
            )
            if result.rowcount:
                taken.append(url)
    return taken
