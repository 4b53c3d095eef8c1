"""The age- and latency-optimal interval and the new-links rate (govsi/revisit/age.py)."""

from __future__ import annotations

import math

import pytest

from govsi.revisit.age import (
    OVERASK,
    PRICE_AT_ONE,
    age_interval,
    fit_price,
    links_rate,
    price_for,
)

DAY = 86400.0


def _mean_age(rate: float, interval: float) -> float:
    """A Poisson page's mean age when visited every ``interval``."""
    x = rate * interval
    return interval / 2 - 1 / rate + -math.expm1(-x) / (rate * x)


@pytest.mark.parametrize(
    ("rate", "links", "price"),
    [
        (1 / DAY, 0.0, PRICE_AT_ONE * DAY**2),
        (24 / DAY, 0.0, DAY**2),
        (1 / (365 * DAY), 0.0, (5 * DAY) ** 2),
        (1 / (30 * DAY), 0.0, (2 * DAY) ** 2),
        (2 / DAY, 2 / DAY, DAY**2),
        (0.0, 0.3 / DAY, DAY**2),
        (100 / DAY, 50 / DAY, 60.0**2),
    ],
)
def test_the_interval_meets_the_lagrange_condition(
    rate: float, links: float, price: float
) -> None:
    # d(mean age + links I^2 / 6) / dI = price / I^2, by a numerical derivative.
    interval = age_interval(rate, links, price)
    h = interval * 1e-5

    def cost(i: float) -> float:
        return (_mean_age(rate, i) if rate > 0 else 0.0) + links * i * i / 6

    slope = (cost(interval + h) - cost(interval - h)) / (2 * h)
    assert slope * interval**2 == pytest.approx(price, rel=1e-4)
    assert price_for(interval, rate, links) == pytest.approx(price, rel=1e-6)


def test_a_page_changing_once_per_interval_at_the_default_price_gets_it() -> None:
    assert age_interval(1 / DAY, 0.0, PRICE_AT_ONE * DAY**2) == pytest.approx(DAY, rel=1e-6)


def test_faster_pages_and_more_links_always_mean_shorter_intervals() -> None:
    # Unlike the freshness optimum, no page is too fast to be worth a visit.
    rates = [10.0**k / DAY for k in range(-4, 4)]
    by_rate = [age_interval(r, 0.0, DAY**2) for r in rates]
    assert by_rate == sorted(by_rate, reverse=True) and len(set(by_rate)) == len(by_rate)
    by_links = [age_interval(1 / DAY, n / DAY, DAY**2) for n in [0, 0.1, 1, 10, 100]]
    assert by_links == sorted(by_links, reverse=True) and len(set(by_links)) == len(by_links)


@pytest.mark.parametrize(
    ("rate", "price", "limit"),
    [
        (1e6 / DAY, DAY**2, math.sqrt(2) * DAY),  # far faster than visits: sqrt(2 price)
        (1e-6 / DAY, DAY**2, (3 * DAY**2 * 1e6 * DAY) ** (1 / 3)),  # slow: (3 price/rate)^(1/3)
    ],
)
def test_the_limits(rate: float, price: float, limit: float) -> None:
    assert age_interval(rate, 0.0, price) == pytest.approx(limit, rel=1e-3)


@pytest.mark.parametrize(
    ("rate", "links", "price", "expected"),
    [
        (0.0, 0.0, DAY**2, math.inf),  # never changes, yields nothing
        (-1.0, 0.0, DAY**2, math.inf),
        (1 / DAY, 0.0, 0.0, 0.0),  # fetches cost nothing
        (1e-300, 0.0, 1e300, math.inf),  # beyond a float
    ],
)
def test_edge_cases(rate: float, links: float, price: float, expected: float) -> None:
    assert age_interval(rate, links, price) == expected


@pytest.mark.parametrize(
    ("observations", "expected"),
    [
        ([], 0.0),
        ([(DAY, 0)], 0.0),
        ([(DAY, 2), (DAY, 0)], 1 / DAY),
        ([(2 * DAY, 4)], 2 / DAY),
        ([(0.0, 5), (-1.0, 3)], 0.0),  # intervals that tell nothing
        ([(DAY, -3), (DAY, 2)], 1 / DAY),  # a negative count is none
    ],
)
def test_links_rate(observations: list[tuple[float, int]], expected: float) -> None:
    assert links_rate(observations) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("asked", "budget", "spent", "factor"),
    [
        (OVERASK * 1000, 1000, 1000, 1.0),  # asks what it aims at, spends it all: kept
        (OVERASK * 1010, 1000, 1000, 1.01**1.5),  # a little over: raised as much as asked
        (OVERASK * 990, 1000, 1000, 0.99**1.5),  # a little under: lowered
        (5000, 1000, 1000, 1.1),  # far over: a tenth at most
        (10, 1000, 1000, 0.9),  # far under: a tenth at most
        (1000, 1000, 1000, (1 / OVERASK) ** 1.5),  # exactly the budget: slots go unspent
        (OVERASK * 1000, 1000, 980, 0.98**1.5),  # spent under 99 %: lowered though asked
        (OVERASK * 1000, 1000, 0, 0.9),  # spent nothing
        (OVERASK * 1000, 0, 0, 1.0),  # no budget: the price is not fitted
        (0, 1000, 0, 0.9),  # nothing asked
    ],
)
def test_fit_price(asked: float, budget: float, spent: float, factor: float) -> None:
    assert fit_price(DAY**2, asked, budget, spent) == pytest.approx(factor * DAY**2)


@pytest.mark.parametrize(
    ("asked", "budget", "spent", "floor", "factor"),
    [
        (10, 1000, 10, 0.95, 0.95),  # asks little: lowered to the floor, no further
        (10, 1000, 10, 1.0, 1.0),  # at the floor already: kept there
        (10, 1000, 10, 0.5, 0.9),  # a floor far below: a tenth down, as without one
        (5000, 1000, 1000, 1.0, 1.1),  # far over: raised, the floor aside
        (OVERASK * 1000, 0, 0, 2.0, 1.0),  # no budget: not fitted, not even to the floor
    ],
)
def test_fit_price_never_goes_below_the_floor(
    asked: float, budget: float, spent: float, floor: float, factor: float
) -> None:
    fitted = fit_price(DAY**2, asked, budget, spent, floor=floor * DAY**2)
    assert fitted == pytest.approx(factor * DAY**2)


def test_the_fitted_price_spends_the_budget() -> None:
    # Pages from hourly to yearly, hubs among them; each period they ask for the visits
    # their intervals at the price give, and the crawl spends at most the budget.
    # (changes a second, new links a second, how many such pages)
    pages = [(24 / DAY, 0.0, 25), (1 / DAY, 0.0, 25), (1 / (30 * DAY), 0.0, 25)]
    pages += [(0.0, 2 / DAY, 25), (1 / (365 * DAY), 0.0, 100)]
    budget = 10.0  # visits a day: 0.05 per page

    def asked(price: float) -> float:
        return sum(
            k * DAY / min(max(age_interval(r, n, price), DAY), 30 * DAY) for r, n, k in pages
        )

    price = PRICE_AT_ONE * DAY**2
    assert asked(price) > 3 * budget  # the default price asks for far more
    for _ in range(200):
        wanted = asked(price)
        price = fit_price(price, wanted, budget, min(wanted, budget))
    assert asked(price) == pytest.approx(OVERASK * budget, rel=0.01)
