"""How old are a crawl's copies, and how late are its new pages found, under each revisit
rule at the same budget of fetches a day?

Simulated clock, no network, no crawler. ``--pages`` pages in the classes of ``MIX``: pages
changing as Poisson processes with known rates (home pages hourly to pages that never
change); hubs (news lists, section indexes) on which new pages appear as Poisson processes
and stay listed ``LISTED`` days (a hub changes when a page appears on it); and byte-volatile
pages, whose bytes change at every fetch (a token, a counter) while their main text never
does. ``FEED_SHARE`` of the hubs also name their new pages in a feed or a sitemap with
``<lastmod>`` (one for ``HUBS_PER_FEED`` hubs, a site's), which govsi re-reads every
``--feed-poll`` hours (conditionally; the polls come out of govsi's budget); to the other
rules a feed is one more page of the hub's pace, so they find a hub's new pages only on its
visits. Every page is fetched at day 0, then each rule says when each page is due; the
crawler fetches at most ``--budget`` pages a day, evenly spaced, the most overdue first
(earliest due time, the order of crawldb's ``idx_page_next_visit``), and tells the rule
whether the page had changed since its last fetch (by govsi's key, the main text; by Nutch's
and StormCrawler's default signatures, the raw bytes: a byte-volatile page changed at every
fetch) and, to govsi, how many links it found that were not known. A new page found is
stored at once (new pages come before revisits: they are not revisits' fetches).

Measured over the last ``--days - --warmup`` days: mean age (days since the live page first
differed from the copy; 0 while fresh), freshness (the share of time a copy equals the live
page), fetches a day, each by page class; discovery latency of the new pages created in the
window (from appearing on a hub until stored: median and 90th percentile; a page that left
its hub's list unfound is never found: an infinite latency).

Rules:

- ``govsi``: ``next_visit`` (``govsi/revisit/schedule.py``) within ``REVISIT_MIN_INTERVAL``
  / ``REVISIT_MAX_INTERVAL`` (1 and 30 days), hubs down to ``--hub-min`` hours
  (``REVISIT_HUB_MIN_INTERVAL``), its ``price`` fitted to the budget once a day by what the
  crawler itself knows (``age.fit_price``, never below the schedule's default price, as
  the crawl fits a host's: ``govsi.store.hostbudget``): the intervals it has given (the
  sum of ``1 / interval`` over the pages is the fetches a day they ask for) and the
  fetches it made. ``govsi, default price`` keeps the default price and lets the budget
  cut it (a crawl before the price was fitted).
- ``uniform``: every page every ``pages / budget`` days.
- ``Nutch default``: ``DefaultFetchSchedule``, every page every 30 days
  (``db.fetch.interval.default``).
- ``Nutch adaptive``: ``AdaptiveFetchSchedule`` with nutch-default.xml's values: first
  interval 30 days, x1.4 unchanged, x0.8 changed, 60 s to 365 days, ``sync_delta`` with
  rate 0.3 (the modified time is the fetch that last saw a change;
  ``db.fetch.interval.max``, which forces a refetch past 90 days, is left out).
- ``StormCrawler default``: ``DefaultScheduler``, every page every day
  (``fetchInterval.default``: 1 440 minutes).
- ``StormCrawler adaptive``: ``AdaptiveScheduler`` with its defaults: first interval 1 day,
  changed ``0.5 I + 0.5 min``, unchanged ``1.5 I``, in whole minutes, 1 hour to 14 days.
- ``age optimum``: each page's interval from its true rates, the age- and latency-optimal
  spending of exactly the budget (``age.age_interval``) within govsi's bounds, simulated.
- ``freshness optimum``: Lagrange's freshness-optimal allocation of exactly the budget
  (``rate.optimal_interval``) within 1 to 30 days; its analytic freshness (no queueing) is
  the reference of the freshness goal.

    PYTHONPATH=. python -m bench.freshness                 # ~4 min
    PYTHONPATH=. python -m bench.freshness --budget 3000 --out bench/results/freshness-3000.json
"""

from __future__ import annotations

import argparse
import bisect
import heapq
import math
import random
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from bench.lib.results import RESULTS, ROOT, write_result
from bench.lib.sysinfo import code, machine
from govsi.revisit.age import age_interval, fit_price
from govsi.revisit.rate import optimal_interval
from govsi.revisit.schedule import default_price, next_visit

DAY = 86400.0
MIN_I, MAX_I = 1.0, 30.0  # days: govsi's REVISIT_MIN_INTERVAL and REVISIT_MAX_INTERVAL
LISTED = 5.0  # days a hub lists a new page
FEED_SHARE = 0.5  # of hubs whose new pages are also in a feed or a sitemap with lastmod
HUBS_PER_FEED = 10  # a site's feed or sitemap names the new pages of about this many hubs
# (share of pages, changes a day at the class's centre, new pages a day at the centre,
# what they are). Rates within a class spread log-normally (sigma 0.5) around the centre; a
# hub's changes are its new pages. VOLATILE is the byte-volatile class.
MIX: list[tuple[float, float, float, str]] = [
    (0.01, 24.0, 0.0, "home pages: hourly"),
    (0.01, 0.0, 2.0, "news lists: 2 new a day"),
    (0.02, 0.0, 0.3, "indexes: 2 new a week"),
    (0.05, 1.0, 0.0, "notices: daily"),
    (0.10, 1 / 7, 0.0, "events: weekly"),
    (0.20, 1 / 30, 0.0, "ordinary: monthly"),
    (0.05, 0.0, 0.0, "byte-volatile: never"),
    (0.25, 1 / 365, 0.0, "reference: yearly"),
    (0.31, 0.0, 0.0, "documents: never"),
]
VOLATILE = 6


class Population:
    """The pages: each one's change rate, new pages a day, class; each hub's new pages'
    creation times and whether a feed names them."""

    def __init__(self, count: int, days: float, rng: random.Random) -> None:
        pages: list[tuple[float, float, int]] = []
        for k, (share, changes, links, _) in enumerate(MIX):
            for _ in range(round(share * count)):
                spread = math.exp(rng.gauss(0, 0.5))
                pages.append((changes * spread, links * spread, k))
        pages = (pages + [(0.0, 0.0, len(MIX) - 1)] * count)[:count]
        rng.shuffle(pages)
        self.rates = [r for r, _, _ in pages]
        self.links = [n for _, n, _ in pages]
        self.classes = [k for _, _, k in pages]
        self.created: list[list[float]] = []
        self.feed: list[bool] = []
        for n in self.links:
            times: list[float] = []
            t = rng.expovariate(n) if n > 0 else math.inf
            while t < days:
                times.append(t)
                t += rng.expovariate(n)
            self.created.append(times)
            self.feed.append(n > 0 and rng.random() < FEED_SHARE)

    def feeds(self) -> int:
        """Feeds and sitemaps to poll."""
        return math.ceil(sum(self.feed) / HUBS_PER_FEED)

    def change_rate(self, i: int) -> float:
        """Changes a day, a hub's new pages included."""
        return self.rates[i] + self.links[i]


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
    raw_bytes = True  # its signature hashes the raw bytes (Nutch, StormCrawler)
    feeds = False  # it re-reads feeds and sitemaps on their own interval

    def first(self, i: int) -> float:
        raise NotImplementedError

    def visit(self, i: int, t: float, changed: bool, new_links: int) -> float:
        raise NotImplementedError

    def end_of_day(self) -> None:
        """Once a simulated day."""


class Govsi(Policy):
    raw_bytes = False
    feeds = True

    def __init__(self, pages: int, budget: float | None, hub_min: float) -> None:
        self.name = "govsi" if budget else "govsi, default price"
        self.budget = budget
        self.hub_min = hub_min
        self.history: list[str | None] = [None] * pages
        self.last = [0.0] * pages
        self.base = datetime(2026, 1, 1)
        self.floor = default_price(MIN_I * DAY)
        self.price = self.floor
        # The interval each page was last given, and the fetches a day they add up to.
        self.interval = [MIN_I] * pages
        self.asked = pages / MIN_I
        self.fetched = 0  # today

    def first(self, i: int) -> float:
        return MIN_I  # next_visit's answer to a first visit

    def visit(self, i: int, t: float, changed: bool, new_links: int) -> float:
        when, self.history[i] = next_visit(
            self.history[i],
            changed,
            self.base + timedelta(days=t),
            self.base + timedelta(days=self.last[i]),
            min_interval=MIN_I * DAY,
            max_interval=MAX_I * DAY,
            hub_min_interval=self.hub_min * DAY,
            new_links=new_links,
            price=self.price if self.budget else None,
        )
        self.last[i] = t
        self.fetched += 1
        interval = (when - self.base).total_seconds() / DAY - t
        self.asked += 1 / interval - 1 / self.interval[i]
        self.interval[i] = interval
        return t + interval

    def end_of_day(self) -> None:
        if self.budget is not None:
            self.price = fit_price(
                self.price, self.asked, self.budget, self.fetched, floor=self.floor
            )
        self.fetched = 0


class Fixed(Policy):
    """Each page at its own fixed interval (days), from a random phase."""

    def __init__(
        self, name: str, intervals: Sequence[float], rng: random.Random, *, govsi: bool = False
    ) -> None:
        self.name = name
        self.intervals = intervals
        self.phase = [rng.random() * iv for iv in intervals]
        self.raw_bytes = not govsi
        self.feeds = govsi

    def first(self, i: int) -> float:
        return self.phase[i]

    def visit(self, i: int, t: float, changed: bool, new_links: int) -> float:
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

    def visit(self, i: int, t: float, changed: bool, new_links: int) -> float:
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

    def visit(self, i: int, t: float, changed: bool, new_links: int) -> float:
        interval = self.interval[i]
        if changed:
            interval = int((1 - self.DEC) * interval + self.DEC * self.MIN)
        else:
            interval = min(int(interval * (1 + self.INC)), self.MAX)
        self.interval[i] = interval
        return t + interval / 1440


def simulate(
    policy: Policy, web: Population, budget: float, days: float, warmup: float,
    feed_poll: float, seed: int,
) -> dict[str, Any]:  # fmt: skip
    """Run ``policy`` for ``days`` at ``budget`` fetches a day (its feed polls included);
    its figures over the window: freshness, age, each page's freshness and age, and the
    discovery latencies of the new pages created in it."""
    rng = random.Random(seed)
    n = len(web.rates)
    span = days - warmup
    fresh, ages, visits = [0.0] * n, [0.0] * n, [0] * n
    polls = web.feeds() / feed_poll if policy.feeds else 0.0
    slot = 1.0 / (budget - polls)

    def account(i: int, a: float, b: float, c: float) -> None:
        # Fresh on [a, min(b, c)], stale on [c, b] with age t - c; only [warmup, days] counts.
        lo, hi = max(a, warmup), min(b, days)
        if hi <= lo:
            return
        fresh[i] += max(0.0, min(hi, c) - lo)
        s = max(lo, c)
        if hi > s:
            ages[i] += ((hi - c) ** 2 - (s - c) ** 2) / 2

    def next_change(i: int, t: float) -> float:
        rate, created = web.rates[i], web.created[i]
        drawn = t + rng.expovariate(rate) if rate > 0 else math.inf
        k = bisect.bisect_right(created, t)
        return min(drawn, created[k] if k < len(created) else math.inf)

    # Each hub's new pages not found yet: the index of the first, and when each was found.
    unfound = [0] * n
    found: list[list[float]] = [[math.inf] * len(c) for c in web.created]
    if policy.feeds:
        for i, created in enumerate(web.created):
            if web.feed[i]:
                phase = rng.random() * feed_poll
                found[i] = [phase + math.ceil((c - phase) / feed_poll) * feed_poll for c in created]

    def harvest(i: int, t: float) -> int:
        """The new pages hub ``i`` lists at ``t`` that were not known: found now."""
        created, times = web.created[i], found[i]
        k, new = unfound[i], 0
        while k < len(created) and created[k] <= t:
            if times[k] > t and created[k] >= t - LISTED:
                times[k] = t
                new += 1
            k += 1
        unfound[i] = k
        return new

    last = [0.0] * n
    change = [next_change(i, 0.0) for i in range(n)]
    queue = [(policy.first(i), i) for i in range(n)]
    heapq.heapify(queue)
    t, day = 0.0, 1.0
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
        last[i], change[i] = t, next_change(i, t)
        visits[i] += t >= warmup
        seen = changed or (policy.raw_bytes and web.classes[i] == VOLATILE)
        new = harvest(i, t) if web.created[i] else 0
        heapq.heapreplace(queue, (policy.visit(i, t, seen, new), i))
    for i in range(n):
        account(i, last[i], days, change[i])
    latency = [
        f - c
        for created, times in zip(web.created, found, strict=True)
        for c, f in zip(created, times, strict=True)
        if warmup <= c < days - LISTED
    ]
    return {
        "freshness": sum(fresh) / (n * span),
        "age_days": sum(ages) / (n * span),
        "per_day": sum(visits) / span + polls,
        "feed_polls_per_day": polls,
        "latency": latency,
        "pages": [f / span for f in fresh],
        "page_ages": [a / span for a in ages],
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


def spend(intervals: Callable[[float], list[float]], budget: float) -> list[float]:
    """``intervals(price)`` at the price that spends ``budget`` fetches a day (fewer as the
    price grows)."""
    lo, hi = 1e-9, 1e6
    for _ in range(60):
        mid = math.sqrt(lo * hi)
        lo, hi = (mid, hi) if sum(1 / iv for iv in intervals(mid)) > budget else (lo, mid)
    return intervals(hi)


def bounded(interval: float, shortest: float = MIN_I) -> float:
    return min(max(interval, shortest), MAX_I)


def freshness_optimum(web: Population, budget: float) -> list[float]:
    """Each page's interval (days) in the freshness-optimal spending of ``budget``."""
    rates = [web.change_rate(i) for i in range(len(web.rates))]
    return spend(
        lambda p: [bounded(optimal_interval(r, p) if r > 0 else math.inf) for r in rates],
        budget,
    )


def age_optimum(web: Population, budget: float, hub_min: float, feed_poll: float) -> list[float]:
    """Each page's interval (days) in the age- and latency-optimal spending of ``budget``
    (its feed polls out of it), from the true rates."""
    polls = web.feeds() / feed_poll
    pages = [
        (web.change_rate(i), 0.0 if web.feed[i] else web.links[i], hub_min if n else MIN_I)
        for i, n in enumerate(web.links)
    ]
    return spend(
        lambda p: [bounded(age_interval(r, n, p), low) for r, n, low in pages], budget - polls
    )


def analytic(web: Population, intervals: Sequence[float]) -> dict[str, Any]:
    rates = [web.change_rate(i) for i in range(len(web.rates))]
    figures = [expected(r, iv) for r, iv in zip(rates, intervals, strict=True)]
    return {
        "freshness": sum(f for f, _ in figures) / len(rates),
        "age_days": sum(a for _, a in figures) / len(rates),
        "per_day": sum(1 / iv for iv in intervals),
    }


def quantile(values: Sequence[float], q: float) -> float:
    if not values:
        return math.nan
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pages", type=int, default=10_000)
    ap.add_argument("--budget", type=float, default=1_000.0, help="fetches a day")
    ap.add_argument("--days", type=float, default=360.0)
    ap.add_argument("--warmup", type=float, default=180.0, help="days not measured")
    ap.add_argument("--hub-min", type=float, default=1.0, help="hours: hubs' shortest interval")
    ap.add_argument("--feed-poll", type=float, default=6.0, help="hours between feed polls")
    ap.add_argument("--only", default="", help="comma-separated rule names to run")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", type=Path, default=RESULTS / "freshness.json")
    args = ap.parse_args(argv)
    web = Population(args.pages, args.days, random.Random(args.seed))
    hub_min, poll = args.hub_min / 24, args.feed_poll / 24
    floor = args.pages / MAX_I
    if args.budget < floor:
        print(f"a budget under {floor:g} fetches a day (pages / maximum interval) leaves some "
              f"rules unable to spend it: not compared", file=sys.stderr)  # fmt: skip
        return 2
    policies: list[Callable[[], Policy]] = [
        lambda: Govsi(args.pages, args.budget - web.feeds() / poll, hub_min),
        lambda: Govsi(args.pages, None, hub_min),
        lambda: Fixed("uniform", [args.pages / args.budget] * args.pages, random.Random(0)),
        lambda: Fixed("Nutch default", [30.0] * args.pages, random.Random(0)),
        lambda: Nutch(args.pages),
        lambda: Fixed("StormCrawler default", [1.0] * args.pages, random.Random(0)),
        lambda: StormCrawler(args.pages),
        lambda: Fixed(
            "age optimum", age_optimum(web, args.budget, hub_min, poll), random.Random(0),
            govsi=True,
        ),
    ]
    only = {name.strip() for name in args.only.split(",") if name.strip()}
    rows: dict[str, dict[str, Any]] = {}
    for make in policies:
        policy = make()
        if only and policy.name not in only:
            continue
        started = time.process_time()
        r = simulate(policy, web, args.budget, args.days, args.warmup, poll, 7)
        r["cpu_s"] = round(time.process_time() - started, 1)
        latency = r.pop("latency")
        r["latency_median_days"] = quantile(latency, 0.5)
        r["latency_p90_days"] = quantile(latency, 0.9)
        r["latency_mean_found_days"] = statistics.fmean(x for x in latency if x < math.inf)
        r["new_pages_lost"] = sum(x == math.inf for x in latency) / max(len(latency), 1)
        r["freshness_by_class"] = by_class(r.pop("pages"), web.classes)
        r["age_days_by_class"] = by_class(r.pop("page_ages"), web.classes)
        r["fetches_per_day_by_class"] = [
            v * web.classes.count(k)
            for k, v in enumerate(by_class(r.pop("page_visits"), web.classes))
        ]
        rows[policy.name] = r
    reference = analytic(web, freshness_optimum(web, args.budget))
    report = {
        "pages": args.pages, "budget_per_day": args.budget, "days": args.days,
        "warmup_days": args.warmup, "hub_min_hours": args.hub_min,
        "feed_poll_hours": args.feed_poll, "feed_share": FEED_SHARE, "listed_days": LISTED,
        "seed": args.seed, "mix": [
            {"share": s, "changes_per_day": c, "new_pages_per_day": n, "pages": what}
            for s, c, n, what in MIX
        ],
        "policies": rows, "freshness_optimum": reference,
        "goal": goals(rows, reference), "machine": machine(), "code": code(ROOT),
    }  # fmt: skip
    show(report)
    write_result(args.out, report)
    return 0


def goals(rows: dict[str, dict[str, Any]], reference: dict[str, Any]) -> dict[str, Any]:
    """Issue 51's goals for govsi's rule, when it and the rivals were run."""
    rivals = [rows[n]["age_days"] for n in RIVALS if n in rows]
    if "govsi" not in rows or not rivals:
        return {}
    g = rows["govsi"]
    return {
        "age_vs_best_rival": g["age_days"] / min(rivals),
        "freshness_vs_bounded_optimum": g["freshness"] / reference["freshness"],
        "latency_median_days": g["latency_median_days"],
        "latency_p90_days": g["latency_p90_days"],
        "met": {
            "age <= 0.75 x the best rival": g["age_days"] <= 0.75 * min(rivals),
            "median latency <= 1 day": g["latency_median_days"] <= 1,
            "p90 latency <= 3 days": g["latency_p90_days"] <= 3,
            "freshness >= 0.97 x optimum": g["freshness"] >= 0.97 * reference["freshness"],
        },
    }


RIVALS = ["Nutch default", "Nutch adaptive", "StormCrawler default", "StormCrawler adaptive"]


def show(report: dict[str, Any]) -> None:
    rows = report["policies"]
    print(f"{report['pages']} pages, {report['budget_per_day']:g} fetches a day, days "
          f"{report['warmup_days']:g}-{report['days']:g}, hubs down to "
          f"{report['hub_min_hours']:g} h, feeds polled every {report['feed_poll_hours']:g} h")
    print(f"{'rule':22} {'age (d)':>8} {'fresh':>6} {'latency p50':>11} {'p90':>6} "
          f"{'lost':>5} {'fetches/d':>9} {'polls/d':>7} {'CPU s':>6}")  # fmt: skip
    for name, r in rows.items():
        print(f"{name:22} {r['age_days']:8.3f} {r['freshness']:6.3f} "
              f"{r['latency_median_days']:11.2f} {r['latency_p90_days']:6.2f} "
              f"{r['new_pages_lost']:5.1%} {r['per_day']:9.0f} "
              f"{r['feed_polls_per_day']:7.0f} {r['cpu_s']:6}")  # fmt: skip
    ref = report["freshness_optimum"]
    print(f"{'freshness optimum':22} {ref['age_days']:8.3f} {ref['freshness']:6.3f} "
          f"{'(analytic, no queue)':>31} {ref['per_day']:9.0f}")  # fmt: skip
    heads = [what.split(":")[0] for _, _, _, what in MIX]
    for field, label in [("age_days_by_class", "age (days)"),
                         ("freshness_by_class", "freshness"),
                         ("fetches_per_day_by_class", "fetches a day")]:  # fmt: skip
        print(f"\n{label} by page class\n{'rule':22}" + "".join(f"{h[:10]:>11}" for h in heads))
        for name, r in rows.items():
            print(f"{name:22}" + "".join(f"{v:11.3f}" for v in r[field]))
    if report["goal"]:
        g = report["goal"]
        print(f"\ngovsi: age {g['age_vs_best_rival']:.3f} x the best rival, freshness "
              f"{g['freshness_vs_bounded_optimum']:.3f} x the bounded optimum, latency "
              f"median {g['latency_median_days']:.2f} d, p90 {g['latency_p90_days']:.2f} d")
        for goal, met in g["met"].items():
            print(f"  {goal}: {'met' if met else 'NOT met'}")


if __name__ == "__main__":
    sys.exit(main())
