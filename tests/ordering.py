"""Test files handed to xdist's workers longest first, so that both workers end together.

xdist's ``loadfile`` hands out whole files, fewest-tests-last: the end-to-end files, each a
few long tests, came last and one worker ran them alone for minutes. Here each file's
expected seconds come from ``tests/durations.json`` (refreshed by running the suite with
``GOVSI_TEST_DURATIONS=tests/durations.json``); a file not in it counts as a long one if it
is an end-to-end file, else by its number of tests. Loaded with ``-p tests.ordering``.
"""

from __future__ import annotations

import json
import os
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

DURATIONS = Path(__file__).with_name("durations.json")
# Seconds assumed for a file the durations do not name yet.
_NEW_E2E = 60.0
_NEW_TEST = 0.05


def expected_seconds(scope: str, tests: int, known: dict[str, float]) -> float:
    """A file's expected seconds: as recorded, else guessed from its kind and size."""
    if scope in known:
        return known[scope]
    name = scope.rsplit("/", 1)[-1]
    return _NEW_E2E if name.startswith("test_e2e_") else _NEW_TEST * tests


def longest_first(scopes: dict[str, int], known: dict[str, float]) -> list[str]:
    """Files (scope -> number of tests) in the order to hand them out: the longest first,
    ties in their given order."""
    order = list(scopes)
    return sorted(order, key=lambda s: -expected_seconds(s, scopes[s], known))


def read_durations(path: Path = DURATIONS) -> dict[str, float]:
    """The recorded seconds per file; nothing when the file is missing or unreadable."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {str(k): float(v) for k, v in data.items() if isinstance(v, (int, float))}


def _scheduler_class() -> type:
    from xdist.scheduler import LoadFileScheduling

    class LongestFirst(LoadFileScheduling):  # type: ignore[misc]
        """``loadfile`` with the work queue in ``longest_first`` order."""

        _ordered = False

        def _assign_work_unit(self, node: Any) -> None:
            if not self._ordered:
                queue = self.workqueue
                sizes = {scope: len(tests) for scope, tests in queue.items()}
                for scope in reversed(longest_first(sizes, read_durations())):
                    queue.move_to_end(scope, last=False)
                self._ordered = True
            super()._assign_work_unit(node)

    return LongestFirst


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    if config.getoption("dist") != "loadfile":
        return None
    return _scheduler_class()(config, log)


_seconds: defaultdict[str, float] = defaultdict(float)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    _seconds[report.nodeid.split("::", 1)[0]] += report.duration


def pytest_sessionfinish(session: pytest.Session) -> None:
    target = os.environ.get("GOVSI_TEST_DURATIONS")
    if not target or hasattr(session.config, "workerinput") or not _seconds:
        return
    path = Path(target)
    merged = read_durations(path)
    merged.update({scope: round(s, 2) for scope, s in _seconds.items()})
    path.write_text(json.dumps(dict(sorted(merged.items())), indent=0) + "\n")
