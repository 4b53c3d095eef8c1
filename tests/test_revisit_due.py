"""Tests for govsi.revisit.due: which stored pages a round takes, which are overdue, and a
sitemap's lastmod, as tables of cases (crawldb's SQL is held to the same rule in
tests/test_store_revisits.py)."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from govsi.revisit.due import (
    DueRule,
    RevisitMode,
    host_revisit_budget,
    lastmod_makes_due,
    lastmod_next_visit,
    parse_lastmod,
    revisit_mode,
    revisits_allowed,
)
from govsi.revisit.schedule import next_visit

DAY = 24 * 3600.0
NOW = datetime(2026, 11, 26, 12, 0)
START = NOW - timedelta(hours=2)  # the round began two hours ago


def ago(hours: float | None) -> datetime | None:
    return None if hours is None else NOW - timedelta(hours=hours)


@pytest.mark.parametrize(
    ("mode", "accessed", "next_visit", "due", "overdue"),
    [
        # due: next_visit decides, never sooner than a day after the visit
        ("due", 30, None, True, False),  # stored before revisits: a day after its visit
        ("due", 60, None, True, True),  # ... due 36 h: overdue
        ("due", 12, None, False, False),  # visited 12 h ago
        ("due", 48, 1, True, False),
        ("due", 48, 25, True, True),
        ("due", 48, -1, False, False),  # next visit in an hour
        ("due", 2, 1, False, False),  # a lastmod made it due, but the visit is 2 h old
        ("due", None, None, True, True),  # never visited (a row without a time)
        # all: every page visited before the round; overdue by its schedule
        ("all", 3, -100, True, False),
        ("all", 1, None, False, False),  # visited in this round
        ("all", 60, None, True, True),
        # off: never
        ("off", 1000, 500, False, False),
    ],
)
def test_the_rule(
    mode: RevisitMode,
    accessed: float | None,
    next_visit: float | None,
    due: bool,
    overdue: bool,
) -> None:
    rule = DueRule(mode, NOW, START, min_interval=DAY, overdue_after=DAY)
    assert rule.is_due(ago(next_visit), ago(accessed)) is due
    assert rule.is_overdue(ago(next_visit), ago(accessed)) is overdue


HOUR = 3600.0
VISIT = NOW - timedelta(days=3)  # the page's last visit


@pytest.mark.parametrize(
    ("page", "history", "changed", "new_links", "below_a_day"),
    [
        ("news list, new links every day", "86400+3 " * 8, True, 3, True),
        ("hub visited hourly", "3600+2 " * 8, True, 2, True),
        ("hub whose links dried up", "86400+3 " * 4 + "86400+ " * 4, True, 0, True),
        ("changes daily, no links", "86400+ " * 8, True, 0, False),
        ("never changes", "86400- " * 8, False, 0, False),
        ("first visit", None, True, 0, False),
    ],
)
def test_a_page_is_due_at_its_scheduled_visit_a_hubs_below_a_day(
    page: str, history: str | None, changed: bool, new_links: int, below_a_day: bool
) -> None:
    previous = None if history is None else VISIT - timedelta(days=1)
    scheduled, _ = next_visit(
        history, changed, VISIT, previous, min_interval=DAY, max_interval=30 * DAY,
        hub_min_interval=HOUR, new_links=new_links,
    )  # fmt: skip
    interval = (scheduled - VISIT).total_seconds()
    assert (interval < DAY) is below_a_day, (page, interval / HOUR)
    assert interval >= HOUR, page

    def due(at: datetime, hub_min_interval: float | None = HOUR) -> bool:
        rule = DueRule("due", at, at, DAY, DAY, hub_min_interval)
        return rule.is_due(scheduled, VISIT)

    assert due(scheduled), page
    assert not due(scheduled - timedelta(minutes=1)), page
    # Held to REVISIT_MIN_INTERVAL when the rule knows no hub's interval (as before).
    assert due(scheduled, None) is (interval >= DAY), page


@pytest.mark.parametrize(
    ("hours_after_visit", "next_visit_after", "hub_min_interval", "due"),
    [
        # A sitemap's lastmod made it due half an hour after its visit: never sooner than
        # the shortest interval the schedule gives (a hub's), here an hour.
        (0.5, 0.5, HOUR, False),
        (1.0, 0.5, HOUR, True),
        (2.0, 0.5, None, False),  # no hub interval: REVISIT_MIN_INTERVAL's day
        (24.0, 0.5, None, True),
        # A hub interval above REVISIT_MIN_INTERVAL does not lengthen the floor.
        (24.0, 0.5, 2 * DAY, True),
        (3.0, 5.0, HOUR, False),  # scheduled later: not yet
    ],
)
def test_never_sooner_than_the_shortest_interval_after_a_visit(
    hours_after_visit: float, next_visit_after: float, hub_min_interval: float | None, due: bool
) -> None:
    at = VISIT + timedelta(hours=hours_after_visit)
    rule = DueRule("due", at, at, DAY, DAY, hub_min_interval)
    assert rule.is_due(VISIT + timedelta(hours=next_visit_after), VISIT) is due


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-11-04", datetime(2026, 11, 4)),
        ("2026-11", datetime(2026, 11, 1)),
        ("2026", datetime(2026, 1, 1)),
        ("2026-11-04T10:30:00+01:00", datetime(2026, 11, 4, 9, 30)),
        ("2026-11-04T10:30:00.123-0230", datetime(2026, 11, 4, 13, 0)),
        ("2026-11-04T10:30Z", datetime(2026, 11, 4, 10, 30)),
        ("2026-11-04 10:30:05", datetime(2026, 11, 4, 10, 30, 5)),  # no zone: UTC
        (" 2026-03-01T10:20:30 ", datetime(2026, 3, 1, 10, 20, 30)),
        ("2026-03-01T25:00Z", None),
        (" 2026-11-04 ", datetime(2026, 11, 4)),
        ("2026-02-30", None),
        # A zone that takes it past Python's dates: a hostile sitemap's, never an error.
        ("0001-01-01T00:00+01:00", None),
        ("9999-12-31T23:00:00-05:00", None),
        ("9999-12-31T23:59:59Z", datetime(9999, 12, 31, 23, 59, 59)),
        ("yesterday", None),
        ("04.11.2026", None),
        ("", None),
        (None, None),
    ],
)
def test_lastmod_is_read_as_w3c_datetime(text: str | None, expected: datetime | None) -> None:
    assert parse_lastmod(text) == expected


def test_a_lastmod_after_the_last_visit_makes_the_page_due() -> None:
    visit = datetime(2026, 11, 4, 12, 0)
    assert lastmod_makes_due("2026-11-04T13:00:00Z", visit)
    assert not lastmod_makes_due("2026-11-04", visit)  # midnight, before the visit
    assert not lastmod_makes_due("soon", visit)
    assert not lastmod_makes_due("2026-11-05", None)  # never visited: not a revisit
    # Read already (as crawldb's side has it): later than the visit, or not.
    assert lastmod_makes_due(visit + timedelta(seconds=1), visit)
    assert not lastmod_makes_due(visit, visit)
    assert not lastmod_makes_due(visit - timedelta(days=1), visit)


@pytest.mark.parametrize(
    ("visited_hours_ago", "scheduled_in_hours", "next_visit_in_hours"),
    [
        (48, 100, 0),  # changed since a visit two days ago: due now
        (48, None, 0),  # stored before revisits existed
        (None, None, 0),
        (2, 100, 22),  # visited two hours ago: a day after that visit, not now
        (2, 5, None),  # a hub due in five hours: its schedule is sooner already
        (48, -1, None),  # due already
    ],
)
def test_a_lastmod_makes_a_page_due_now_but_not_within_a_day_of_its_visit(
    visited_hours_ago: float | None,
    scheduled_in_hours: float | None,
    next_visit_in_hours: float | None,
) -> None:
    def at(hours: float | None) -> datetime | None:
        return None if hours is None else NOW + timedelta(hours=hours)

    visited = None if visited_hours_ago is None else at(-visited_hours_ago)
    got = lastmod_next_visit(NOW, visited, at(scheduled_in_hours), DAY)
    assert got == at(next_visit_in_hours)


@pytest.mark.parametrize(
    ("delay", "share", "budget"),
    [
        (5.0, 0.5, 8640),  # 17 280 fetches a day at 5 s: half of them
        (5.0, 1.0, 17280),
        (10.0, 0.5, 4320),  # a longer Crawl-delay: fewer
        (0.05, 0.5, 864_000),
        (86400.0 * 10, 0.5, 1),  # a delay longer than a day: one still
        (5.0, 0.0, None),  # 0: no cap
        (5.0, -1.0, None),
        (0.0, 0.5, None),  # no delay: nothing to divide a day by
    ],
)
def test_a_hosts_revisit_budget_is_a_share_of_what_its_delay_allows(
    delay: float, share: float, budget: int | None
) -> None:
    assert host_revisit_budget(delay, share) == budget


@pytest.mark.parametrize(
    ("budget", "spent", "wanted", "allowed"),
    [
        (100, 0, 10, 10),
        (100, 95, 10, 5),
        (100, 100, 10, 0),
        (100, 130, 10, 0),  # spent past it (a smaller budget now): none
        (100, -5, 10, 10),  # a negative count is none spent
        (None, 10**9, 10, 10),  # no cap
        (100, 0, 0, 0),
        (None, 0, -3, 0),
    ],
)
def test_what_a_claim_may_take_of_the_days_budget(
    budget: int | None, spent: int, wanted: int, allowed: int
) -> None:
    assert revisits_allowed(budget, spent, wanted) == allowed


def test_the_setting_is_one_of_three_modes() -> None:
    assert [revisit_mode(v) for v in ("due", " ALL ", "off")] == ["due", "all", "off"]
    with pytest.raises(ValueError, match="REVISIT must be one of due, all, off"):
        revisit_mode("sometimes")
