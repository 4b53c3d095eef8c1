"""REVISIT_WAIT's decision: a page's due time (``govsi.revisit.due.DueRule.due_at``) and
when an idle crawl wakes (``govsi.revisit.waiting``), as tables of cases; crawldb's due times
(``govsi.store.nextdue``) on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from sqlalchemy import Engine, update

from govsi.items import FetchedPage
from govsi.revisit.due import DueRule
from govsi.revisit.waiting import next_wake
from govsi.store.nextdue import due_times
from govsi.store.schema import FEED, PAGE
from govsi.store.writer import CrawlWriter

DAY = 24 * 3600.0
HOUR = 3600.0
NOW = datetime(2026, 11, 29, 12, 0)
# REVISIT_MIN_INTERVAL a day, a hub's an hour.
RULE = DueRule("due", NOW, NOW, DAY, DAY, HOUR)


def at(hours: float | None) -> datetime | None:
    """``hours`` from NOW (negative: ago)."""
    return None if hours is None else NOW + timedelta(hours=hours)


@pytest.mark.parametrize(
    ("next_visit", "accessed", "due"),
    [
        (1, -30, 1),  # its next visit
        (-2, -30, -2),  # come already
        (-21.5, -22, -21),  # a hub's next visit, sooner than the shortest interval allows
        (None, -10, 14),  # stored before revisits: REVISIT_MIN_INTERVAL after its visit
        (5, None, 5),  # never visited: its next visit
    ],
)
def test_a_pages_due_time(next_visit: float | None, accessed: float | None, due: float) -> None:
    when = RULE.due_at(at(next_visit), at(accessed))
    assert when == at(due)


def test_a_page_neither_visited_nor_scheduled_is_due_at_once() -> None:
    assert RULE.due_at(None, None) == datetime.min


@pytest.mark.parametrize(
    ("due", "wait", "looked", "wake"),
    [
        ([0.5, 3], 3600, -1, 0.5),  # the earliest
        ([3, 0.5], 3600, -1, 0.5),  # in any order
        ([2], 3600, -1, None),  # past the wait: the crawl ends
        ([1], 3600, -1, 1),  # just within it
        ([-0.5], 3600, -1, 0),  # due since the last look: at once
        ([-2, 5], 6 * 3600, -1, 5),  # looked at already: another worker's, or a lost host's
        ([-1], 3600, -1, None),  # ... at that very time
        ([], 3600, -1, None),  # nothing stored is due ever
        ([0.5], 0, -1, None),  # REVISIT_WAIT 0: the crawl ends, as without it
    ],
)
def test_when_an_idle_crawl_wakes(
    due: list[float], wait: float, looked: float, wake: float | None
) -> None:
    times = [NOW + timedelta(hours=h) for h in due]
    looked_at = NOW + timedelta(hours=looked)
    assert next_wake(NOW, times, wait=wait, looked=looked_at) == at(wake)


def test_crawldbs_due_times_are_pages_nobody_holds_and_feed_polls(engine: Engine) -> None:
    writer = CrawlWriter(engine)
    for path in ("soon", "later", "claimed", "past", "fresh"):
        writer.add(FetchedPage(f"http://a.gov.si/{path}", 1, "HTML", NOW, 200, html_content="x"))
    assert writer.flush()
    plan = {
        "soon": (-30, 0.5, None),
        "later": (-30, 3, None),  # past the horizon
        "claimed": (-30, 0.25, "another"),  # on its way with another worker
        "past": (-30, -1, None),  # due now
        "fresh": (-0.5, 0.1, None),  # visited half an hour ago: due an hour after it
    }
    with engine.begin() as conn:
        for path, (accessed, next_visit, claim) in plan.items():
            conn.execute(
                update(PAGE)
                .where(PAGE.c.url == f"http://a.gov.si/{path}")
                .values(accessed_time=at(accessed), next_visit=at(next_visit), revisit_claim=claim)
            )
        conn.execute(
            FEED.insert(),
            [
                {"url": "http://a.gov.si/rss", "kind": "feed", "next_poll": at(0.75)},
                {"url": "http://a.gov.si/sitemap.xml", "kind": "sitemap", "next_poll": at(5)},
            ],
        )
    times = due_times(
        engine, min_interval=DAY, hub_min_interval=HOUR, horizon=NOW + timedelta(hours=2)
    )
    assert times == [at(-1), at(0.5), at(0.5), at(0.75)]
