"""When an idle crawl kept open by REVISIT_WAIT wakes for its next due visit (pure).

A page is due at its ``next_visit``, but never sooner than the shortest interval after its
last visit (``govsi.revisit.due.DueRule.due_at``); a feed or sitemap at its ``next_poll``. The
crawl wakes at the earliest such time later than its last look at what is due, if that
comes within the wait; a time already past wakes it at once. A time at or before the last
look was looked at then: whatever is still due of it is not this run's (another worker
holds it, its host was given up on), and waiting for it again would never end.

Times are naive UTC, as crawldb stores them.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta

__all__ = ["next_wake"]


def next_wake(
    now: datetime, due: Iterable[datetime], *, wait: float, looked: datetime
) -> datetime | None:
    """The time to wake for the earliest of ``due`` later than ``looked`` (the last look
    at what is due), or None when none comes within ``wait`` seconds of ``now`` (the
    crawl may end). Never before ``now``."""
    later = [when for when in due if when > looked]
    if not later or wait <= 0:
        return None
    soonest = min(later)
    if soonest > now + timedelta(seconds=wait):
        return None
    return max(soonest, now)
