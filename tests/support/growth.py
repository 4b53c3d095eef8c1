"""How a cost grows with its input: for the tests that hostile pages stay linear.

Not a timing test: only the ratio of two sizes' costs is asserted, with room to spare
(a linear cost grows 4 x from n to 4n, a quadratic one 16 x; the bound is 8 x), each the
best of a few runs of CPU time, so a busy machine does not make it fail."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


def cpu_cost(run: Callable[[Any], object], arg: Any, repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        started = time.process_time()
        run(arg)
        best = min(best, time.process_time() - started)
    return best


def growth(
    run: Callable[[Any], object], make: Callable[[int], Any], n: int, tries: int = 2
) -> float:
    """cost(4n) / cost(n); inputs are made outside the timed part. A ratio past
    ``LINEAR_BOUND`` is measured again (up to ``tries`` times) and the least kept: another
    process's burst can slow one measurement, while a quadratic cost is 16 x every time."""
    small, large = make(n), make(4 * n)
    ratio = float("inf")
    for _ in range(tries):
        ratio = min(ratio, cpu_cost(run, large) / max(cpu_cost(run, small), 1e-4))
        if ratio < LINEAR_BOUND:
            break
    return ratio


LINEAR_BOUND = 8.0
