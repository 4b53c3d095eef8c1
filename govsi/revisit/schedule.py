"""When a stored page is due again: its next visit from its own history of changes and of
the new links its visits found.

``next_visit(history, changed, visited, previous, ..., new_links=n)`` records one visit
(whether the content had changed since the previous one, how many links it found that
crawldb did not know) in the page's history and gives the time of the next visit. The
history (``page.revisit_history``) is the last ``HISTORY_LENGTH`` intervals, each as whole
seconds, ``+`` (changed) or ``-``, and the new links found when that many: ``"86400-
172800+3"``; an entry it cannot read (an older format) is ignored.

The interval is ``age_interval(change_rate(history), links_rate(history), price)``
(``govsi/revisit/age.py``: the interval that makes age and discovery latency least per
fetch; ``rate.py``: Cho & Garcia-Molina's change-rate estimator) within ``[min_interval,
max_interval]``; a hub (a page whose history found new links) may go down to
``hub_min_interval``. It shortens as a page changes faster or yields more links: news
lists and indexes are visited most, pages that never change drift to ``max_interval``.
``price`` (seconds squared) defaults to the one at which a page changing about once per
``min_interval`` gets ``min_interval`` (``default_price``); a larger one spends fewer
fetches: a host whose pages ask for more visits than its revisit budget is given a larger
one, fitted once a day (``age.fit_price``, ``govsi.store.hostbudget``). A first visit
(``previous`` None) knows nothing yet: ``min_interval``.

A sitemap's ``<lastmod>`` later than the last visit makes the page due at once: the due
rule's (``govsi.revisit.due.lastmod_makes_due``); ``<changefreq>`` is ignored, as Google
ignores it. Datetimes are naive UTC, as crawldb stores them.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Final

from govsi.revisit.age import PRICE_AT_ONE, age_interval, links_rate
from govsi.revisit.rate import PRIOR_CHANGES, change_rate

__all__ = [
    "HISTORY_LENGTH",
    "default_price",
    "format_history",
    "next_visit",
    "parse_history",
    "parse_links",
]

# Visits the rate is learnt from: enough for a rate within ~25 %, few enough that a page
# that changes its pace is followed within a few months.
HISTORY_LENGTH: Final = 32
_LONGEST: Final = 10**10 - 1  # seconds, 317 years: an entry's ten digits at most
# The change rate's prior (``rate.change_rate``) for a page never seen changing, whose rate
# the prior alone sets. The age-optimal interval goes as rate^(-1/3), so the estimator's own
# prior (a quarter of a change) keeps such pages near 9 x min_interval at the default price;
# a tenth lets them drift further (to 15 x at the default price, to max_interval at a price
# a budget sets), and measured best (bench/README.md, "How old are the copies"): 0.02
# starves yearly pages, which look the same until they change.
QUIET_PRIOR: Final = 0.1
_MOST_LINKS: Final = 999_999  # an entry's new links: six digits at most
_ENTRY = re.compile(r"(?<!\S)([0-9]{1,10})([+-])([0-9]{0,6})(?!\S)")


def parse_history(history: str | None) -> list[tuple[float, bool]]:
    """The ``(interval seconds, changed)`` observations a history string holds, oldest
    first; entries it cannot read are left out."""
    return [(float(digits), sign == "+") for digits, sign, _ in _entries(history)]


def parse_links(history: str | None) -> list[tuple[float, int]]:
    """The ``(interval seconds, new links found)`` observations a history holds, oldest
    first (an entry without a count found none)."""
    return [(float(digits), int(links or 0)) for digits, _, links in _entries(history)]


def format_history(
    observations: list[tuple[float, bool]], links: list[int] | None = None
) -> str:
    """The history string of the last ``HISTORY_LENGTH`` observations (``links``: the new
    links each found, one per observation; none: 0 each)."""
    found = links if links is not None else [0] * len(observations)
    kept = list(zip(observations, found, strict=True))[-HISTORY_LENGTH:]
    return " ".join(_entry(t, c, n) for (t, c), n in kept)


def _entry(interval: float, changed: bool, links: int) -> str:
    count = str(min(links, _MOST_LINKS)) if links > 0 else ""
    return f"{min(round(interval), _LONGEST)}{'+' if changed else '-'}{count}"


def _entries(history: str | None) -> list[tuple[str, str, str]]:
    """The readable entries of the last ``HISTORY_LENGTH``, as (digits, sign, links)."""
    if not history:
        return []
    return _ENTRY.findall(" ".join(history.split()[-HISTORY_LENGTH:]))


def default_price(min_interval: float) -> float:
    """The fetch price (seconds squared) at which a page changing once per ``min_interval``
    gets ``min_interval``: the schedule's own, and the least a host's budget fits."""
    return PRICE_AT_ONE * min_interval**2


def next_visit(
    history: str | None,
    changed: bool,
    visited: datetime,
    previous: datetime | None,
    *,
    min_interval: float,
    max_interval: float,
    hub_min_interval: float | None = None,
    new_links: int = 0,
    price: float | None = None,
) -> tuple[datetime, str]:
    """(the next visit, the history with this visit in it). ``previous``: the visit before
    this one (None on a first visit); ``changed``: the content differed from it;
    ``new_links``: links it found that were not known. ``hub_min_interval``: the shortest
    interval of a hub (default ``min_interval``). ``price``: a fetch's price in seconds
    squared (``age.age_interval``); default ``default_price(min_interval)``."""
    entries = _entries(history)
    if previous is not None:
        elapsed = round((visited - previous).total_seconds())
        if elapsed > 0:  # a zero interval (a clock step back, a retry) tells nothing
            entry = _entry(elapsed, changed, new_links)
            entries = [*entries[1 - HISTORY_LENGTH :], *_ENTRY.findall(entry)]
    text = " ".join(d + s + n for d, s, n in entries)
    if previous is None or not entries:
        return visited + timedelta(seconds=min_interval), text
    cost = default_price(min_interval) if price is None else price
    observed = parse_history(text)
    quiet = not any(changed for _, changed in observed)
    rate = change_rate(observed, prior_changes=QUIET_PRIOR if quiet else PRIOR_CHANGES)
    links = links_rate(parse_links(text))
    shortest = min_interval
    if links > 0 and hub_min_interval is not None:
        shortest = min(hub_min_interval, min_interval)
    interval = min(max(age_interval(rate, links, cost), shortest), max_interval)
    return visited + timedelta(seconds=interval), text

