"""The reactor's loop-lag probe: ticks in, stalls out."""

from __future__ import annotations

import pytest

from govsi.health.stalls import StallMeter


@pytest.mark.parametrize(
    ("ticks", "longest", "over"),
    [
        ([0.0], 0.0, 0),  # the first tick has nothing to be late against
        ([0.0, 0.05, 0.10, 0.15], 0.0, 0),  # on time
        ([0.0, 0.03], 0.0, 0),  # early (LoopingCall catching up) is not negative
        ([0.0, 0.05, 1.30, 1.35], 1.2, 1),  # one stall over the limit
        ([0.0, 0.95, 1.0], 0.9, 0),  # under the limit: kept, not counted
        ([0.0, 2.05, 2.10, 5.15], 3.0, 2),  # the longest of two
    ],
)
def test_a_tick_later_than_due_is_a_stall(ticks: list[float], longest: float, over: int) -> None:
    meter = StallMeter(interval=0.05, warn=1.0)
    for t in ticks:
        meter.tick(t)
    assert meter.longest == pytest.approx(longest)
    assert meter.over_warn == over
