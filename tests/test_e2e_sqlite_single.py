"""End-to-end: an SQLite crawldb serves one crawler process; a second one is refused with
a clear message and leaves the first crawl's database alone."""

from __future__ import annotations

from pathlib import Path

from testkit.crawl import query, run_crawl, snapshot, start_crawl, wait_for_requests
from testkit.simweb import govweb
from testkit.simweb.expected import E2E_SETTINGS, EXPECTED_PAGES
from testkit.simweb.server import SimWeb


def test_a_second_process_on_one_sqlite_crawldb_is_refused(gov_web: SimWeb, tmp_path: Path) -> None:
    db_url = f"sqlite:///{tmp_path / 'crawldb.sqlite3'}"
    gov_web.reset_log()
    # A 0.5 s delay keeps the first crawl running while the second one starts.
    slow = {**E2E_SETTINGS, "DEFAULT_CRAWL_DELAY": 0.5}
    first = start_crawl(gov_web, db_url, tmp_path / "one", govweb.SEEDS, **slow)
    wait_for_requests(gov_web, 5)
    second = run_crawl(gov_web, db_url, tmp_path / "two", govweb.SEEDS, timeout=120)
    assert second.returncode != 0
    assert "is in use by another crawl (pid " in second.log
    assert "use PostgreSQL" in second.log
    first_run = first.wait(300)
    assert first_run.returncode == 0, first_run.log[-3000:]
    assert "Spider closed (finished)" in first_run.log
    pages = snapshot(db_url).pages
    assert {u: pages.get(u) for u in EXPECTED_PAGES} == EXPECTED_PAGES  # a whole crawl
    # Once the first crawl is over, the file is free again.
    third = run_crawl(gov_web, db_url, tmp_path / "three", govweb.SEEDS, **E2E_SETTINGS)
    assert third.returncode == 0, third.log[-3000:]
    assert query(db_url, "SELECT count(*) FROM page")[0][0] == len(pages)
