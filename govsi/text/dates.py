"""A document's own date as every reader of crawldb can take it, or none (pure).

Documents' metadata holds whatever their software wrote: zero timestamps (1601-01-01 of
Windows, 1970-01-01 of Unix, 1980-01-01 of DOS), 9999-12-31 for "never", a clock years
ahead. Such a date is dropped, not clamped: a date moved to the window's edge would be as
false, and where a date is needed (search's results and filters) the page's fetch time
stands in for an unknown one. The window, from ``EARLIEST`` (no format the crawl reads
existed before) to a day past now (clocks and zones a little ahead), lies well inside what
crawldb (SQLite text, PostgreSQL ``timestamp``), Tantivy (1677 to 2262) and the report take.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

__all__ = ["EARLIEST", "FUTURE_SLACK", "plausible_date"]

EARLIEST = datetime(1990, 1, 1, tzinfo=UTC)
FUTURE_SLACK = timedelta(days=1)


def plausible_date(value: datetime | None, now: datetime) -> datetime | None:
    """``value`` in UTC (aware) when it lies in [``EARLIEST``, ``now`` + ``FUTURE_SLACK``],
    else None. A naive ``value`` or ``now`` is taken as UTC (crawldb keeps naive UTC)."""
    if value is None:
        return None
    try:
        when = _utc(value)
        latest = _utc(now) + FUTURE_SLACK
    except (OverflowError, ValueError):  # an offset past year 1 or 9999
        return None
    return when if EARLIEST <= when <= latest else None


def _utc(value: datetime) -> datetime:
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value.astimezone(UTC)
