"""PostgreSQL goes away during a crawl: nothing the crawl found is lost.

A short outage is ridden out by retrying and keeping batches; an outage that outlasts
the crawl ends in a spill file that the next run loads before it continues.
"""

from __future__ import annotations

import os
import signal
import time
from collections import Counter
from pathlib import Path

from testkit.archive import check_archive
from testkit.crawl import (
    RunningCrawl,
    query,
    run_crawl,
    snapshot,
    start_crawl,
    wait_for_requests,
)
from testkit.pgcluster import PgCluster
from testkit.simweb import govweb
from testkit.simweb.expected import E2E_SETTINGS, assert_complete
from testkit.simweb.server import SimWeb

# Flush often, so that batches are written (and fail) while the server is down. Short
# leases: a run that could not give its address leases back (crawldb away at its end, or
# killed) holds them that long, and the next run waits for them.
OUTAGE_SETTINGS = {**E2E_SETTINGS, "DB_FLUSH_INTERVAL": 0.3, "DB_WRITE_RETRIES": 1,
                   "LEASE_TTL": 3, "LEASE_SCAN_INTERVAL": 1}  # fmt: skip


def start_during_outage(
    pg_cluster: PgCluster, web: SimWeb, db_url: str, workdir: Path, **settings: object
) -> RunningCrawl:
    """Start a crawl, and stop the database server once the crawl is under way."""
    web.reset_log()
    crawl = start_crawl(web, db_url, workdir, govweb.SEEDS, **OUTAGE_SETTINGS, **settings)
    wait_for_requests(web, 8)
    pg_cluster.stop_server()
    return crawl


def wait_for_spills(workdir: Path, timeout: float = 60) -> list[Path]:
    """The spill files a crawl has saved during an outage, once there are any.

    Polled rather than slept for: on a loaded machine the first failed flush comes late.
    """
    deadline = time.monotonic() + timeout
    while not (spills := sorted(workdir.glob("crawldb-unwritten-*.jsonl"))):
        assert time.monotonic() < deadline, "nothing was saved during the outage"
        time.sleep(0.1)
    return spills


def test_short_outage_loses_nothing(pg_cluster: PgCluster, gov_web: SimWeb, tmp_path: Path) -> None:
    db_url = pg_cluster.create_database("outage_short")
    warc = tmp_path / "warc"  # nor a record, nor a page's pointer to its capture
    crawl = start_during_outage(pg_cluster, gov_web, db_url, tmp_path, WARC_DIR=str(warc))
    try:
        wait_for_spills(tmp_path)  # a flush failed: the outage was felt
    finally:
        pg_cluster.start_server()
    run = crawl.wait()
    assert run.returncode == 0, run.log[-3000:]
    assert run.stats.get("govsi/db_flush_failed", 0) >= 1, "the outage was never felt"
    assert "govsi/db_spill_file" not in run.stats
    assert_complete(snapshot(db_url))
    check_archive(warc, db_url, Counter((h.host, h.target) for h in gov_web.requested()))
    pointed = query(db_url, "SELECT count(DISTINCT page_id) FROM warc_capture")[0][0]
    fetched = query(db_url, "SELECT count(*) FROM page WHERE page_type_code IN "
                            "('HTML', 'BINARY', 'DUPLICATE')")[0][0]  # fmt: skip
    assert pointed >= fetched


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


def test_killed_during_an_outage_loses_at_most_the_last_flush_interval(
    pg_cluster: PgCluster, gov_web: SimWeb, tmp_path: Path
) -> None:
    # crawldb stops; the crawl goes on, saving what it finds to spill files at every
    # flush; then it is killed outright, and both come back.
    db_url = pg_cluster.create_database("outage_kill")
    gov_web.reset_log()
    settings = {**OUTAGE_SETTINGS, "DEFAULT_CRAWL_DELAY": 0.3}
    crawl = start_crawl(gov_web, db_url, tmp_path, govweb.SEEDS, **settings)
    wait_for_requests(gov_web, 8)
    pg_cluster.stop_server()
    try:
        spills = wait_for_spills(tmp_path)
        assert all(p.stat().st_mode & 0o777 == 0o600 for p in spills)
        killed_at = time.time()
        os.kill(crawl.proc.pid, signal.SIGKILL)
        crawl.proc.wait(30)
    finally:
        pg_cluster.start_server()
    first = {(h.host, h.target): h.time for h in gov_web.requested()}
    gov_web.reset_log()
    again = run_crawl(gov_web, db_url, tmp_path, govweb.SEEDS, **settings)
    assert again.returncode == 0, again.log[-3000:]
    assert_complete(snapshot(db_url))
    assert not list(tmp_path.glob("crawldb-unwritten-*.jsonl"))
    # Fetched again: only what the killed run found in its last flush interval (0.3 s)
    # and the write attempt then under way (one retry: about a second), never earlier.
    twice = {k for h in gov_web.requested() if (k := (h.host, h.target)) in first}
    # In flight at the kill however early it went out: it stalls past DOWNLOAD_TIMEOUT.
    twice.discard(("napake.gov.si", "/pocasi"))
    late = killed_at - 2.0
    early = sorted(
        (round(killed_at - first[k], 2), k)
        for k in twice
        if not k[1].endswith("robots.txt") and first[k] <= late
    )
    assert not early, early
