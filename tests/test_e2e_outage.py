"""PostgreSQL goes away during a crawl: nothing the crawl found is lost.

A short outage is ridden out by retrying and keeping batches; an outage that outlasts
the crawl ends in a spill file that the next run loads before it continues.
"""

from __future__ import annotations

import time
from pathlib import Path

from tests.simweb import govweb
from tests.simweb.expected import E2E_SETTINGS, assert_complete
from tests.simweb.server import SimWeb
from tests.support.crawl import (
    RunningCrawl,
    run_crawl,
    snapshot,
    start_crawl,
    wait_for_requests,
)
from tests.support.pgcluster import PgCluster

# Flush often, so that batches are written (and fail) while the server is down.
OUTAGE_SETTINGS = {**E2E_SETTINGS, "DB_FLUSH_INTERVAL": 0.3, "DB_WRITE_RETRIES": 1}


def start_during_outage(
    pg_cluster: PgCluster, web: SimWeb, db_url: str, workdir: Path
) -> RunningCrawl:
    """Start a crawl, and stop the database server once the crawl is under way."""
    web.reset_log()
    crawl = start_crawl(web, db_url, workdir, govweb.SEEDS, **OUTAGE_SETTINGS)
    wait_for_requests(web, 8)
    pg_cluster.stop_server()
    return crawl


def test_short_outage_loses_nothing(pg_cluster: PgCluster, gov_web: SimWeb, tmp_path: Path) -> None:
    db_url = pg_cluster.create_database("outage_short")
    crawl = start_during_outage(pg_cluster, gov_web, db_url, tmp_path)
    try:
        time.sleep(3)
    finally:
        pg_cluster.start_server()
    run = crawl.wait()
    assert run.returncode == 0, run.log[-3000:]
    assert run.stats.get("govsi/db_flush_failed", 0) >= 1, "the outage was never felt"
    assert "govsi/db_spill_file" not in run.stats
    assert_complete(snapshot(db_url))


def test_outage_past_the_end_is_spilled_and_loaded_by_the_next_run(
    pg_cluster: PgCluster, gov_web: SimWeb, tmp_path: Path
) -> None:
    db_url = pg_cluster.create_database("outage_long")
    crawl = start_during_outage(pg_cluster, gov_web, db_url, tmp_path)
    try:
        run = crawl.wait()
    finally:
        pg_cluster.start_server()
    assert run.returncode == 0, run.log[-3000:]
    spill = Path(str(run.stats["govsi/db_spill_file"]))
    assert spill.exists() and spill.stat().st_size > 0
    first_hits = {(h.host, h.target) for h in gov_web.requested()}

    gov_web.reset_log()
    again = run_crawl(gov_web, db_url, tmp_path, govweb.SEEDS, **OUTAGE_SETTINGS)
    assert again.returncode == 0, again.log[-3000:]
    assert not spill.exists()
    assert_complete(snapshot(db_url))
    # What the first run fetched came back from the spill file, not from a second fetch.
    again_hits = {(h.host, h.target) for h in gov_web.requested() if h.target != "/robots.txt"}
    assert again_hits & first_hits == set()
