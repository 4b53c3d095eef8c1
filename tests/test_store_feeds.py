"""crawldb's ``feed`` rows through the writer: found once, each poll written over its row
(never an older one over a newer), a 304 keeping the validators, and the reads a run makes
(validators by URL; a due poll taken by one worker)."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import Engine

from govsi.items import FeedState
from govsi.store.feeds import claim_polls, stored_feeds
from govsi.store.writer import CrawlWriter
from tests.support.crawldb import T, q

FEED = "https://www.gov.si/novice/rss"
MAP = "https://www.gov.si/sitemap.xml"
HOUR = timedelta(hours=1)


def rows(engine: Engine) -> dict[str, tuple]:
    found = q(engine, "SELECT url, kind, found_on, etag, last_modified, poll_status, entries, "
                      "new_entries FROM feed")  # fmt: skip
    return {r[0]: r[1:] for r in found}


def test_feeds_found_polled_and_read_back(engine: Engine) -> None:
    w = CrawlWriter(engine)
    w.add(FeedState(FEED, "www.gov.si", found_on="https://www.gov.si/novice/"))
    w.add(FeedState(FEED, "www.gov.si", found_on="https://www.gov.si/other/"))  # found again
    w.add(FeedState(MAP, "www.gov.si", "sitemap", found_on="https://www.gov.si/robots.txt"))
    w.flush()
    assert rows(engine)[FEED][:2] == ("feed", "https://www.gov.si/novice/")

    w.add(FeedState(FEED, "www.gov.si", polled_at=T, status=200, etag='"1"',
                    last_modified="Sun, 22 Nov 2026 10:00:00 GMT", entries=5, new_entries=5,
                    next_poll=T + HOUR))  # fmt: skip
    w.add(FeedState(MAP, "www.gov.si", "sitemap", polled_at=T, status=200, entries=9,
                    next_poll=T + 6 * HOUR))  # fmt: skip
    w.flush()
    assert rows(engine)[FEED][2:] == ('"1"', "Sun, 22 Nov 2026 10:00:00 GMT", 200, 5, 5)
    assert stored_feeds(engine)[FEED].next_poll == T + HOUR

    # A 304 keeps the validators and the entries; an older poll replayed changes nothing.
    w.add(FeedState(FEED, "www.gov.si", polled_at=T + HOUR, status=304,
                    next_poll=T + 2 * HOUR))  # fmt: skip
    w.add(FeedState(FEED, "www.gov.si", polled_at=T, status=200, etag='"0"', entries=1,
                    next_poll=T + HOUR))  # fmt: skip
    w.flush()
    assert rows(engine)[FEED][2:] == ('"1"', "Sun, 22 Nov 2026 10:00:00 GMT", 304, 5, 5)
    stored = stored_feeds(engine)
    assert stored[FEED].etag == '"1"' and stored[FEED].next_poll == T + 2 * HOUR
    assert stored[MAP].kind == "sitemap"

    # A failed poll keeps the validators too, and says why.
    w.add(FeedState(FEED, "www.gov.si", polled_at=T + 2 * HOUR, error="timeout",
                    next_poll=T + 3 * HOUR))  # fmt: skip
    w.flush()
    assert rows(engine)[FEED][2:5] == ('"1"', "Sun, 22 Nov 2026 10:00:00 GMT", None)
    assert q(engine, "SELECT poll_error FROM feed WHERE kind = 'feed'") == [("timeout",)]


def test_a_due_poll_is_taken_by_one_worker(engine: Engine) -> None:
    w = CrawlWriter(engine)
    w.add(FeedState(FEED, "www.gov.si", polled_at=T, status=200, next_poll=T + HOUR))
    w.add(FeedState(MAP, "www.gov.si", "sitemap"))  # never polled
    w.flush()
    due = {FEED: HOUR, MAP: 2 * HOUR}
    assert claim_polls(engine, due, T + HOUR / 2) == [MAP]  # the feed is not due yet
    assert claim_polls(engine, due, T + HOUR) == [FEED]  # the sitemap was taken
    assert claim_polls(engine, due, T + HOUR) == []  # another worker, at the same time
    # Taken until an interval later, unless the poll's record comes first.
    assert stored_feeds(engine)[FEED].next_poll == T + 2 * HOUR
