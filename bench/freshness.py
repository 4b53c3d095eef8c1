"""How fresh does each revisit policy keep a crawl, at the same budget of fetches a day?

Simulated clock, no network, no crawler. ``--pages`` pages change as Poisson processes with
known rates, a mix from news lists changing hourly to pages that never change (``MIX``).
Every page is fetched at day 0, then each policy says when each page is due; the crawler
fetches at most ``--budget`` pages a day, evenly spaced, the most overdue first (earliest
due time, the order of crawldb's ``idx_page_next_visit``), and tells the policy whether
the page had changed since its last fetch (the memoryless draw of the next change after a
fetch is exact for a Poisson process). Measured over the last ``--days - --warmup`` days: average
freshness (the share of time a page's stored copy equals the live page) and average age
(days since the live page first differed from the copy; 0 while fresh).

Policies:

- ``learning``: govsi's ``next_visit`` (``govsi/revisit/schedule.py``) within
  ``REVISIT_MIN_INTERVAL`` / ``REVISIT_MAX_INTERVAL`` (1 and 30 days), its ``target``
  fitted to the budget once a day by what the crawler itself knows: the intervals it has
  given (the sum of ``1 / interval`` over the pages is the fetches a day they ask for),
  aiming at the budget. ``learning, no budget`` keeps the default target (``min_interval /
  PEAK_RATIO``) and lets the budget cut it.
- ``uniform``: every page every ``pages / budget`` days.
- ``Nutch adaptive``: ``AdaptiveFetchSchedule`` with nutch-default.xml's values: first
  interval 30 days (``db.fetch.interval.default``), x1.4 unchanged, x0.8 changed, 60 s to
  365 days, ``sync_delta`` with rate 0.3 (the modified time is the fetch that last saw a
  change; ``db.fetch.interval.max``, which forces a refetch past 90 days, is left out).
- ``StormCrawler adaptive``: ``AdaptiveScheduler`` with its defaults: first interval 1 day,
  changed ``0.5 I + 0.5 min``, unchanged ``1.5 I``, in whole minutes, 1 hour to 14 days.
- ``optimum``: each page's interval from its true rate, Lagrange's freshness-optimal
  allocation of exactly the budget (``rate.optimal_interval`` with the ``target`` that
  spends it), within the same 1 to 30 days; its analytic figures (no queueing) are the
  reference. ``optimum, unbounded`` drops the bounds (pages may go unvisited): freshness
  only, as an abandoned page's age grows without end.

    PYTHONPATH=. python -m bench.freshness                 # ~80 s
    PYTHONPATH=. python -m bench.freshness --budget 500 --days 240 --warmup 120
"""

from __future__ import annotations

import argparse
import heapq
import math
import random
import sys
import time
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from bench.lib.results import RESULTS, ROOT, write_result
from bench.lib.sysinfo import code, machine
from govsi.revisit.rate import PEAK_RATIO, optimal_interval
from govsi.revisit.schedule import next_visit

DAY = 86400.0
MIN_I, MAX_I = 1.0, 30.0  # days: govsi's REVISIT_MIN_INTERVAL and REVISIT_MAX_INTERVAL
# (share of pages, changes a day at the class's centre, what they are). Rates within a
# class spread log-normally (sigma 0.5) around the centre.
MIX: list[tuple[float, float, str]] = [
    (0.02, 24.0, "news lists, home pages: hourly"),
    (0.05, 1.0, "section indexes, notices: daily"),
    (0.10, 1 / 7, "events, tenders: weekly"),
    (0.20, 1 / 30, "ordinary pages: monthly"),
    (0.30, 1 / 365, "reference pages: yearly"),
    (0.33, 0.0, "documents, archived news: never"),
]
GAIN = 0.5  # how hard it corrects the target each day


def pages_of(count: int, rng: random.Random) -> tuple[list[float], list[int]]:
    """Each page's changes per day and its class (an index into MIX), shuffled."""
    pages: list[tuple[float, int]] = []
    for k, (share, centre, _) in enumerate(MIX):
        for _ in range(round(share * count)):
            pages.append((centre * math.exp(rng.gauss(0, 0.5)) if centre else 0.0, k))
    pages = (pages + [(0.0, len(MIX) - 1)] * count)[:count]
    rng.shuffle(pages)
    return [r for r, _ in pages], [k for _, k in pages]


def by_class(values: Sequence[float], classes: Sequence[int]) -> list[float]:
    """The mean of ``values`` over each class's pages."""
    sums, counts = [0.0] * len(MIX), [0] * len(MIX)
    for v, k in zip(values, classes, strict=True):
        sums[k] += v
        counts[k] += 1
    return [s / c if c else math.nan for s, c in zip(sums, counts, strict=True)]


class Policy:
    """When a page is due: at day 0 (every page was just fetched) and after each fetch."""

    name = ""

    def first(self, i: int) -> float:
        raise NotImplementedError

    def visit(self, i: int, t: float, changed: bool) -> float:
        raise NotImplementedError

    def end_of_day(self) -> None:
        """Once a simulated day."""


class Learning(Policy):
    def __init__(self, pages: int, budget: float | None) -> None:
        self.name = "learning" if budget else "learning, no budget"
        self.budget = budget
        self.history: list[str | None] = [None] * pages
        self.last = [0.0] * pages
        self.base = datetime(2026, 1, 1)
        self.target = MIN_I * DAY / PEAK_RATIO
        # The interval each page was last given, and the fetches a day they add up to.
        self.interval = [MIN_I] * pages
        self.asked = pages / MIN_I

    def first(self, i: int) -> float:
        return MIN_I  # next_visit's answer to a first visit

    def visit(self, i: int, t: float, changed: bool) -> float:
        when, self.history[i] = next_visit(
            self.history[i],
            changed,
            self.base + timedelta(days=t),
            self.base + timedelta(days=self.last[i]),
            min_interval=MIN_I * DAY,
            max_interval=MAX_I * DAY,
            target=self.target if self.budget else None,
        )
        self.last[i] = t
        interval = (when - self.base).total_seconds() / DAY - t
        self.asked += 1 / interval - 1 / self.interval[i]
        self.interval[i] = interval
        return t + interval

    def end_of_day(self) -> None:
        # Pages keep the interval an older target gave them until their next visit: a gentle
        # step, or the target overshoots and the schedule swings.
        if self.budget is not None:
            step = (self.asked / self.budget) ** GAIN
            self.target *= min(max(step, 0.9), 1.1)


class Fixed(Policy):
    """Each page at its own fixed interval (days), from a random phase."""

    def __init__(self, name: str, intervals: Sequence[float], rng: random.Random) -> None:
        self.name = name
        self.intervals = intervals
        self.phase = [rng.random() * iv for iv in intervals]

    def first(self, i: int) -> float:
        return self.phase[i]

    def visit(self, i: int, t: float, changed: bool) -> float:
        return t + self.intervals[i]


class Nutch(Policy):
    name = "Nutch adaptive"
    INC, DEC, MIN, MAX = 0.4, 0.2, 60.0 / DAY, 365.0
    SYNC_RATE, DEFAULT = 0.3, 30.0

    def __init__(self, pages: int) -> None:
        self.interval = [self.DEFAULT] * pages
        self.modified = [0.0] * pages

    def first(self, i: int) -> float:
        return self.DEFAULT

    def visit(self, i: int, t: float, changed: bool) -> float:
        interval = self.interval[i]
        if changed:
            interval *= 1 - self.DEC
            self.modified[i] = t
        else:
            interval *= 1 + self.INC
        delta = t - self.modified[i]
        interval = max(interval, delta)
        ref = t - delta * self.SYNC_RATE
        self.interval[i] = interval = min(max(interval, self.MIN), self.MAX)
        return max(ref + interval, t)


class StormCrawler(Policy):
    name = "StormCrawler adaptive"
    INC, DEC, MIN, MAX, DEFAULT = 0.5, 0.5, 60, 20160, 1440  # minutes

    def __init__(self, pages: int) -> None:
        self.interval = [self.DEFAULT] * pages

    def first(self, i: int) -> float:
        return self.DEFAULT / 1440

    def visit(self, i: int, t: float, changed: bool) -> float:
        interval = self.interval[i]
        if changed:
            interval = int((1 - self.DEC) * interval + self.DEC * self.MIN)
        else:
            interval = min(int(interval * (1 + self.INC)), self.MAX)
        self.interval[i] = interval
        return t + interval / 1440


def simulate(
    policy: Policy, rates: Sequence[float], budget: float, days: float, warmup: float, seed: int
) -> dict[str, Any]:
    """Run ``policy`` for ``days`` at ``budget`` fetches a day; its figures over the window:
    the average freshness and age, and each page's freshness (``pages``)."""
    rng = random.Random(seed)
    n = len(rates)
    span = days - warmup
    fresh = [0.0] * n
    visits = [0] * n
    age = 0.0

    def account(i: int, a: float, b: float, c: float) -> None:
        # Fresh on [a, min(b, c)], stale on [c, b] with age t - c; only [warmup, days] counts.
        nonlocal age
        lo, hi = max(a, warmup), min(b, days)
        if hi <= lo:
            return
        fresh[i] += max(0.0, min(hi, c) - lo)
        s = max(lo, c)
        if hi > s:
            age += ((hi - c) ** 2 - (s - c) ** 2) / 2

    def next_change(t: float, rate: float) -> float:
        return t + rng.expovariate(rate) if rate > 0 else math.inf

    last = [0.0] * n
    change = [next_change(0.0, r) for r in rates]
    queue = [(policy.first(i), i) for i in range(n)]
    heapq.heapify(queue)
    slot, t, day = 1.0 / budget, 0.0, 1.0
    while True:
        due, i = queue[0]
        t = max(t + slot, due)
        while t >= day:
            policy.end_of_day()
            day += 1
        if t >= days:
            break
        changed = change[i] <= t
        account(i, last[i], t, change[i])
        last[i], change[i] = t, next_change(t, rates[i])
        visits[i] += t >= warmup
        heapq.heapreplace(queue, (policy.visit(i, t, changed), i))
    for i in range(n):
        account(i, last[i], days, change[i])
    return {
        "freshness": sum(fresh) / (n * span),
        "age_days": age / (n * span),
        "per_day": sum(visits) / span,
        "pages": [f / span for f in fresh],
        "page_visits": [v / span for v in visits],
    }


def expected(rate: float, interval: float) -> tuple[float, float]:
    """A page's freshness and age (days) when fetched every ``interval`` days."""
    if rate == 0:
        return 1.0, 0.0
    if math.isinf(interval):
        return 0.0, math.inf
    x = rate * interval
    kept = -math.expm1(-x) / x  # the share of an interval the copy is fresh
    return kept, interval / 2 - 1 / rate + kept / rate


def optimum(rates: Sequence[float], budget: float, bounded: bool) -> list[float]:
    """Each page's interval (days) in the freshness-optimal spending of ``budget``."""

    def intervals(target: float) -> list[float]:
        found = [optimal_interval(r, target) if r > 0 else math.inf for r in rates]
        return [min(max(iv, MIN_I), MAX_I) for iv in found] if bounded else found

    def spent(target: float) -> float:
        return sum(1 / iv for iv in intervals(target))

    lo, hi = 1e-6, 1e4  # days; spent() falls as target grows
    for _ in range(50):
        mid = math.sqrt(lo * hi)
        lo, hi = (mid, hi) if spent(mid) > budget else (lo, mid)
    return intervals(hi)


def analytic(rates: Sequence[float], intervals: Sequence[float]) -> dict[str, Any]:
    figures = [expected(r, iv) for r, iv in zip(rates, intervals, strict=True)]
    return {
        "freshness": sum(f for f, _ in figures) / len(rates),
        "age_days": sum(a for _, a in figures) / len(rates),
        "per_day": sum(1 / iv for iv in intervals),
        "pages": [f for f, _ in figures],
        "page_visits": [1 / iv for iv in intervals],
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pages", type=int, default=10_000)
    ap.add_argument("--budget", type=float, default=1_000.0, help="fetches a day")
    ap.add_argument("--days", type=float, default=360.0)
    ap.add_argument("--warmup", type=float, default=180.0, help="days not measured")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", type=Path, default=RESULTS / "freshness.json")
    args = ap.parse_args(argv)
    rates, classes = pages_of(args.pages, random.Random(args.seed))
    best = optimum(rates, args.budget, bounded=True)
    policies: list[Callable[[], Policy]] = [
        lambda: Learning(args.pages, args.budget),
        lambda: Learning(args.pages, None),
        lambda: Fixed("uniform", [args.pages / args.budget] * args.pages, random.Random(0)),
        lambda: Nutch(args.pages),
        lambda: StormCrawler(args.pages),
        lambda: Fixed("optimum (simulated)", best, random.Random(0)),
    ]
    rows: dict[str, dict[str, Any]] = {}
    for make in policies:
        policy = make()
        started = time.process_time()
        rows[policy.name] = simulate(policy, rates, args.budget, args.days, args.warmup, 7)
        rows[policy.name]["cpu_s"] = round(time.process_time() - started, 1)
    rows["optimum"] = analytic(rates, best)
    rows["optimum, unbounded"] = analytic(rates, optimum(rates, args.budget, bounded=False))
    rows["optimum, unbounded"]["age_days"] = None
    for r in rows.values():
        r["freshness_by_class"] = by_class(r.pop("pages"), classes)
        r["fetches_per_day_by_class"] = [
            v * classes.count(k) for k, v in enumerate(by_class(r.pop("page_visits"), classes))
        ]
    print(f"{args.pages} pages, {args.budget:g} fetches a day, days {args.warmup:g}-{args.days:g}")
    print(f"{'policy':24} {'freshness':>9} {'x optimum':>9} {'age (days)':>10} "
          f"{'fetches/day':>11} {'CPU s':>6}")  # fmt: skip
    ref = rows["optimum"]["freshness"]
    for name, r in rows.items():
        age = "-" if r["age_days"] is None else f"{r['age_days']:.2f}"
        print(f"{name:24} {r['freshness']:9.3f} {r['freshness'] / ref:9.3f} {age:>10} "
              f"{r['per_day']:11.0f} {r.get('cpu_s', ''):>6}")  # fmt: skip
    heads = [what.rsplit(": ", 1)[1] for _, _, what in MIX]
    print(
        f"\nfreshness (fetches a day) by how often pages change\n{'policy':24}"
        + "".join(f"{h:>14}" for h in heads)
    )
    for name, r in rows.items():
        cells = zip(r["freshness_by_class"], r["fetches_per_day_by_class"], strict=True)
        print(f"{name:24}" + "".join(f"{f:8.3f} ({v:3.0f})" for f, v in cells))
    learnt = rows["learning"]["freshness"]
    rival = max(rows["Nutch adaptive"]["freshness"], rows["StormCrawler adaptive"]["freshness"])
    goal = {
        "learning_vs_optimum": learnt / ref,
        "learning_vs_best_of_nutch_stormcrawler": learnt / rival,
        "optimum_vs_best_of_nutch_stormcrawler": ref / rival,
        "met": learnt >= 0.95 * ref and learnt >= 1.15 * rival,
    }
    print(f"\nlearning: {goal['learning_vs_optimum']:.3f} x the optimum (goal >= 0.95), "
          f"{goal['learning_vs_best_of_nutch_stormcrawler']:.3f} x the better of Nutch and "
          f"StormCrawler (goal >= 1.15; the optimum itself: "
          f"{goal['optimum_vs_best_of_nutch_stormcrawler']:.3f} x): "
          f"{'met' if goal['met'] else 'NOT met'}")  # fmt: skip
    mix = [{"share": s, "changes_per_day": c, "pages": what} for s, c, what in MIX]
    report = {
        "pages": args.pages, "budget_per_day": args.budget, "days": args.days,
        "warmup_days": args.warmup, "seed": args.seed, "mix": mix, "policies": rows,
        "goal": goal, "machine": machine(), "code": code(ROOT),
    }  # fmt: skip
    write_result(args.out, report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
