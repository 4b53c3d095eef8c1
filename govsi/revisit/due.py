"""Which stored pages are due for a revisit in a round, which of them are overdue, and what
a sitemap's ``<lastmod>`` says (pure).

``DueRule`` is one round's rule as plain values, written once as terms
(``govsi.revisit.terms``): Python evaluates them here, crawldb renders them as the WHERE
clauses of its claims (``govsi.store.due``):

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
from functools import cached_property
from typing import Final, Literal, get_args

from govsi.revisit.terms import FALSE, And, Cmp, Not, Null, Or, Outer, Showing, Term, holds

__all__ = [
    "REVISIT_MODES",
    "STORED",
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


# Stored rows: fetched once at least (not a FRONTIER row).
STORED: Final[Term] = And((Not(Null("page_type_code")), Cmp("page_type_code", "!=", "FRONTIER")))
_NEXT: Final = "next_visit"
_ACCESSED: Final = "accessed_time"


@dataclass(frozen=True)
class DueRule:
    """One round's rule. ``now``: when the question is asked; ``round_start``: when the
    round began (``all`` takes what was visited before it).

    Its terms (``govsi.revisit.terms``) are the rule itself: ``is_due`` and ``is_overdue``
    evaluate them on one page's times, crawldb's claims render them as SQL."""

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

    # -- the terms ------------------------------------------------------------------------
    def scheduled_by(self, when: datetime) -> Term:
        """The page's schedule makes it due by ``when``: its ``next_visit``, else the
        minimum interval after its last visit; a page with neither at once."""
        return Or((
            Cmp(_NEXT, "<=", when),
            And((Null(_NEXT), Cmp(_ACCESSED, "<=", when - timedelta(seconds=self.min_interval)))),
            And((Null(_NEXT), Null(_ACCESSED))),
        ))  # fmt: skip

    def due(self) -> Term:
        """A page's times make it due now (whatever its row's type or claim): ``due`` by
        its schedule and never sooner than the shortest interval after its last visit;
        ``all`` when last visited before the round; ``off`` never."""
        if self.mode == MODE_OFF:
            return FALSE
        if self.mode == MODE_ALL:
            return Or((Null(_ACCESSED), Cmp(_ACCESSED, "<", self.round_start)))
        floor = Or((Null(_ACCESSED), Cmp(_ACCESSED, "<=", self.floor)))
        return And((floor, self.scheduled_by(self.now)))

    def overdue(self) -> Term:
        """Due, and due by its schedule for ``overdue_after`` already."""
        return And((self.due(), self.scheduled_by(self.overdue_cut)))

    def done(self) -> Term:
        """Revisited in this round: its claim was given back after the round began."""
        return And((
            Null("revisit_claim"),
            Not(Null("revisit_claimed_at")),
            Cmp("revisit_claimed_at", ">=", self.round_start),
        ))  # fmt: skip

    def page(self, overdue: bool = False) -> Term:
        """A stored page the round revisits: due (``overdue``: overdue), and not done in
        it."""
        return And((STORED, self.overdue() if overdue else self.due(), Not(self.done())))

    def waiting(self) -> Term:
        """A stored page due (``now``: the horizon waited for) that nobody holds."""
        return And((STORED, Null("revisit_claim"), self.due()))

    def picture(self) -> Term:
        """A picture the round downloads again (not done in it): in ``all``, downloaded
        before the round; else due with the pages that show it, once one was visited since
        its download or while one is due in this round (claimed or not, so that a
        round's pictures are found in it before their pages' visits are written), and
        its download ``min_interval`` old."""
        if self.mode == MODE_OFF:
            return FALSE
        downloaded = Not(Null(_ACCESSED))
        if self.mode == MODE_ALL:
            before = Cmp(_ACCESSED, "<", self.round_start)
            return And((downloaded, before, Not(self.done())))
        shown = Showing(Or((Cmp(_ACCESSED, ">", Outer(_ACCESSED)), self.page())))
        old = Cmp(_ACCESSED, "<=", self.picture_floor)
        return And((downloaded, old, shown, Not(self.done())))

    # -- one page's times -----------------------------------------------------------------
    # The terms a page's times are checked against, built once per rule: a claim checks
    # every row it takes.
    @cached_property
    def _due_term(self) -> Term:
        return self.due()

    @cached_property
    def _overdue_term(self) -> Term:
        return self.overdue()

    def is_due(self, next_visit: datetime | None, accessed: datetime | None) -> bool:
        return holds(self._due_term, {_NEXT: next_visit, _ACCESSED: accessed}) is True

    def is_overdue(self, next_visit: datetime | None, accessed: datetime | None) -> bool:
        return holds(self._overdue_term, {_NEXT: next_visit, _ACCESSED: accessed}) is True

    def due_at(self, next_visit: datetime | None, accessed: datetime | None) -> datetime:
        """When the page falls due (``due``): the earliest ``now`` at which ``is_due``
        holds. Its next visit (without one, ``min_interval`` after its last visit), not
        sooner than ``shortest`` after its last visit; a page with neither at once."""
        if accessed is None:
            return next_visit or datetime.min
        if next_visit is None:
            return accessed + timedelta(seconds=self.min_interval)
        return max(next_visit, accessed + timedelta(seconds=self.shortest))


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


def lastmod_makes_due(lastmod: str | datetime | None, last_visit: datetime | None) -> bool:
    """A sitemap's ``<lastmod>`` (as written, or read: ``parse_lastmod``) later than the
    page's last visit: it changed since, so it is due at once (still never sooner than the
    minimum interval: ``lastmod_next_visit``). A lastmod in the future is a clock or a lie,
    and counts as now."""
    when = lastmod if isinstance(lastmod, datetime) else parse_lastmod(lastmod)
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
