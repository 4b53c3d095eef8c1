"""The last round's start for the report (``govsi.store.rounds``: ``round_started``): a
table of the rule, and the ``crawl_meta`` row as runs mark it, on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from sqlalchemy import Engine

from govsi.store.rounds import mark_round, round_started
from testkit.crawldb import q

DAY = 24 * 3600.0
T = datetime(2026, 11, 22, 12, 0)
H = timedelta(hours=1)


@pytest.mark.parametrize(
    ("existing", "start", "now", "expected"),
    [
        (None, T, T, T),  # the first run with revisits starts the first round
        (T - 2 * H, T, T, T - 2 * H),  # resumed the same day: the same round
        (T - 5 * H, T, T + 5 * H, T - 5 * H),  # ... start is now or earlier
        (T - 25 * H, T, T, T),  # more than a day later: a new round
        (T - 24 * H, T, T, T),  # a day to the second: new
        # REVISIT=all: the round it joined, when that started earlier than the last mark.
        (T - 2 * H, T - 3 * H, T, T - 3 * H),
        (T - 30 * H, T - 30 * H, T, T - 30 * H),  # an all round resumed after a day
        (T - 30 * H, T - 40 * H, T, T - 40 * H),
        # A mark from a worker whose clock runs ahead: this one's start is the earlier.
        (T + H, T, T, T),
    ],
)
def test_when_the_last_round_started(
    existing: datetime | None, start: datetime, now: datetime, expected: datetime
) -> None:
    assert round_started(existing, start, now, DAY) == expected


def marked(engine: Engine) -> list[str]:
    return [v for (v,) in q(engine, "SELECT value FROM crawl_meta WHERE key = 'round_started'")]


def mark(engine: Engine, start: datetime, now: datetime | None = None) -> datetime:
    with engine.begin() as conn:
        return mark_round(conn, start, now or start, DAY)


def test_runs_mark_the_round_they_belong_to(engine: Engine) -> None:
    assert mark(engine, T) == T
    # As SQLite stores timestamps: the value compares in SQL as it is.
    assert marked(engine) == ["2026-11-22 12:00:00.000000"]
    assert mark(engine, T + 3 * H) == T and marked(engine) == ["2026-11-22 12:00:00.000000"]
    later = T + timedelta(days=2)
    assert mark(engine, later) == later and marked(engine) == ["2026-11-24 12:00:00.000000"]
    # An unreadable value is replaced.
    with engine.begin() as conn:
        conn.exec_driver_sql("UPDATE crawl_meta SET value = 'x' WHERE key = 'round_started'")
    assert mark(engine, later + H) == later + H
