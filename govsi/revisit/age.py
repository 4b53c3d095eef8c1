"""The interval that keeps a crawl's copies youngest and its new pages found soonest.

Pure math, no dates: times are seconds, rates per second, changes and new links Poisson.

A page changing ``rate`` times a second and visited every ``I`` seconds has a mean age
(time since the live page first differed from the copy; 0 while fresh) of
``A(I) = I/2 - 1/rate + (1 - exp(-rate I)) / (rate^2 I)``. A hub whose visits find
``links_rate`` new links a second leaves each new page unknown from its creation to the
next visit: counted like a stale copy's age, that adds ``links_rate I^2 / 6``. Spending a
fixed number of fetches so that the sum over pages is least (Lagrange: ``d cost / dI =
price / I^2``) gives each page the ``I`` that solves

    I^2 A'(I) + links_rate I^3 / 3 = price,   where I^2 A'(I) = g(rate I) / rate^2,
    g(x) = x^2/2 - 1 + (1 + x) exp(-x)

(``price``, seconds squared: what a fetch costs; a larger one spends fewer fetches). The
left side grows with ``I``, so the interval always shortens as a page changes faster or
yields more links: fast pages and hubs are never abandoned (a page changing far faster
than it is visited gets about ``sqrt(2 price)``), slow ones get about ``(3 price /
rate)^(1/3)``, and a page that neither changes nor yields links ``math.inf`` (the caller's
longest interval). Unlike the freshness optimum (``rate.optimal_interval``), which gives
the fastest pages the longest intervals.

``fit_price(price, asked, budget, spent, floor)``: the price for the next period (a day)
from what the last one showed: the visits a period the pages' intervals ask for (the sum
of ``1 / interval``), the budget, and the visits made; never below ``floor``. It aims
at asking ``OVERASK`` times the budget, not exactly it: due times come in bursts, and a
queue asked for exactly its budget runs dry between them and leaves fetches unspent.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Final

__all__ = ["OVERASK", "PRICE_AT_ONE", "age_interval", "fit_price", "links_rate", "price_for"]

# g(1): the price at which a page changing once per interval I gets I (I = 1 unit).
PRICE_AT_ONE: Final = 0.5 - 1 + 2 / math.e
# What the fitted price asks for, per fetch of the budget: measured best in
# bench/freshness.py (bench/README.md, "How old are the copies").
OVERASK: Final = 1.06
# How hard a period's excess corrects the price (intervals go as price^(1/3..1/2)), and its
# largest step: pages keep the interval an older price gave them until their next visit,
# so a larger step makes the schedule swing.
_GAIN: Final = 1.5
_STEP: Final = 0.1
_LONGEST: Final = 1e15  # seconds, 30 million years: past it, never
_SERIES_BELOW: Final = 1e-2  # g's closed form cancels below this; its series is exact there


def _marginal(interval: float, rate: float, links: float) -> float:
    """``I^2 d cost / dI`` at ``interval``: ``g(rate I) / rate^2 + links I^3 / 3``, where
    ``g(x) = x^2/2 - 1 + (1 + x) exp(-x)`` grows from 0 like ``x^3/3``."""
    x = rate * interval
    if x < _SERIES_BELOW:  # g's closed form cancels there; g(x) / x^3 by its series
        age = rate * interval**3 * (1 / 3 - x / 8 + x * x / 30 - x**3 / 144)
    else:
        age = (x * x / 2 - 1 + (1 + x) * math.exp(-x)) / (rate * rate)
    return max(age, 0.0) + links * interval**3 / 3


def age_interval(rate: float, links: float, price: float) -> float:
    """Seconds between visits that make age and discovery latency least per fetch, for a
    page changing ``rate`` times a second whose visits find ``links`` new links a second,
    at a fetch price of ``price`` seconds squared; ``math.inf`` when it neither changes nor
    yields links, 0.0 when fetches cost nothing."""
    if rate <= 0 and links <= 0:
        return math.inf
    if price <= 0:
        return 0.0
    # Bisection on log I between bounds that hold the root: the marginal grows with I at
    # least as fast as I^2/2 (fast pages) or I^3 rate/3 (slow ones) and links I^3 / 3.
    lo, hi = 1e-9, 1.0
    while _marginal(hi, rate, links) < price:
        hi *= 16
        if hi > _LONGEST:
            return math.inf
    while _marginal(lo, rate, links) >= price:
        lo /= 16
    for _ in range(60):
        mid = math.sqrt(lo * hi)
        lo, hi = (mid, hi) if _marginal(mid, rate, links) < price else (lo, mid)
        if hi <= lo * (1 + 1e-9):
            break
    return math.sqrt(lo * hi)


def price_for(interval: float, rate: float, links: float = 0.0) -> float:
    """The price at which a page of ``rate`` and ``links`` gets ``interval``: the inverse
    of ``age_interval``."""
    return _marginal(interval, rate, links)


def links_rate(observations: Iterable[tuple[float, int]]) -> float:
    """New links a second from ``(interval seconds, new links found at its end)``; 0.0 with
    no usable observation. Intervals longer than a hub keeps its links undercount them:
    the schedule then shortens them, and learns the rate back."""
    found = 0
    time = 0.0
    for t, n in observations:
        if t > 0:
            time += t
            found += max(n, 0)
    return found / time if time > 0 else 0.0


def fit_price(
    price: float, asked: float, budget: float, spent: float, floor: float = 0.0
) -> float:
    """The price for the next period: ``price`` raised when the pages' intervals ask for more
    than ``OVERASK`` times ``budget`` visits a period (``asked``), lowered when they ask for
    less or fewer than 99 % of ``budget`` were ``spent``; by at most a tenth a period, and
    never below ``floor`` (a budget caps the visits, it does not make pages earn more).
    ``price`` unchanged when there is no budget (``budget`` <= 0)."""
    if budget <= 0:
        return price
    ratio = asked / (OVERASK * budget)
    if spent < 0.99 * budget:
        ratio = min(ratio, spent / budget)
    step = min(max(math.pow(max(ratio, 0.0), _GAIN), 1 - _STEP), 1 + _STEP)
    return max(price * step, floor)
