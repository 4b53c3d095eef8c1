"""crawldb's ``feed`` rows through the writer: found once, each poll written over its row
(never an older one over a newer), a 304 keeping the validators, failures, state and moves,
sightings and unlisted sitemaps; the reads a run makes (validators by URL; a due poll
taken by one worker; robots.txt as stored) and rows no page names any more forgotten."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import Engine, select, text

from govsi.items import FeedState, FetchedPage, RobotsFile
from govsi.store.feeds import claim_polls, forget_feeds, robots_texts, stored_feeds
from govsi.store.schema import FEED as FEED_TABLE
from govsi.store.writer import CrawlWriter
from testkit.crawldb import T, q

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


def test_a_polls_failures_state_and_move_are_written(engine: Engine) -> None:
    w = CrawlWriter(engine)
    w.add(FeedState(FEED, "www.gov.si", polled_at=T, status=503, failures=2,
                    next_poll=T + 4 * HOUR))  # fmt: skip
    w.add(FeedState(MAP, "www.gov.si", "sitemap", polled_at=T, status=301, state="moved",
                    moved_to="https://www.gov.si/sitemap_index.xml"))  # fmt: skip
    w.flush()
    stored = stored_feeds(engine)
    assert (stored[FEED].failures, stored[FEED].state, stored[FEED].next_poll) == (
        2, "active", T + 4 * HOUR)  # fmt: skip
    assert (stored[MAP].state, stored[MAP].moved_to) == (
        "moved", "https://www.gov.si/sitemap_index.xml")  # fmt: skip
    # A success resets them.
    w.add(FeedState(FEED, "www.gov.si", polled_at=T + HOUR, status=200, next_poll=T + 2 * HOUR))
    w.flush()
    assert stored_feeds(engine)[FEED].failures == 0


def seen(engine: Engine) -> list[tuple]:
    with engine.connect() as conn:
        return [tuple(r) for r in conn.execute(select(FEED_TABLE.c.found_at, FEED_TABLE.c.last_seen,
                                                      FEED_TABLE.c.state))]  # fmt: skip


def test_named_again_and_unlisted(engine: Engine) -> None:
    w = CrawlWriter(engine)
    robots = "https://www.gov.si/robots.txt"
    w.add(FeedState(MAP, "www.gov.si", "sitemap", polled_at=T, status=200))  # a new row
    w.add(FeedState(MAP, "www.gov.si", "sitemap", robots, seen_at=T))
    w.flush()
    assert seen(engine) == [(T, T, "active")]
    assert stored_feeds(engine)[MAP].found_on == robots  # a row that did not say, told
    w.add(FeedState(MAP, "www.gov.si", "sitemap", state="unlisted"))
    w.flush()
    assert stored_feeds(engine)[MAP].state == "unlisted"
    # Listed again: active, seen now; an older sighting replayed does not go back.
    w.add(FeedState(MAP, "www.gov.si", "sitemap", robots, seen_at=T + HOUR))
    w.add(FeedState(MAP, "www.gov.si", "sitemap", robots, seen_at=T))
    w.flush()
    assert seen(engine) == [(T, T + HOUR, "active")]


def test_feeds_no_page_names_are_forgotten(engine: Engine) -> None:
    w = CrawlWriter(engine)
    day = timedelta(days=1)
    page, kept = "https://www.gov.si/novice/", "https://www.gov.si/arhiv/"
    index = "https://www.gov.si/sitemap_index.xml"
    for url in (page, kept):
        w.add(FetchedPage(url, 1, "HTML", T, 200))
    rows = {
        "https://www.gov.si/named": (page, T + 50 * day),  # named lately
        "https://www.gov.si/stale": (page, T),  # its page read since without it
        "https://www.gov.si/kept": (kept, T),  # its page answered 304 since: still there
        "https://www.gov.si/child.xml": (index, T),  # its index answered 304 since
    }
    for url, (found_on, seen) in rows.items():
        w.add(FeedState(url, "www.gov.si", found_on=found_on, seen_at=seen))
    w.add(FeedState(index, "www.gov.si", "sitemap", "https://www.gov.si/robots.txt",
                    seen_at=T + 50 * day))  # fmt: skip
    w.flush()
    w.add(FeedState(index, "www.gov.si", "sitemap", polled_at=T + 40 * day, status=304))
    w.flush()
    with engine.begin() as conn:
        conn.execute(text("UPDATE page SET visit_outcome = 'not_modified', visit_time = :t "
                          "WHERE url = :u"), {"t": T + 40 * day, "u": kept})  # fmt: skip
    now = T + 61 * day
    assert forget_feeds(engine, now, 60 * day) == ["https://www.gov.si/stale"]
    assert set(stored_feeds(engine)) == {*rows, index} - {"https://www.gov.si/stale"}
    assert forget_feeds(engine, now, 60 * day) == []
    # A 304 long ago keeps nothing.
    assert len(forget_feeds(engine, T + 200 * day, 60 * day)) == 4


def test_robots_texts(engine: Engine) -> None:
    w = CrawlWriter(engine)
    w.add(RobotsFile("a.gov.si", "Sitemap: https://a.gov.si/s.xml\n", 200, T))
    w.add(RobotsFile("b.gov.si", None, 404, T))
    w.flush()
    assert robots_texts(engine, ["a.gov.si", "b.gov.si", "c.gov.si"]) == {
        "a.gov.si": "Sitemap: https://a.gov.si/s.xml\n"}  # fmt: skip
