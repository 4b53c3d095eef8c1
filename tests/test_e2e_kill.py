"""kill -9 half-way, then the same command again: the same crawldb as a crawl that was
never killed, and nothing that was recorded as fetched is fetched again. (What was
fetched but not yet written when the process died, at most DB_FLUSH_INTERVAL's worth,
is fetched again: for crawldb it was still in flight.) The WARC archive both runs write
survives it: every file valid, no record twice, every page crawldb holds captured."""

from __future__ import annotations

import os
import signal
import time
from collections import Counter
from pathlib import Path

from testkit.archive import check_archive
from testkit.crawl import query, run_crawl, snapshot, start_crawl, wait_for_requests
from testkit.simweb import govweb
from testkit.simweb.expected import E2E_SETTINGS, assert_complete
from testkit.simweb.server import SimWeb


def test_kill_9_half_way_then_continue(gov_web: SimWeb, tmp_path: Path) -> None:
    db_url = f"sqlite:///{tmp_path / 'crawldb.sqlite3'}"
    # A small delay spreads the crawl out so that the kill lands in the middle of it.
    warc = tmp_path / "warc"
    settings = {
        **E2E_SETTINGS, "DEFAULT_CRAWL_DELAY": 0.2, "DB_FLUSH_INTERVAL": 0.5,
        "WARC_DIR": str(warc),
    }  # fmt: skip
    gov_web.reset_log()
    crawl = start_crawl(gov_web, db_url, tmp_path / "run1", govweb.SEEDS, **settings)
    wait_for_requests(gov_web, 25)
    # The kill lands once something is in crawldb (its first write waits for the writer's
    # process to start), while most of the crawl is still to come.
    deadline = time.monotonic() + 30
    while not query(db_url, "SELECT 1 FROM page WHERE page_type_code != 'FRONTIER'"):
        assert time.monotonic() < deadline, "nothing was written in 30 s"
        time.sleep(0.05)
    os.kill(crawl.proc.pid, signal.SIGKILL)
    served_first = Counter((h.host, h.target) for h in gov_web.requested())
    crawl.proc.wait(timeout=30)
    assert crawl.proc.returncode == -signal.SIGKILL
    recorded = {
        url
        for url, ptype in query(db_url, "SELECT url, page_type_code FROM page")
        if ptype != "FRONTIER"
    }
    assert recorded, "nothing was written before the kill; this test would prove nothing"
    assert len(recorded) < 40, "the crawl was over before the kill; this proves nothing"

    gov_web.reset_log()
    again = run_crawl(gov_web, db_url, tmp_path / "run2", govweb.SEEDS, **settings)
    assert again.returncode == 0, again.log[-3000:]
    assert "Traceback" not in again.log
    assert_complete(snapshot(db_url))
    second = {(h.host, h.target) for h in gov_web.requested()}
    refetched = {
        url for url in recorded if (url.split("/", 3)[2], "/" + url.split("/", 3)[3]) in second
    }
    assert refetched == set()

    # The kill left the archive's process to close its file when its input ended (or the
    # next run closes it at its last complete record): none is left open, nothing is
    # twice, nothing missing.
    served = served_first + Counter((h.host, h.target) for h in gov_web.requested())
    check_archive(warc, db_url, served)


def test_ctrl_c_half_way_then_continue(gov_web: SimWeb, tmp_path: Path) -> None:
    """A graceful stop (SIGINT, as Ctrl-C sends) finishes what is in flight and writes it:
    the next run fetches nothing the first one asked for."""
    db_url = f"sqlite:///{tmp_path / 'crawldb.sqlite3'}"
    settings = {**E2E_SETTINGS, "DEFAULT_CRAWL_DELAY": 0.2}
    gov_web.reset_log()
    crawl = start_crawl(gov_web, db_url, tmp_path / "run1", govweb.SEEDS, **settings)
    wait_for_requests(gov_web, 25)
    os.kill(crawl.proc.pid, signal.SIGINT)
    first_run = crawl.wait()
    assert first_run.returncode == 0, first_run.log[-3000:]
    assert first_run.stats["finish_reason"] == "shutdown"
    # Retried pages (a 500, a timeout) may be asked for again; robots.txt is asked per run.
    repeatable = {"/robots.txt", "/napaka", "/pocasi"}
    first = {(h.host, h.target) for h in gov_web.requested() if h.target not in repeatable}

    gov_web.reset_log()
    again = run_crawl(gov_web, db_url, tmp_path / "run2", govweb.SEEDS, **settings)
    assert again.returncode == 0, again.log[-3000:]
    assert_complete(snapshot(db_url))
    second = {(h.host, h.target) for h in gov_web.requested()}
    assert first & second == set()
