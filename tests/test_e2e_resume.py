"""A crawl stopped part-way and run again ends with the same crawldb as one that never
stopped, without fetching again what it already has; FRESH_START starts over."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from testkit.crawl import query, run_crawl, snapshot
from testkit.simweb import govweb
from testkit.simweb.expected import E2E_SETTINGS, EXPECTED_PAGES, X, assert_complete
from testkit.simweb.server import SimWeb

# Retried by design (a 500 and a timeout), so they may be requested more than once.
RETRIED = {"/napaka", "/pocasi"}


def fetched(hits: list[Any]) -> Counter[tuple[str, str]]:
    return Counter((h.host, h.target) for h in hits if h.target != "/robots.txt")


def test_stopped_crawl_continues_to_the_same_database(gov_web: SimWeb, tmp_path: Path) -> None:
    db_url = f"sqlite:///{tmp_path / 'crawldb.sqlite3'}"

    gov_web.reset_log()
    first = run_crawl(
        gov_web, db_url, tmp_path / "run1", govweb.SEEDS, CLOSESPIDER_PAGECOUNT=12, **E2E_SETTINGS
    )
    assert first.returncode == 0, first.log[-3000:]
    assert first.stats["finish_reason"] == "closespider_pagecount"
    first_hits = fetched(gov_web.requested())
    done_after_first = {
        url
        for url, ptype in query(db_url, "SELECT url, page_type_code FROM page")
        if ptype != "FRONTIER"
    }
    images_after_first = {
        url for (url,) in query(db_url, "SELECT url FROM image WHERE accessed_time IS NOT NULL")
    }
    # The stop left real work behind, or this test would prove nothing.
    assert len(done_after_first) < len(EXPECTED_PAGES) - 10

    gov_web.reset_log()
    second = run_crawl(gov_web, db_url, tmp_path / "run2", govweb.SEEDS, **E2E_SETTINGS)
    assert second.returncode == 0, second.log[-3000:]
    assert "Traceback" not in first.log + second.log
    second_hits = fetched(gov_web.requested())

    assert_complete(snapshot(db_url))
    # Nothing stored by the first run is fetched again by the second.
    refetched = {
        url
        for url in done_after_first | images_after_first
        if (url.split("/", 3)[2], "/" + url.split("/", 3)[3]) in second_hits
    }
    assert refetched == set()
    # Together the two runs fetched each page once (retries of retried pages aside).
    both = first_hits + second_hits
    twice = {key: n for key, n in both.items() if n > 1 and key[1] not in RETRIED}
    assert twice == {}


def test_fresh_start_empties_crawldb_first(gov_web: SimWeb, tmp_path: Path) -> None:
    db_url = f"sqlite:///{tmp_path / 'crawldb.sqlite3'}"
    seeds = ["http://www.gov.si/"]
    first = run_crawl(gov_web, db_url, tmp_path / "run1", seeds, DEPTH_LIMIT=1, **E2E_SETTINGS)
    assert first.returncode == 0, first.log[-3000:]
    before = snapshot(db_url)
    assert f"{seeds[0]}o-vladi" in before.pages

    # e-prostor.gov.si forbids us everything: a fresh crawl of it is one FRONTIER row.
    again = run_crawl(
        gov_web, db_url, tmp_path / "run2", [f"{X}/"], FRESH_START="true", **E2E_SETTINGS
    )
    assert again.returncode == 0, again.log[-3000:]
    after = snapshot(db_url)
    assert after.pages == {f"{X}/": ("FRONTIER", None)}
    assert after.links == set() and after.images == set()
    assert [d for (d,) in query(db_url, "SELECT domain FROM site")] == ["e-prostor.gov.si"]
    assert query(db_url, "SELECT min(id) FROM page") == [(1,)]
    # Without FRESH_START the same run keeps the earlier crawl's rows.
    keep = run_crawl(gov_web, db_url, tmp_path / "run3", seeds, DEPTH_LIMIT=1, **E2E_SETTINGS)
    assert keep.returncode == 0, keep.log[-3000:]
    kept = snapshot(db_url)
    assert set(after.pages) <= set(kept.pages)
    assert f"{seeds[0]}o-vladi" in kept.pages


def test_continuing_crawl_keeps_the_depth_limit(gov_web: SimWeb, tmp_path: Path) -> None:
    db_url = f"sqlite:///{tmp_path / 'crawldb.sqlite3'}"
    seeds = ["http://www.gov.si/"]
    first = run_crawl(gov_web, db_url, tmp_path / "run1", seeds, DEPTH_LIMIT=1, **E2E_SETTINGS)
    assert first.returncode == 0, first.log[-3000:]
    deeper = query(db_url, "SELECT url FROM page WHERE depth > 1 AND page_type_code = 'FRONTIER'")
    assert deeper, "the limit left nothing behind; this test would prove nothing"

    gov_web.reset_log()
    again = run_crawl(gov_web, db_url, tmp_path / "run2", seeds, DEPTH_LIMIT=1, **E2E_SETTINGS)
    assert again.returncode == 0, again.log[-3000:]
    # The FRONTIER rows beyond the limit stay where they are.
    assert fetched(gov_web.requested()) == Counter()
