"""Tests for govsi.revisit.due: which stored pages a round takes, which are overdue, and a
sitemap's lastmod, as tables of cases (crawldb's SQL is held to the same rule in
tests/test_store_revisits.py)."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from govsi.revisit.due import DueRule, RevisitMode, lastmod_makes_due, parse_lastmod, revisit_mode

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


def test_the_setting_is_one_of_three_modes() -> None:
    assert [revisit_mode(v) for v in ("due", " ALL ", "off")] == ["due", "all", "off"]
    with pytest.raises(ValueError, match="REVISIT must be one of due, all, off"):
        revisit_mode("sometimes")
