"""The frontier with a tiny memory window: almost every queued page waits in crawldb and
is read back as its host drains. The crawl must end the same, nothing fetched twice."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from testkit.crawl import run_crawl, snapshot
from testkit.simweb import govweb
from testkit.simweb.expected import E2E_SETTINGS, assert_complete
from testkit.simweb.server import SimWeb


@pytest.mark.parametrize("db", ["sqlite", "postgresql"])
def test_crawl_through_crawldb_with_a_window_of_three(
    db: str, gov_web: SimWeb, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    if db == "sqlite":
        db_url = f"sqlite:///{tmp_path / 'crawldb.sqlite3'}"
    else:
        db_url = request.getfixturevalue("pg_cluster").create_database("window")
    gov_web.reset_log()
    run = run_crawl(
        gov_web,
        db_url,
        tmp_path,
        govweb.SEEDS,
        FRONTIER_WINDOW=3,
        FRONTIER_REFILL_SIZE=4,
        DB_FLUSH_INTERVAL=0.2,
        **E2E_SETTINGS,
    )
    assert run.returncode == 0, run.log[-3000:]
    assert "Traceback" not in run.log
    # The path under test was taken, many times.
    assert run.stats.get("govsi/frontier/spilled", 0) > 10
    assert run.stats.get("govsi/frontier/refills", 0) > 5
    assert_complete(snapshot(db_url))
    fetched = Counter((h.host, h.target) for h in gov_web.requested() if h.target != "/robots.txt")
    twice = {k: n for k, n in fetched.items() if n > 1 and k[1] not in ("/napaka", "/pocasi")}
    assert twice == {}
