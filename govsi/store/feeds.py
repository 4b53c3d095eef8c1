"""crawldb's ``feed`` table: feeds and sitemaps found (a row made once per URL), their polls
written over the row (the writer, in its batch's transaction), and the reads a run makes
of them (every row; the due polls each worker takes; rows no page names any more, forgotten).

A poll never goes backwards: an older poll written after a newer one (a spill replayed) is
ignored, and a 304 keeps the validators the earlier 200 stored when it repeats none.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime, timedelta
from typing import Any, NamedTuple

from sqlalchemy import Connection, Engine, and_, delete, exists, func, or_, select, update

from govsi.items import FeedKind, FeedState, FeedStatus
from govsi.store.schema import FEED, PAGE, SITE

__all__ = [
    "StoredFeed",
    "claim_polls",
    "forget_feeds",
    "record_feeds",
    "robots_texts",
    "stored_feeds",
]


class StoredFeed(NamedTuple):
    """A feed row as a run reads it: what a conditional poll sends, when it is due, and
    what its earlier polls left (failures in a row, its state, where it moved)."""

    url: str
    kind: FeedKind
    etag: str | None
    last_modified: str | None
    next_poll: datetime | None
    failures: int = 0
    state: FeedStatus = "active"
    moved_to: str | None = None
    found_on: str | None = None


def record_feeds(
    conn: Connection,
    items: Iterable[FeedState],
    site_ids: dict[str, int],
    insert: Callable[[Any], Any],
) -> None:
    """Rows for feeds not stored yet, then each record over its row: a poll's outcome, or
    (no ``polled_at``) a page or robots.txt naming it (``seen_at``) or robots.txt no longer
    listing it (state "unlisted"). ``insert``: the dialect's INSERT with
    ``on_conflict_do_nothing``; ``site_ids``: every item's host."""
    items = list(items)
    found: dict[str, FeedState] = {}
    for item in items:
        found.setdefault(item.url, item)
    if found:
        rows = [
            {"url": i.url, "site_id": site_ids.get(i.host), "kind": i.kind,
             "found_on": i.found_on, "found_at": i.polled_at or i.seen_at,
             "last_seen": i.seen_at or i.polled_at}
            for i in found.values()
        ]  # fmt: skip
        conn.execute(insert(FEED).on_conflict_do_nothing(index_elements=["url"]), rows)
    for item in items:
        if item.polled_at is None:
            _named(conn, item)
        else:
            _polled(conn, item)


def _named(conn: Connection, item: FeedState) -> None:
    """A record that is no poll: named again (``last_seen`` moves on; an unlisted sitemap
    is active again), or no longer listed."""
    row = FEED.c.url == item.url
    if item.seen_at is not None:
        seen = or_(FEED.c.last_seen.is_(None), FEED.c.last_seen < item.seen_at)
        conn.execute(update(FEED).where(row, seen).values(last_seen=item.seen_at))
        conn.execute(update(FEED).where(row, FEED.c.state == "unlisted").values(state="active"))
        if item.found_on is not None:
            # A row made by a poll that did not say (a sitemap before revision 0020).
            conn.execute(
                update(FEED).where(row, FEED.c.found_on.is_(None)).values(found_on=item.found_on)
            )
    elif item.state == "unlisted":
        conn.execute(update(FEED).where(row, FEED.c.state == "active").values(state="unlisted"))


def _polled(conn: Connection, item: FeedState) -> None:
    values: dict[str, Any] = {
        "polled_at": item.polled_at,
        "poll_status": item.status,
        "poll_error": item.error,
        "next_poll": item.next_poll,
        "failures": item.failures,
        "state": item.state,
        "moved_to": item.moved_to,
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
    query = select(
        FEED.c.url, FEED.c.kind, FEED.c.etag, FEED.c.last_modified, FEED.c.next_poll,
        FEED.c.failures, FEED.c.state, FEED.c.moved_to, FEED.c.found_on,
    )  # fmt: skip
    with engine.connect() as conn:
        return {row.url: StoredFeed(*row) for row in conn.execute(query)}


def robots_texts(engine: Engine, hosts: Iterable[str]) -> dict[str, str]:
    """The robots.txt crawldb holds for each of ``hosts`` that has one, as last fetched."""
    wanted = sorted(set(hosts))
    if not wanted:
        return {}
    query = select(SITE.c.domain, SITE.c.robots_content).where(
        SITE.c.domain.in_(wanted), SITE.c.robots_content.is_not(None)
    )
    with engine.connect() as conn:
        return {domain: content for domain, content in conn.execute(query)}


def forget_feeds(engine: Engine, now: datetime, after: timedelta) -> list[str]:
    """Delete the rows no page nor robots.txt has named since ``now - after``, and return
    their URLs. A row stays while what named it still stands unread: its page answered a
    revisit since with a 304 or kept its copy (its links were not read again), or its
    sitemap index answered a poll since with a 304."""
    cutoff = now - after
    seen = func.coalesce(FEED.c.last_seen, FEED.c.found_at)
    page_stands = exists().where(
        PAGE.c.url == FEED.c.found_on,
        PAGE.c.visit_time >= cutoff,
        PAGE.c.visit_outcome.in_(("not_modified", "kept")),
    )
    index = FEED.alias("index_feed")
    index_stands = exists().where(
        index.c.url == FEED.c.found_on, index.c.polled_at >= cutoff, index.c.poll_status == 304
    )
    stale = and_(seen < cutoff, ~page_stands, ~index_stands)
    with engine.begin() as conn:
        gone = [url for (url,) in conn.execute(select(FEED.c.url).where(stale))]
        if gone:
            conn.execute(delete(FEED).where(stale))
    return gone


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
