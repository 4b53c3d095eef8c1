"""The helper the linear-time tests rest on (tests/support/growth.py) tells a quadratic
cost from a linear one."""

from __future__ import annotations

from tests.support.growth import LINEAR_BOUND, growth


def _pairs(n: int) -> int:
    return sum(1 for i in range(n) for j in range(n) if i != j)


def _items(n: int) -> int:
    return sum(1 for i in range(n * 200) if i >= 0)


def test_a_quadratic_cost_is_past_the_bound_a_linear_one_within() -> None:
    assert growth(_pairs, lambda n: n, 300) > LINEAR_BOUND
    assert growth(_items, lambda n: n, 300) < LINEAR_BOUND
