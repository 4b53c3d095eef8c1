"""The revisit schedule: the change-rate estimator, the freshness-optimal interval, the
history's encoding and bounds, the schedule's intervals (age-optimal: ``test_revisit_age``)
for changing pages, quiet ones and hubs, and the sitemap <lastmod> rule (govsi/revisit/)."""

from __future__ import annotations

import math
import random
from datetime import datetime, timedelta

import pytest

from govsi.revisit.rate import PEAK_RATIO, change_rate, optimal_interval
from govsi.revisit.schedule import (
    HISTORY_LENGTH,
    format_history,
    next_visit,
    parse_history,
    parse_links,
)

DAY = 86400.0
T0 = datetime(2026, 3, 1, 12, 0, 0)
BOUNDS = {"min_interval": DAY, "max_interval": 30 * DAY}


def _observe(rate: float, intervals: list[float], rng: random.Random) -> list[tuple[float, bool]]:
    """Visits of a Poisson page: did it change at least once in each interval?"""
    return [(t, rng.expovariate(rate) < t) if rate > 0 else (t, False) for t in intervals]


# --- the estimator -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rate", "intervals"),
    [
        (1.0, [1.0]),  # regular, one change per interval
        (0.1, [1.0]),  # regular, rarely changed
        (3.0, [1.0]),  # regular, mostly changed
        (1 / 30, [7.0]),  # a monthly page seen weekly
        (0.5, [0.25, 1.0, 4.0]),  # irregular
        (2.0, [0.1, 0.5, 3.0]),  # irregular, the long ones always changed
        (1 / 200, [1.0, 10.0, 30.0]),  # irregular, slow
    ],
)
def test_the_estimate_converges_to_the_true_rate(rate: float, intervals: list[float]) -> None:
    rng = random.Random(7)
    visits = [rng.choice(intervals) for _ in range(20_000)]
    assert change_rate(_observe(rate, visits, rng)) == pytest.approx(rate, rel=0.05)


@pytest.mark.parametrize(("rate", "interval"), [(0.2, 1.0), (1.0, 1.0), (0.05, 7.0)])
def test_a_bounded_history_is_nearly_unbiased(rate: float, interval: float) -> None:
    # Many 32-visit histories: their mean estimate is near the truth (the +1/2 correction).
    rng = random.Random(3)
    runs = [change_rate(_observe(rate, [interval] * HISTORY_LENGTH, rng)) for _ in range(2000)]
    assert sum(runs) / len(runs) == pytest.approx(rate, rel=0.1)


def test_regular_intervals_give_cho_and_garcia_molinas_estimator() -> None:
    for n, changes in [(10, 3), (32, 5), (32, 31), (5, 5)]:
        obs = [(2.0, True)] * changes + [(2.0, False)] * (n - changes)
        cho = -math.log((n - changes + 0.5) / (n + 0.5)) / 2.0
        assert change_rate(obs, prior_changes=0) == pytest.approx(cho, rel=1e-9)


@pytest.mark.parametrize("n", [1, 2, 32, 1000])
def test_no_change_and_all_changes_give_finite_positive_rates(n: int) -> None:
    quiet = change_rate([(DAY, False)] * n)
    busy = change_rate([(DAY, True)] * n)
    assert 0 < quiet < 1 / (n * DAY)
    assert math.isfinite(busy) and busy > 1 / DAY
    assert change_rate([(DAY, True)] * (n + 1)) > busy  # more evidence, a higher bound


def test_nothing_usable_is_a_zero_rate() -> None:
    assert change_rate([]) == 0.0
    assert change_rate([(0.0, True), (-5.0, False)]) == 0.0


def test_more_changes_mean_a_higher_rate() -> None:
    intervals = [0.5, 1.0, 2.0, 4.0, 8.0] * 4
    rates = []
    for changed in range(len(intervals) + 1):
        obs = [(t, k < changed) for k, t in enumerate(intervals)]
        rates.append(change_rate(obs))
    assert rates == sorted(rates) and len(set(rates)) == len(rates)


def test_a_quiet_interval_lowers_the_rate() -> None:
    obs = [(1.0, True), (3.0, False), (2.0, True)]
    assert change_rate([*obs, (5.0, False)]) < change_rate(obs)


# --- the interval ------------------------------------------------------------------------


def test_the_interval_meets_the_lagrange_condition() -> None:
    for y in [1e-6, 0.01, 0.3, 0.535, 0.9, 0.999]:
        interval = optimal_interval(y, 1.0)
        x = y * interval
        assert 1 - (1 + x) * math.exp(-x) == pytest.approx(y, rel=1e-9)


def test_the_interval_is_shortest_near_the_peak_and_infinite_beyond_one_over_target() -> None:
    target = 10.0
    rates = [r / 1000 for r in range(1, 1000)]  # up to 0.999 / target
    intervals = [optimal_interval(r, target) for r in rates]
    shortest = min(intervals)
    assert shortest == pytest.approx(PEAK_RATIO * target, rel=1e-4)
    peak = intervals.index(shortest)
    assert intervals[: peak + 1] == sorted(intervals[: peak + 1], reverse=True)  # slower: longer
    assert intervals[peak:] == sorted(intervals[peak:])  # faster: longer again (less worth it)
    assert optimal_interval(1 / target, target) == math.inf
    assert optimal_interval(0.0, target) == math.inf


def test_slow_pages_get_about_the_square_root_rule() -> None:
    # Not proportional to 1 / rate: a page changing 100 times less often waits 10 times longer.
    assert optimal_interval(1e-6, 1.0) == pytest.approx(math.sqrt(2 / 1e-6), rel=1e-3)
    assert optimal_interval(1e-12, 1.0) == pytest.approx(math.sqrt(2 / 1e-12), rel=1e-5)
    ratio = optimal_interval(1e-6, 1.0) / optimal_interval(1e-4, 1.0)
    assert ratio == pytest.approx(10, rel=0.01)


def test_a_higher_price_spends_fewer_fetches() -> None:
    for rate in [1e-4, 1e-2, 0.05]:
        assert optimal_interval(rate, 2.0) > optimal_interval(rate, 1.0)
    assert optimal_interval(0.05, 0.0) == 0.0  # free: as often as the bounds allow
    assert optimal_interval(1e-300, 1.0) > 1e100


# --- next_visit --------------------------------------------------------------------------


def _run(
    changes: list[bool], every: float | None = DAY, links: int = 0, **kw: float
) -> tuple[list[float], str]:
    """The intervals ``next_visit`` gives to visits ``every`` seconds apart (None: each at
    the time it gave) that see ``changes`` and find ``links`` new links each, and the
    history at the end."""
    history: str | None = None
    previous: datetime | None = None
    visited = T0
    intervals = []
    for changed in changes:
        due, history = next_visit(
            history, changed, visited, previous, **BOUNDS, new_links=links, **kw
        )
        intervals.append((due - visited).total_seconds())
        previous, visited = visited, due if every is None else visited + timedelta(seconds=every)
    assert history is not None
    return intervals, history


def test_a_first_visit_comes_back_after_the_minimum_interval() -> None:
    due, history = next_visit(None, False, T0, None, **BOUNDS)
    assert due == T0 + timedelta(days=1)
    assert history == ""


@pytest.mark.parametrize("pattern", [[False], [True], [True, False], [False, False, True]])
def test_every_interval_is_within_the_bounds(pattern: list[bool]) -> None:
    for every in [60.0, DAY, 7 * DAY, 400 * DAY]:
        intervals, _ = _run(pattern * 40, every)
        assert all(DAY <= i <= 30 * DAY for i in intervals)


def test_a_page_that_never_changes_drifts_to_the_maximum() -> None:
    # At a price a budget sets, within a few visits; at the default price (a page changing
    # daily visited daily), its intervals keep growing towards 15 days.
    intervals, _ = _run([False] * 10, every=None, price=(5 * DAY) ** 2)
    assert intervals == sorted(intervals) and intervals[4:] == [30 * DAY] * 6
    intervals, _ = _run([False] * 80, every=None)
    assert intervals == sorted(intervals)
    assert 14 * DAY <= intervals[-1] <= 15 * DAY


@pytest.mark.parametrize("every", [None, DAY, 3 * DAY])
def test_a_page_that_changes_at_every_visit_is_never_abandoned(every: float | None) -> None:
    # The bug of issue 51: the freshness optimum gave such a page (a news list, a home page)
    # the longest interval. Age wants it often: at the minimum, visit after visit.
    # Seen changed at every visit 3 days apart, its rate is only bounded from below:
    # somewhat longer, never long.
    intervals, _ = _run([True] * 100, every)
    assert max(intervals[1:]) <= (1.5 * DAY if every == 3 * DAY else DAY)
    assert intervals[-1] == intervals[-2]


def test_a_hub_goes_below_the_minimum_down_to_its_own_floor() -> None:
    hub = {"hub_min_interval": 3600.0}
    # Two new links a day, changed at each visit: shorter than a day, never below an hour.
    intervals, history = _run([True] * 60, None, links=2, **hub)
    assert all(3600.0 <= i < DAY for i in intervals[1:])
    assert history.endswith("+2")
    # Without new links the floor is REVISIT_MIN_INTERVAL's; without hub_min_interval too.
    assert _run([True] * 60, None, **hub)[0][1:] == [DAY] * 59
    assert _run([True] * 60, None, links=2)[0][1:] == [DAY] * 59
    # Many new links: at the hub's floor.
    intervals, _ = _run([True] * 60, None, links=500, **hub)
    assert intervals[-1] == 3600.0


def test_more_new_links_mean_shorter_intervals() -> None:
    found = [
        _run([False, True] * 20, 2 * DAY, links=n, hub_min_interval=600.0)[0][-1]
        for n in [0, 1, 3, 10, 100]
    ]
    assert found == sorted(found, reverse=True) and len(set(found)) == len(found)


def test_a_page_changing_about_daily_is_visited_about_daily() -> None:
    rng = random.Random(5)
    changes = [rng.random() < 1 - math.exp(-0.7) for _ in range(40)]
    intervals, _ = _run(changes)
    assert DAY <= intervals[-1] <= 3 * DAY


def test_a_change_never_lengthens_the_next_interval_for_slow_pages() -> None:
    _, history = _run([False, False, True, False] * 4, every=5 * DAY)
    later = T0 + timedelta(days=200)
    previous = later - timedelta(days=5)
    after_change, _ = next_visit(history, True, later, previous, **BOUNDS)
    after_quiet, _ = next_visit(history, False, later, previous, **BOUNDS)
    assert after_change < after_quiet


def test_a_larger_price_gives_longer_intervals() -> None:
    _, history = _run([False, True, False, False] * 3, every=3 * DAY)
    previous = T0 + timedelta(days=100)
    now = previous + timedelta(days=3)
    cheap, _ = next_visit(history, False, now, previous, **BOUNDS, price=(3 * DAY) ** 2)
    dear, _ = next_visit(history, False, now, previous, **BOUNDS, price=(10 * DAY) ** 2)
    assert now + timedelta(days=1) < cheap < dear < now + timedelta(days=30)


def test_the_history_keeps_the_last_visits_in_bounded_size() -> None:
    _, history = _run([True, False, False] * 200, every=400 * DAY)
    entries = parse_history(history)
    assert len(entries) == HISTORY_LENGTH
    assert len(history) <= HISTORY_LENGTH * 12 - 1
    assert entries[-1] == (400 * DAY, False)
    assert format_history(entries) == history


def test_the_history_is_readable_and_round_trips() -> None:
    obs = [(86400.0, False), (172800.0, True), (3600.0, False)]
    assert format_history(obs) == "86400- 172800+ 3600-"
    assert parse_history("86400- 172800+ 3600-") == obs
    assert format_history(obs, [0, 3, 1]) == "86400- 172800+3 3600-1"
    assert parse_history("86400- 172800+3 3600-1") == obs
    assert parse_links("86400- 172800+3 3600-1") == [(86400.0, 0), (172800.0, 3), (3600.0, 1)]
    assert format_history([(DAY, True)], [10**9]) == "86400+999999"  # six digits at most


def test_a_history_with_links_stays_bounded() -> None:
    _, history = _run([True] * 100, 400 * DAY, links=10**7)
    assert len(parse_links(history)) == HISTORY_LENGTH
    assert len(history) <= HISTORY_LENGTH * 18 - 1


@pytest.mark.parametrize(
    ("old", "kept", "links"),
    [
        # entries written before links were counted read as finding none
        ("86400- 172800+", [(86400.0, False), (172800.0, True)], [0, 0]),
        ("86400-2 172800+", [(86400.0, False), (172800.0, True)], [2, 0]),
        ("86400-x 172800+1234567 3600+1", [(3600.0, True)], [1]),  # unreadable ones left out
    ],
)
def test_old_and_new_entries_read_together(
    old: str, kept: list[tuple[float, bool]], links: list[int]
) -> None:
    assert parse_history(old) == kept
    assert [n for _, n in parse_links(old)] == links


@pytest.mark.parametrize(
    "old", ["86400:1 172800:0", "garbage", "+ - 12 \uff13\uff14+ 5x+", "-5- 99999999999+", ""]
)
def test_unreadable_histories_are_ignored(old: str) -> None:
    assert parse_history(old) == []
    due, history = next_visit(old, True, T0, T0 - timedelta(days=2), **BOUNDS)
    assert history == "172800+"
    assert T0 + timedelta(days=1) <= due <= T0 + timedelta(days=30)


def test_a_visit_at_the_same_instant_records_nothing() -> None:
    _, history = next_visit("86400-", True, T0, T0, **BOUNDS)
    assert history == "86400-"
