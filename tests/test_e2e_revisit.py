"""End-to-end revisits: crawl the simulated .gov.si web, then run again with REVISIT=all,
then once more with the default REVISIT=due.

What the scheduler's side guarantees, seen at the servers: every stored URL (pages of
every kind, documents, pictures) is asked for once, robots.txt of each host before any of
its revisits, nothing else (no FRONTIER row robots.txt forbids); the revisit requests
carry what the stored copy is checked by; a run right after revisits nothing (due: not
within a day). What a revisit's response does to crawldb is the fetch side's.
"""

from __future__ import annotations

import os
import signal
from collections import Counter
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests.simweb import govweb
from tests.simweb.expected import E2E_SETTINGS
from tests.simweb.server import SimWeb
from tests.support.crawl import query, run_crawl, start_crawl, wait_for_requests

# Retried by design (a 500 and a timeout, RETRY_TIMES=2).
RETRIED = {"/napaka", "/pocasi"}


def key(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    return parts.hostname or "", parts.path + (f"?{parts.query}" if parts.query else "")


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_revisit_all_asks_for_every_stored_url_once(
    gov_web: SimWeb, tmp_path: Path, request: pytest.FixtureRequest, backend: str
) -> None:
    if backend == "sqlite":
        db_url = f"sqlite:///{tmp_path / 'crawldb.sqlite3'}"
    else:
        db_url = request.getfixturevalue("pg_cluster").create_database("revisit")
    gov_web.reset_log()
    first = run_crawl(gov_web, db_url, tmp_path / "run1", govweb.SEEDS, **E2E_SETTINGS)
    assert first.returncode == 0, first.log[-3000:]
    pages = {u for u, t in query(db_url, "SELECT url, page_type_code FROM page") if t != "FRONTIER"}
    images = {u for (u,) in query(db_url, "SELECT url FROM image WHERE accessed_time IS NOT NULL")}
    kinds = {t for (t,) in query(db_url, "SELECT page_type_code FROM page")}
    # Every kind of stored row is there to be revisited.
    assert {"HTML", "BINARY", "DUPLICATE", "ERROR", "OTHER"} <= kinds and images
    assert query(db_url, "SELECT count(*) FROM page WHERE http_status_code = 301")[0][0]

    gov_web.reset_log()
    second = run_crawl(
        gov_web, db_url, tmp_path / "run2", govweb.SEEDS, REVISIT="all", **E2E_SETTINGS
    )
    assert second.returncode == 0, second.log[-3000:]
    assert "Traceback" not in first.log + second.log
    hits = gov_web.requested()
    asked = Counter((h.host, h.target) for h in hits if h.target != "/robots.txt")
    stored = {key(u) for u in pages | images}
    for target, n in asked.items():
        assert target in stored, f"{target} is no stored URL"  # no FRONTIER row either
        assert n == (3 if target[1] in RETRIED else 1), (target, n)
    assert set(asked) == stored  # every one of them
    # robots.txt read again, once per host, before any revisit of the host.
    robots = Counter(h.host for h in hits if h.target == "/robots.txt")
    assert set(robots.values()) == {1}  # (e-prostor.gov.si: its FRONTIER row's host)
    assert {host for host, _ in stored} <= set(robots)
    for host in robots:
        own = [h.target for h in hits if h.host == host]
        assert own[0] == "/robots.txt", (host, own[:3])
    stats = second.stats
    assert stats["govsi/revisit/due"] == len(stored)
    assert stats["govsi/revisit/sent"] == len(stored)
    # What went back: no claim is left held.
    assert query(db_url, "SELECT count(*) FROM page WHERE revisit_claim IS NOT NULL") == [(0,)]

    # Right after: nothing is due (the visits are less than a day old).
    gov_web.reset_log()
    third = run_crawl(gov_web, db_url, tmp_path / "run3", govweb.SEEDS, **E2E_SETTINGS)
    assert third.returncode == 0, third.log[-3000:]
    again = [h for h in gov_web.requested() if h.target != "/robots.txt"]
    assert again == [], again[:5]
    assert third.stats.get("govsi/revisit/due", 0) == 0


def test_a_revisit_round_killed_half_way_is_finished_without_repeats(
    gov_web: SimWeb, tmp_path: Path
) -> None:
    db_url = f"sqlite:///{tmp_path / 'crawldb.sqlite3'}"
    first = run_crawl(gov_web, db_url, tmp_path / "run1", govweb.SEEDS, **E2E_SETTINGS)
    assert first.returncode == 0, first.log[-3000:]
    [(crawled_by,)] = query(db_url, "SELECT max(accessed_time) FROM page")
    stored = {
        key(u) for u, t in query(db_url, "SELECT url, page_type_code FROM page") if t != "FRONTIER"
    }

    # A small delay spreads the round out so that the kill lands in the middle of it.
    settings = {**E2E_SETTINGS, "DEFAULT_CRAWL_DELAY": 0.2, "DB_FLUSH_INTERVAL": 0.5}
    gov_web.reset_log()
    killed = start_crawl(
        gov_web, db_url, tmp_path / "run2", govweb.SEEDS, REVISIT="all", **settings
    )
    wait_for_requests(gov_web, 25)
    os.kill(killed.proc.pid, signal.SIGKILL)
    killed.proc.wait(timeout=30)
    before = {(h.host, h.target) for h in gov_web.requested()}
    recorded = {
        key(u)
        for u, at in query(db_url, "SELECT url, accessed_time FROM page")
        if at is not None and str(at) > str(crawled_by)
    }
    assert recorded and len(recorded) < len(stored) - 10, "the kill missed the revisits"

    gov_web.reset_log()
    resumed = run_crawl(gov_web, db_url, tmp_path / "run3", govweb.SEEDS, REVISIT="all", **settings)
    assert resumed.returncode == 0, resumed.log[-3000:]
    after = Counter((h.host, h.target) for h in gov_web.requested() if h.target != "/robots.txt")
    # What the killed run recorded is not asked for again; the rest of the round is, once.
    assert recorded & set(after) == set()
    assert stored <= before | set(after)
    assert all(n == 1 or target in RETRIED for (_, target), n in after.items())
    assert query(db_url, "SELECT count(*) FROM page WHERE revisit_claim IS NOT NULL") == [(0,)]
