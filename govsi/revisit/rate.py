"""A page's change rate from what visits see, and the interval that keeps it freshest.

Pure math, no dates: times are seconds, rates changes per second, changes a Poisson process.

``change_rate(observations)``: a visit only tells whether the page changed at least once
since the visit before, so an observation is ``(interval, changed)``. The rate is Cho &
Garcia-Molina's maximum-likelihood estimator for irregular intervals ("Estimating frequency
of change", 2003), the root of ``sum_changed t / (exp(r t) - 1) = sum_unchanged t``, with
a weak prior that keeps it finite and positive: half an unchanged interval as long as the
shortest one observed (their bias correction: for regular intervals the estimate is
exactly their ``-log((n - X + 0.5) / (n + 0.5)) / I``), and ``PRIOR_CHANGES`` of a change
(a Gamma prior's shape), so that a page never seen changing gets ``~0.25 / observed time``.

``optimal_interval(rate, target)``: the interval that maximizes the freshness a fixed
number of fetches buys (Cho & Garcia-Molina, "Effective page refresh policies for web
crawlers", 2003): the Lagrange condition ``1 - (1 + x) exp(-x) = rate * target`` for
``x = rate * interval``. It is not proportional to the rate: slow pages get about
``sqrt(2 target / rate)``, the shortest interval (``PEAK_RATIO * target``) goes to pages
changing about 1.8 times per interval, and a page changing ``1 / target`` or more often
is not worth a visit (``math.inf``: the caller's longest interval). ``target`` (seconds)
is the price of a fetch in freshness: a larger one spends fewer fetches. The schedule no
longer uses it (``age.age_interval``: it gave the fastest pages the longest intervals); it
stays as the reference of ``bench/freshness.py``'s freshness goal.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Final

__all__ = ["PEAK_LOAD", "PEAK_RATIO", "PRIOR_CHANGES", "change_rate", "optimal_interval"]

# The weak prior's changes: enough to keep a never-changed page's rate above 0 (so its
# interval grows with its quiet time), small beside a single observed change.
PRIOR_CHANGES: Final = 0.25
# min over x of x / (1 - (1 + x) exp(-x)), at x = 1.7933 (where exp(x) = 1 + x + x^2): the
# shortest optimal interval, in units of target; it goes to pages with rate * target =
# PEAK_LOAD. Faster pages get longer intervals again, and none from rate * target = 1.
PEAK_RATIO: Final = 3.3509
PEAK_LOAD: Final = 0.53516
_EXP_MAX: Final = 700.0  # exp() beyond this overflows a float; t / expm1 is then 0


def change_rate(
    observations: Iterable[tuple[float, bool]], *, prior_changes: float = PRIOR_CHANGES
) -> float:
    """Changes per second estimated from ``(interval seconds, changed)`` observations; 0.0
    with no usable observation (intervals <= 0 tell nothing and are skipped)."""
    changed: list[float] = []
    quiet = 0.0
    shortest = math.inf
    for t, c in observations:
        if t <= 0:
            continue
        shortest = min(shortest, t)
        if c:
            changed.append(t)
        else:
            quiet += t
    if shortest == math.inf:
        return 0.0
    # Unchanged time on the right-hand side, the prior's half interval included.
    rhs = quiet + 0.5 * shortest
    if not changed and prior_changes <= 0:
        return 0.0
    # log(left-hand side) is a log-sum-exp of convex decreasing functions of r, so convex
    # and decreasing: Newton's method on it, started left of the root, climbs to the root
    # without overshooting, in a few steps whether the terms behave as 1/r (slow pages) or
    # as exp(-r t) (fast ones). 1/(e^x - 1) >= 1/x - 1/2 gives the start.
    goal = math.log(rhs)
    r = (len(changed) + prior_changes) / (0.5 * sum(changed) + rhs)
    for _ in range(100):
        lhs = prior_changes / r
        slope = -prior_changes / (r * r)
        for t in changed:
            x = r * t
            if x < _EXP_MAX:
                em1 = math.expm1(x)
                term = t / em1
                lhs += term
                slope -= term * t * (1.0 + 1.0 / em1)
        step = (math.log(lhs) - goal) * lhs / slope
        r -= step
        if -step <= 1e-10 * r:
            break
    return r


def optimal_interval(rate: float, target: float) -> float:
    """Seconds between visits that maximize freshness per fetch for a page changing ``rate``
    times a second, at a fetch price of ``target`` seconds; ``math.inf`` for a page that
    never changes or changes too often to be worth visiting, 0.0 when fetches cost nothing."""
    y = rate * target
    if rate <= 0 or y >= 1:
        return math.inf
    if y < 1e-9:  # 1 - (1 + x) exp(-x) = x^2/2 - x^3/3 + ..., to within a part in 10^9
        return (math.sqrt(2 * y) + 2 * y / 3) / rate if y > 0 else 0.0
    # Solve log(1 + x) - x = log(1 - y): the left side is concave and decreasing, so
    # Newton's method from the right of the root descends to it monotonically.
    goal = math.log1p(-y)
    x = math.sqrt(2 * y) + 2 * -goal + 1e-9
    while math.log1p(x) - x > goal:
        x *= 2
    for _ in range(100):
        h = math.log1p(x) - x - goal
        step = h / (-x / (1 + x))
        x -= step
        if step <= 1e-12 * x:
            break
    return x / rate
