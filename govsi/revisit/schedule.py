"""When a stored page is due again: its next visit from its own history of changes.

``next_visit(history, changed, visited, previous, ...)`` records one visit (whether the
content had changed since the previous one) in the page's history and gives the time of the
next visit. The history (``page.revisit_history``) is the last ``HISTORY_LENGTH`` intervals,
each as whole seconds and ``+`` (changed) or ``-``: ``"86400- 172800+"``, at most 383
characters; an entry it cannot read (an older format) is ignored.

The interval is ``optimal_interval(change_rate(history), target)`` (``govsi/revisit/rate.py``:
Cho & Garcia-Molina's estimator and their freshness-optimal interval) within
``[min_interval, max_interval]``. With no budget to fit, ``target`` defaults to
``min_interval / PEAK_RATIO``: the pages that gain most from visits (about 1.8 changes per
``min_interval``) get ``min_interval``; slower ones longer intervals, about
``sqrt(2 target / rate)``; pages that never change, or change more than ~3.4 times per
``min_interval`` (a visit would almost never find them fresh), ``max_interval``. Between
those fast ones and the peak, where the optimum lengthens intervals again, the peak's
interval is kept (see ``_interval``). A first visit (``previous`` None) knows nothing yet:
``min_interval``.

``due_by_lastmod(lastmod, last_visit)``: a sitemap's ``<lastmod>`` later than the last visit
makes the page due at once (``parse_lastmod`` reads one); ``<changefreq>`` is ignored, as
Google ignores it. Datetimes are naive UTC, as crawldb stores them.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Final

from govsi.revisit.rate import PEAK_LOAD, PEAK_RATIO, change_rate, optimal_interval

__all__ = [
    "HISTORY_LENGTH",
    "due_by_lastmod",
    "format_history",
    "next_visit",
    "parse_history",
    "parse_lastmod",
]

# Visits the rate is learnt from: enough for a rate within ~25 %, few enough that a page
# that changes its pace is followed within a few months.
HISTORY_LENGTH: Final = 32
_LONGEST: Final = 10**10 - 1  # seconds, 317 years: an entry's ten digits at most
_ENTRY = re.compile(r"(?<!\S)([0-9]{1,10})([+-])(?!\S)")
# W3C Datetime, the forms sitemaps.org allows: a date, or a date and time (minutes at
# least) with a zone (Z or +hh:mm); a time without a zone is read as UTC.
_LASTMOD = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})"
    r"(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?"
)


def parse_history(history: str | None) -> list[tuple[float, bool]]:
    """The ``(interval seconds, changed)`` observations a history string holds, oldest
    first; entries it cannot read are left out."""
    return [(float(digits), sign == "+") for digits, sign in _entries(history)]


def format_history(observations: list[tuple[float, bool]]) -> str:
    """The history string of the last ``HISTORY_LENGTH`` observations."""
    kept = observations[-HISTORY_LENGTH:]
    return " ".join(f"{min(round(t), _LONGEST)}{'+' if c else '-'}" for t, c in kept)


def _entries(history: str | None) -> list[tuple[str, str]]:
    """The readable entries of the last ``HISTORY_LENGTH``, as (digits, sign)."""
    if not history:
        return []
    return _ENTRY.findall(" ".join(history.split()[-HISTORY_LENGTH:]))


def next_visit(
    history: str | None,
    changed: bool,
    visited: datetime,
    previous: datetime | None,
    *,
    min_interval: float,
    max_interval: float,
    target: float | None = None,
) -> tuple[datetime, str]:
    """(the next visit, the history with this visit in it). ``previous``: the visit before
    this one (None on a first visit); ``changed``: the content differed from it.
    ``target``: the fetch's price in seconds of freshness (``rate.optimal_interval``);
    default ``min_interval / PEAK_RATIO``."""
    entries = _entries(history)
    if previous is not None:
        elapsed = round((visited - previous).total_seconds())
        if elapsed > 0:  # a zero interval (a clock step back, a retry) tells nothing
            entries = [
                *entries[1 - HISTORY_LENGTH :],
                (str(min(elapsed, _LONGEST)), "+-"[not changed]),
            ]
    if previous is None or not entries:
        interval = min_interval
    else:
        price = min_interval / PEAK_RATIO if target is None else target
        rate = change_rate((float(digits), sign == "+") for digits, sign in entries)
        interval = _interval(rate, price)
    interval = min(max(interval, min_interval), max_interval)
    return visited + timedelta(seconds=interval), " ".join(d + s for d, s in entries)


def _interval(rate: float, price: float) -> float:
    load = rate * price
    if PEAK_LOAD < load < 1:
        # Past the peak the optimum lengthens the interval again, but there the estimate
        # rests on visits that mostly found a change, which only bound the rate from below:
        # at longer intervals they all would, and the page would settle there whatever its
        # pace. The peak's interval keeps measuring it until the estimate passes 1 / price.
        return PEAK_RATIO * price
    return optimal_interval(rate, price)


def parse_lastmod(text: str | None) -> datetime | None:
    """A sitemap ``<lastmod>`` (W3C Datetime) as naive UTC; None when absent or unreadable.
    A bare date is its midnight UTC: a change later that day is not taken as news."""
    if not text:
        return None
    m = _LASTMOD.fullmatch(text.strip())
    if not m:
        return None
    year, month, day, hour, minute, second, zone = m.groups()
    try:
        when = datetime(
            int(year), int(month), int(day), int(hour or 0), int(minute or 0), int(second or 0)
        )
    except ValueError:
        return None
    if zone and zone != "Z":
        digits = zone[1:].replace(":", "")
        offset = timedelta(hours=int(digits[:2]), minutes=int(digits[2:]))
        try:
            when = when - offset if zone[0] == "+" else when + offset
        except OverflowError:  # year 1 or 9999
            return None
    return when


def due_by_lastmod(lastmod: datetime | None, last_visit: datetime | None) -> bool:
    """True when a sitemap says the page changed after its last visit (aware datetimes are
    compared in UTC). No lastmod, or a page never visited, is no news to a revisit."""
    if lastmod is None or last_visit is None:
        return False
    return _naive_utc(lastmod) > _naive_utc(last_visit)


def _naive_utc(when: datetime) -> datetime:
    if when.tzinfo is None:
        return when
    return when.astimezone(UTC).replace(tzinfo=None)
