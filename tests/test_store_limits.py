"""The limits a run reached: which stats count, written to crawl_limit once per run, and
shown by the report."""

from __future__ import annotations

from sqlalchemy import Engine

from govsi.report import queries, sql
from govsi.store.limits import limits_of, record_limits


def test_limits_are_the_named_stats_above_zero() -> None:
    stats = {
        "govsi/budget/pages_per_host": 5,
        "govsi/budget/pages_per_host/hosts": 1,
        "govsi/robots/refused/check_too_costly": 3,
        "govsi/fetch/header_limit/bytes": 1,
        "govsi/reactor/max_stall_seconds": 0.25,
        "govsi/traps/query_variants": 0,  # not reached
        "govsi/render/disabled": True,  # not a count
        "govsi/robots/forbidden": 9,  # the site's rule, not a limit of ours
        "govsi/budgetary": 1,  # a prefix is a folder, not a string prefix
        "govsi/sitemaps/stopped/elements": "1",  # not a number
        "downloader/request_count": 40,
    }
    assert limits_of(stats) == {
        "govsi/budget/pages_per_host": 5.0,
        "govsi/budget/pages_per_host/hosts": 1.0,
        "govsi/robots/refused/check_too_costly": 3.0,
        "govsi/fetch/header_limit/bytes": 1.0,
        "govsi/reactor/max_stall_seconds": 0.25,
    }


def test_a_run_writes_its_limits_once_and_the_report_sums_the_runs(engine: Engine) -> None:
    with engine.begin() as conn:
        record_limits(conn, "a:1:1", {"govsi/budget/hosts": 2.0, "govsi/traps/x": 1.0})
        # Written again at the end of the same run: replaced, not added.
        record_limits(conn, "a:1:1", {"govsi/budget/hosts": 4.0})
        record_limits(conn, "b:2:2", {"govsi/budget/hosts": 1.0})
        record_limits(conn, "c:3:3", {})
    with engine.connect() as conn:
        got = queries.limits(conn, sql.Scope("all", "all")).records()
    assert got == [
        {"stat": "govsi/budget/hosts", "total": 5.0, "most_in_one_run": 4.0, "runs": 2},
    ]
