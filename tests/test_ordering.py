"""The order xdist's workers take test files in: the longest first."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.ordering import expected_seconds, longest_first, read_durations


@pytest.mark.parametrize(
    ("scope", "tests", "known", "seconds"),
    [
        ("tests/test_a.py", 10, {"tests/test_a.py": 3.5}, 3.5),
        ("tests/test_e2e_new.py", 1, {}, 60.0),
        ("tests/test_unit.py", 200, {}, 10.0),
        ("tests/test_unit.py", 0, {}, 0.0),
    ],
)
def test_expected_seconds(scope: str, tests: int, known: dict[str, float], seconds: float) -> None:
    assert expected_seconds(scope, tests, known) == pytest.approx(seconds)


def test_an_end_to_end_file_of_one_test_goes_before_a_file_of_many_short_ones() -> None:
    scopes = {"tests/test_many.py": 400, "tests/test_e2e_one.py": 1, "tests/test_b.py": 3}
    known = {"tests/test_many.py": 12.0, "tests/test_b.py": 0.5}
    assert longest_first(scopes, known) == [
        "tests/test_e2e_one.py", "tests/test_many.py", "tests/test_b.py",
    ]  # fmt: skip


def test_ties_keep_their_order() -> None:
    assert longest_first({"x": 1, "y": 1, "z": 1}, {}) == ["x", "y", "z"]


@pytest.mark.parametrize("text", ["", "not json", "[1, 2]", '{"a": "x"}'])
def test_unreadable_durations_are_none(tmp_path: Path, text: str) -> None:
    path = tmp_path / "durations.json"
    path.write_text(text)
    assert read_durations(path) == {}
    assert read_durations(tmp_path / "missing.json") == {}


def test_the_suite_runs_under_this_scheduler(pytestconfig: pytest.Config) -> None:
    # -p tests.ordering is in pyproject's addopts: without it the order above is not used.
    assert pytestconfig.pluginmanager.has_plugin("tests.ordering")
