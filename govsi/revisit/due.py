"""Which stored pages are due for a revisit in a round, which of them are overdue, and what
a sitemap's ``<lastmod>`` says (pure).

``DueRule`` is one round's rule as plain values (crawldb's SQL in ``govsi.store.revisits``
says the same in its WHERE clauses; tests hold the two together):

- ``due`` (the default): a page is due once its ``next_visit`` has come; a page stored
  before revisits existed (``next_visit`` NULL) is due ``min_interval`` after its last
  visit. Never sooner than the shortest interval the schedule gives any page after its
  last visit (``shortest``: a hub's ``hub_min_interval`` when below ``min_interval``),
  whatever ``next_visit`` says (a sitemap's lastmod sets it to now): a hub that earned an
  hour is revisited every hour, and a run resumed within an hour revisits nothing.
- ``all``: every page last visited before the round started is due now.
- ``off``: nothing is ever due.

A due revisit is *overdue* once it has been due for ``overdue_after`` seconds (by its
schedule, in either mode): it then goes out among the host's new pages, in their
breadth-first order, instead of after them, so that a host that keeps finding new pages
never starves it.

Times are naive UTC, as crawldb stores them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Final, Literal, get_args

from govsi.revisit.waiting import page_due_at

__all__ = [
    "REVISIT_MODES",
    "DueRule",
    "RevisitMode",
    "host_revisit_budget",
    "lastmod_makes_due",
    "lastmod_next_visit",
    "parse_lastmod",
    "revisit_mode",
    "revisits_allowed",
]

RevisitMode = Literal["due", "all", "off"]
REVISIT_MODES: Final[tuple[RevisitMode, ...]] = get_args(RevisitMode)
MODE_DUE: Final[RevisitMode] = "due"
MODE_ALL: Final[RevisitMode] = "all"
MODE_OFF: Final[RevisitMode] = "off"
DAY: Final = 24 * 3600.0


def revisit_mode(value: str) -> RevisitMode:
    """The REVISIT setting as a mode; anything else is a configuration error."""
    for mode in REVISIT_MODES:
        if value.strip().lower() == mode:
            return mode
    raise ValueError(f"REVISIT must be one of {', '.join(REVISIT_MODES)}, not {value!r}")


@dataclass(frozen=True)
class DueRule:
    """One round's rule. ``now``: when the question is asked; ``round_start``: when the
    round began (``all`` takes what was visited before it)."""

    mode: RevisitMode
    now: datetime
    round_start: datetime
    min_interval: float
    overdue_after: float
    # REVISIT_HUB_MIN_INTERVAL: a hub's shortest interval (None: ``min_interval``).
    hub_min_interval: float | None = None

    @property
    def shortest(self) -> float:
        """The shortest interval the schedule gives any page (a hub's, when lower)."""
        if self.hub_min_interval is None:
            return self.min_interval
        return min(self.min_interval, self.hub_min_interval)

    @property
    def floor(self) -> datetime:
        """A page visited after this is not due (``due``): the shortest interval ago."""
        return self.now - timedelta(seconds=self.shortest)

    @property
    def picture_floor(self) -> datetime:
        """A picture downloaded after this is not due: ``min_interval`` (a picture is no
        hub, whatever the page showing it is)."""
        return self.now - timedelta(seconds=self.min_interval)

    @property
    def overdue_cut(self) -> datetime:
        """A page whose scheduled visit is at or before this is overdue."""
        return self.now - timedelta(seconds=self.overdue_after)

    def scheduled(self, next_visit: datetime | None, accessed: datetime | None) -> datetime:
        """When the page's schedule makes it due (``next_visit``, else the minimum interval
        after its last visit; a page never visited is due at once)."""
        if next_visit is not None:
            return next_visit
        if accessed is None:
            return datetime.min
        return accessed + timedelta(seconds=self.min_interval)

    def is_due(self, next_visit: datetime | None, accessed: datetime | None) -> bool:
        if self.mode == MODE_OFF:
            return False
        if self.mode == MODE_ALL:
            return accessed is None or accessed < self.round_start
        # The wait's due time (one statement of it), at or before now.
        when = page_due_at(next_visit, accessed, interval=self.min_interval, shortest=self.shortest)
        return when <= self.now

    def is_overdue(self, next_visit: datetime | None, accessed: datetime | None) -> bool:
        return self.is_due(next_visit, accessed) and (
            self.scheduled(next_visit, accessed) <= self.overdue_cut
        )


def host_revisit_budget(delay: float, share: float) -> int | None:
    """The revisits a host may take in a day: ``share`` (REVISIT_HOST_SHARE) of the fetches
    its delay allows (86 400 / ``delay``: 17 280 at 5 s), at least one. None: no cap (a
    share of 0 or less, or no delay to divide a day by)."""
    if share <= 0 or delay <= 0:
        return None
    return max(1, int(share * DAY / delay))


def revisits_allowed(budget: int | None, spent: int, wanted: int) -> int:
    """How many of ``wanted`` revisits a host may still take today, ``spent`` taken
    already (by every worker) of its ``budget`` (None: no cap)."""
    if budget is None:
        return max(0, wanted)
    return max(0, min(wanted, budget - max(0, spent)))


# W3C Datetime, as sitemaps.org asks: YYYY, YYYY-MM, YYYY-MM-DD, or a date and a time with
# minutes, seconds and fractions optional, and a zone (Z or +hh:mm) when there is a time.
_W3C = re.compile(
    r"(\d{4})(?:-(\d{2})(?:-(\d{2})"
    r"(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?\s*(Z|z|[+-]\d{2}:?\d{2})?)?)?)?"
)


def parse_lastmod(text: str | None) -> datetime | None:
    """A sitemap ``<lastmod>`` as naive UTC; None when absent or not a W3C date. A time
    without a zone is read as UTC (the protocol requires one; servers forget it)."""
    if not text:
        return None
    m = _W3C.fullmatch(text.strip())
    if m is None:
        return None
    year, month, day, hour, minute, second, zone = m.groups()
    try:
        when = datetime(
            int(year), int(month or 1), int(day or 1),
            int(hour or 0), int(minute or 0), int(second or 0), tzinfo=UTC,
        )  # fmt: skip
        if zone and zone not in ("Z", "z"):
            sign = -1 if zone[0] == "-" else 1
            digits = zone[1:].replace(":", "")
            when -= sign * timedelta(hours=int(digits[:2]), minutes=int(digits[2:]))
    except (ValueError, OverflowError):  # 2026-02-30; a zone past year 1 or 9999
        return None
    return when.replace(tzinfo=None)


def lastmod_makes_due(lastmod: str | None, last_visit: datetime | None) -> bool:
    """A sitemap's ``<lastmod>`` later than the page's last visit: it changed since, so
    it is due at once (still never sooner than the minimum interval: ``DueRule``). A
    lastmod in the future is a clock or a lie, and counts as now."""
    when = parse_lastmod(lastmod)
    return when is not None and last_visit is not None and when > last_visit


def lastmod_next_visit(
    now: datetime, accessed: datetime | None, next_visit: datetime | None, min_interval: float
) -> datetime | None:
    """The next visit a sitemap's lastmod later than a stored page's last visit gives it:
    now, yet no sooner than ``min_interval`` after that visit (a site whose lastmod is
    always "now" costs a visit a day, not one a run; a hub's own schedule may still be
    sooner). None when its schedule has it that soon already."""
    when = now if accessed is None else max(now, accessed + timedelta(seconds=min_interval))
    if next_visit is not None and next_visit <= when:
        return None
    return when
