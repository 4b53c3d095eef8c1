"""End-to-end: three crawler processes on one PostgreSQL crawldb share one crawl of the
simulated web. The database ends as a single process leaves it; the server saw every page
once, and no host or address asked faster than its delay; a worker killed half-way loses
nothing."""

from __future__ import annotations

import os
import signal
import time
from collections import Counter, defaultdict
from collections.abc import Collection
from itertools import pairwise
from pathlib import Path
from typing import Any

from govsi.store.extension import pages_fetched
from testkit.archive import check_archive
from testkit.crawl import RunningCrawl, query, snapshot, start_crawl, wait_for_requests
from testkit.pgcluster import PgCluster
from testkit.simweb import govweb
from testkit.simweb.expected import E2E_SETTINGS, EXPECTED_LINKS, EXPECTED_PAGES
from testkit.simweb.server import Hit, SimWeb

DELAY = 0.5
SETTINGS = {**E2E_SETTINGS, "DEFAULT_CRAWL_DELAY": DELAY, "LEASE_TTL": 3, "LEASE_SCAN_INTERVAL": 1}
FLUSH_INTERVAL = 2.0  # DB_FLUSH_INTERVAL's default


def start_workers(web: SimWeb, db_url: str, work: Path, n: int) -> list[RunningCrawl]:
    return [start_crawl(web, db_url, work / f"w{i}", govweb.SEEDS, **SETTINGS) for i in range(n)]


def crawl_under_way(
    web: SimWeb, pg: PgCluster, work: Path, name: str, n: int, requests: int
) -> tuple[str, list[RunningCrawl]]:
    """``n`` workers on a new crawldb ``name``, once the web has seen ``requests``."""
    db_url = pg.create_database(name)
    web.reset_log()
    workers = start_workers(web, db_url, work, n)
    wait_for_requests(web, requests)
    return db_url, workers


def check_database(db_url: str) -> None:
    snap = snapshot(db_url)
    assert snap.pages == EXPECTED_PAGES
    assert snap.links == EXPECTED_LINKS


def check_requests(
    web: SimWeb, hits: list[Hit], may_repeat: Collection[tuple[str, str]] = frozenset()
) -> None:
    pages = Counter((h.host, h.target) for h in hits if h.target != "/robots.txt")
    twice = {k: n for k, n in pages.items()
             if n != 1 and k not in may_repeat}  # fmt: skip
    assert not twice, twice
    by_host: dict[str, list[float]] = defaultdict(list)
    by_ip: dict[str, list[float]] = defaultdict(list)
    for h in hits:
        by_host[h.host].append(h.time)
        by_ip[web.ip_of(h.host)].append(h.time)
    for key, times in [*by_host.items(), *by_ip.items()]:
        close = [round(g, 3) for g in map(lambda p: p[1] - p[0], pairwise(sorted(times)))
                 if g < DELAY - 0.01]  # fmt: skip
        assert not close, (key, close)


def test_three_workers_share_one_crawl(
    gov_web: SimWeb, pg_cluster: PgCluster, tmp_path: Path
) -> None:
    db_url = pg_cluster.create_database("scaleout")
    gov_web.reset_log()
    # The workers archive into one folder, each into files of its own.
    warc = tmp_path / "warc"
    workers = [start_crawl(gov_web, db_url, tmp_path / f"w{i}", govweb.SEEDS, **SETTINGS,
                           WARC_DIR=str(warc)) for i in range(3)]  # fmt: skip
    runs = [w.wait(600) for w in workers]
    for run in runs:
        assert run.returncode == 0, run.log[-3000:]
        assert "Traceback" not in run.log, run.log[-5000:]
    # The addresses were shared out. Seven addresses and a short crawl: how the shares fall
    # depends on timing, but one worker doing everything would mean no sharing at all.
    fetched = [pages_fetched(r.stats) for r in runs]  # type: ignore[arg-type]
    assert sum(1 for f in fetched if f) >= 2, fetched
    check_database(db_url)
    hits = gov_web.requested()
    check_requests(gov_web, hits)
    # robots.txt once per host for the whole crawl: a worker taking over an address reads
    # what the one before it fetched from crawldb (hosts whose robots.txt failed with a
    # 5xx are asked again by design, like their retries).
    robots: dict[str, list[int]] = defaultdict(list)
    for h in hits:
        if h.target == "/robots.txt":
            robots[h.host].append(h.status)
    twice = {host: s for host, s in robots.items() if len(s) > 1 and max(s) < 500}
    assert not twice, twice
    assert sum(r.stats.get("govsi/robots/from_crawldb", 0) for r in runs) >= 1  # type: ignore[misc]
    # Each worker's figures stay in crawldb: the same as in its own stats, and together
    # every page the crawl fetched.
    rows = query(db_url, "SELECT pages, fetch_errors, ended_at IS NOT NULL FROM crawl_worker")
    assert sorted(rows) == sorted(
        (pages_fetched(r.stats), r.stats.get("govsi/pages/error", 0), True)  # type: ignore[arg-type]
        for r in runs
    )
    stored = query(db_url, "SELECT count(*) FROM page WHERE page_type_code <> 'FRONTIER'")
    assert sum(f for f, *_ in rows) == stored[0][0]
    files = check_archive(warc, db_url, Counter((h.host, h.target) for h in hits))
    # Named {prefix}-{time}-{serial}-{pid}-{host}: every worker that exchanged anything
    # wrote files of its own (a worker may get no address at all, as above; the archive
    # holding every exchange is checked just before).
    exchanged = [int(r.stats.get("downloader/response_count", 0)) for r in runs]  # type: ignore[call-overload]
    writers = {f.name.split("-")[3] for f in files}
    assert len(writers) == sum(1 for n in exchanged if n) >= 2, (files, exchanged)


def test_a_killed_worker_loses_nothing(
    gov_web: SimWeb, pg_cluster: PgCluster, tmp_path: Path
) -> None:
    db_url, workers = crawl_under_way(gov_web, pg_cluster, tmp_path, "scaleout_kill", 3, 40)
    os.kill(workers[0].proc.pid, signal.SIGKILL)
    workers[0].proc.wait(30)
    runs: list[Any] = [w.wait(600) for w in workers[1:]]
    for run in runs:
        assert run.returncode == 0, run.log[-3000:]
    check_database(db_url)


def test_workers_whose_dns_differs_crawl_a_host_at_one_address_one_at_a_time(
    gov_web: SimWeb, pg_cluster: PgCluster, tmp_path: Path
) -> None:
    # Round-robin DNS: the second worker is told www.gov.si is at another address (the
    # simulated web answers there too). The crawl uses one address for the host, the one
    # first stored in site.ip_address, and its lease serves it to one worker at a time.
    db_url = pg_cluster.create_database("pinned")
    gov_web.reset_log()
    elsewhere = {**gov_web.hosts_map(), "www.gov.si": gov_web.trap_ip}
    workers = [
        start_crawl(gov_web, db_url, tmp_path / "w0", govweb.SEEDS, **SETTINGS),
        start_crawl(gov_web, db_url, tmp_path / "w1", govweb.SEEDS, hosts=elsewhere, **SETTINGS),
    ]
    runs = [w.wait(600) for w in workers]
    for run in runs:
        assert run.returncode == 0, run.log[-3000:]
    hits = [h for h in gov_web.requested() if h.host == "www.gov.si"]
    assert len({h.ip for h in hits}) == 1, Counter(h.ip for h in hits)
    stored = query(db_url, "SELECT ip_address FROM site WHERE domain = 'www.gov.si'")
    assert stored == [(hits[0].ip,)]
    check_database(db_url)
    check_requests(gov_web, gov_web.requested())


def test_a_worker_whose_crawldb_stops_answering_stops_sending_within_its_lease(
    gov_web: SimWeb, pg_cluster: PgCluster, tmp_path: Path
) -> None:
    # crawldb freezes mid-crawl (a partition: every query hangs, no error comes back).
    # The lease rounds hang with it; each worker must stop sending to its addresses before
    # its leases can have run out (LEASE_TTL), and go on once crawldb answers again.
    db_url, workers = crawl_under_way(gov_web, pg_cluster, tmp_path, "partition", 2, 25)
    ttl = float(SETTINGS["LEASE_TTL"])
    frozen_at = time.time()
    pg_cluster.freeze(True)
    try:
        time.sleep(ttl + 7)
    finally:
        thawed_at = time.time()
        pg_cluster.freeze(False)
    runs = [w.wait(600) for w in workers]
    for run in runs:
        assert run.returncode == 0, run.log[-3000:]
    hits = gov_web.requested()
    during = [h for h in hits if frozen_at + ttl < h.time < thawed_at]
    assert during == [], [(round(h.time - frozen_at, 2), h.host, h.target) for h in during]
    assert any(h.time > thawed_at for h in hits)  # and it went on afterwards
    check_database(db_url)
    # A page fetched but not yet written when crawldb froze (the last flush interval) may
    # be fetched again by the worker that takes its address over: its first fetch was
    # never recorded in time. No other page is fetched twice.
    unwritten = {(h.host, h.target) for h in hits
                 if frozen_at - FLUSH_INTERVAL - 1 < h.time < frozen_at + ttl}  # fmt: skip
    check_requests(gov_web, hits, may_repeat=unwritten)
