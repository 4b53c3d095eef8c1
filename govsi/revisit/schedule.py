"""When a stored page is due again: its next visit from its own history of changes.

``next_visit(history, changed, visited, ...)`` records one visit (whether the content had
changed since the previous one) in the page's compact history and gives the time of the next
visit, within ``[min_interval, max_interval]`` seconds. The history is a short string kept in
``page.revisit_history``: bounded, whatever the number of visits.

This first version halves the interval after a change and doubles it otherwise (a
placeholder with the final signature; the estimator of a page's change rate from incomplete
observations, Cho & Garcia-Molina, replaces it).
"""

from __future__ import annotations

from datetime import datetime, timedelta

__all__ = ["next_visit"]


def next_visit(
    history: str | None,
    changed: bool,
    visited: datetime,
    previous: datetime | None,
    *,
    min_interval: float,
    max_interval: float,
) -> tuple[datetime, str]:
    """(the next visit, the history with this visit in it). ``previous``: the visit before
    this one (None on a first visit); ``changed``: the content differed from it."""
    last = float(history.rsplit(" ", 1)[-1].split(":")[0]) if history else min_interval
    interval = last / 2 if changed else last * 2
    if previous is None:
        interval = min_interval
    interval = min(max(interval, min_interval), max_interval)
    entry = f"{interval:.0f}:{int(changed)}"
    kept = ([*history.split(" ")][-31:] if history else []) + [entry]
    return visited + timedelta(seconds=interval), " ".join(kept)
