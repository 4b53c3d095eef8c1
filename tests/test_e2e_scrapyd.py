"""End-to-end: a real scrapyd on loopback, the project deployed to it with scrapyd-deploy,
crawls scheduled over its HTTP API with per-run settings, a spider argument, the
database URL from the node's environment, a cancel, and two jobs sharing one crawl on
PostgreSQL."""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from testkit.crawl import BASE_SETTINGS, ROOT, query, snapshot
from testkit.pgcluster import PgCluster
from testkit.scrapydnode import ScrapydNode
from testkit.simweb import govweb
from testkit.simweb.expected import E2E_SETTINGS, EXPECTED_LINKS, EXPECTED_PAGES, W
from testkit.simweb.server import SimWeb


@pytest.fixture(scope="module")
def node(gov_web: SimWeb, tmp_path_factory: Any) -> Iterator[tuple[ScrapydNode, str]]:
    work: Path = tmp_path_factory.mktemp("scrapyd")
    # The simulated web's resolver is test code, not part of the egg: it is put on the
    # node's path on its own, so govsi itself can only come from the deployed egg.
    resolver = work / "pypath" / "testkit" / "simweb"
    resolver.mkdir(parents=True)
    (resolver.parent / "__init__.py").write_text("")
    (resolver / "__init__.py").write_text("")
    shutil.copy2(ROOT / "testkit" / "simweb" / "resolver.py", resolver)
    env_db = f"sqlite:///{work / 'from-env.sqlite3'}"
    # No proxy of the machine's either: the address guard would refuse to start the jobs.
    dropped = ("PYTHONPATH", "SCRAPY_SETTINGS_MODULE")
    env = {
        k: v for k, v in os.environ.items() if k not in dropped and not k.lower().endswith("_proxy")
    }
    env.update(
        PYTHONPATH=str(work / "pypath"),
        GOVSI_TEST_HOSTS=json.dumps(gov_web.hosts_map()),
        # The node's secret: what a job writes to unless a setting says otherwise.
        CRAWLDB_URL=env_db,
    )
    _network[0] = gov_web.network
    scrapyd = ScrapydNode(work / "node", env)
    try:
        scrapyd.deploy(work / "deploy")
        yield scrapyd, env_db
    finally:
        scrapyd.stop()


# The simulated web's addresses, which the address guard must allow (set by ``node``).
_network = [""]


def run_settings(**more: object) -> dict[str, object]:
    return {**BASE_SETTINGS, **E2E_SETTINGS, "ALLOWED_PRIVATE_NETWORKS": _network[0], **more}


def test_deployed_egg_lists_the_spider(node: tuple[ScrapydNode, str]) -> None:
    scrapyd, _ = node
    assert scrapyd.get("listprojects.json")["projects"] == ["govsi"]
    assert scrapyd.get("listspiders.json", project="govsi")["spiders"] == ["govsi"]


def test_a_scheduled_crawl_writes_to_the_nodes_database(
    node: tuple[ScrapydNode, str], gov_web: SimWeb
) -> None:
    scrapyd, env_db = node
    seeds = ",".join(govweb.SEEDS)
    job = scrapyd.schedule(run_settings(), seeds=seeds)  # seeds as a spider argument
    log = scrapyd.wait(job)
    assert "Traceback" not in log, log[-5000:]
    assert "Spider closed (finished)" in log, log[-3000:]
    pages = dict(query(env_db, "SELECT url, page_type_code FROM page"))
    missing = {u for u in EXPECTED_PAGES if u not in pages}
    assert not missing
    # The job's stats are in its log on the node.
    assert "'govsi/pages/" in log


def test_settings_given_at_schedule_time_take_effect(
    node: tuple[ScrapydNode, str], tmp_path: Path
) -> None:
    scrapyd, _ = node
    db = f"sqlite:///{tmp_path / 'override.sqlite3'}"
    job = scrapyd.schedule(
        run_settings(CRAWLDB_URL=db, DEPTH_LIMIT=1, CONCURRENT_REQUESTS=3), seeds=f"{W}/"
    )
    log = scrapyd.wait(job)
    assert "Spider closed (finished)" in log, log[-3000:]
    fetched = query(db, "SELECT depth FROM page WHERE page_type_code <> 'FRONTIER'")
    assert fetched and max(d for (d,) in fetched) == 1
    assert "'CONCURRENT_REQUESTS': '3'" in log, log[:3000]


def test_a_cancelled_job_stops_cleanly_and_keeps_what_it_fetched(
    node: tuple[ScrapydNode, str], tmp_path: Path
) -> None:
    scrapyd, _ = node
    db = f"sqlite:///{tmp_path / 'cancel.sqlite3'}"
    # A 1 s delay makes the crawl long enough to cancel mid-way.
    job = scrapyd.schedule(run_settings(CRAWLDB_URL=db, DEFAULT_CRAWL_DELAY=1), seeds=f"{W}/")
    deadline = time.monotonic() + 120
    while scrapyd.state(job) != "running" or "Spider opened" not in scrapyd.log(job):
        assert time.monotonic() < deadline, scrapyd.log(job)
        time.sleep(0.2)
    time.sleep(3)
    assert scrapyd.post("cancel.json", [("project", "govsi"), ("job", job)])["status"] == "ok"
    log = scrapyd.wait(job, timeout=120)
    assert "Spider closed (shutdown)" in log, log[-3000:]
    fetched = query(db, "SELECT count(*) FROM page WHERE page_type_code = 'HTML'")[0][0]
    left = query(db, "SELECT count(*) FROM page WHERE page_type_code = 'FRONTIER'")[0][0]
    assert fetched >= 1 and left >= 1


def test_two_jobs_share_one_crawl_and_report_as_their_jobs(
    node: tuple[ScrapydNode, str], pg_cluster: PgCluster
) -> None:
    scrapyd, _ = node
    db = pg_cluster.create_database("scrapyd_shared")
    settings = run_settings(
        CRAWLDB_URL=db, DEFAULT_CRAWL_DELAY=0.5, LEASE_TTL=3, LEASE_SCAN_INTERVAL=1
    )
    jobs = [scrapyd.schedule(settings, seeds=",".join(govweb.SEEDS)) for _ in range(2)]
    for job in jobs:
        log = scrapyd.wait(job, timeout=600)
        assert "Spider closed (finished)" in log, log[-3000:]
        assert "Traceback" not in log, log[-5000:]
        assert "'govsi/leases/granted'" in log  # each job's own figures, in its own log
    snap = snapshot(db)
    assert snap.pages == EXPECTED_PAGES
    assert snap.links == EXPECTED_LINKS
    # Per job in crawldb, and summed: every page the crawl fetched.
    rows = query(db, "SELECT job, pages, ended_at IS NOT NULL FROM crawl_worker")
    assert sorted(job for job, _, _ in rows) == sorted(jobs)
    assert all(ended for _, _, ended in rows)
    stored = query(db, "SELECT count(*) FROM page WHERE page_type_code <> 'FRONTIER'")[0][0]
    assert sum(pages for _, pages, _ in rows) == stored
