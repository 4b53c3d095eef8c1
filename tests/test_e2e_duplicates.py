"""Duplicates across runs and processes, crawled for real: a crawl resumed after the
original was stored, and two crawler processes sharing one PostgreSQL crawldb that fetch
copies of each other's pages at the same moment."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import pytest

from testkit.crawl import query, run_crawl, start_crawl
from testkit.pgcluster import PgCluster
from testkit.simweb import govweb
from testkit.simweb.expected import E2E_SETTINGS, EXPECTED_DUPLICATES, EXPECTED_NEAR_DUPLICATES
from testkit.simweb.server import SimWeb

K = "http://kopije.gov.si"
Z = "http://zrcalo.gov.si"
# Copies of one another, across both hosts: each group must end with one original.
GROUPS = {
    "index": ["/"],  # the mirror's index is a copy too
    "article": ["/clanek", "/clanek-kopija"],
    # Near copies of the article: pages of their own (flagged), each with its exact copy.
    "print view": ["/clanek?print=1"],
    "dated article": ["/clanek-datum"],
    "news-1": ["/novica-1"],
    "news-2": ["/novica-2"],
}

ROWS = """
    SELECT p.url, p.page_type_code, p.html_content IS NOT NULL, o.url
    FROM page p LEFT JOIN page o ON o.id = p.duplicate_of
"""


def stored(db_url: str) -> dict[str, tuple[str, bool, str | None]]:
    return {
        url: (kind, has_html, original) for url, kind, has_html, original in query(db_url, ROWS)
    }


@pytest.fixture(scope="module")
def mirror_web() -> Iterator[SimWeb]:
    # zrcalo.gov.si mirrors kopije.gov.si page for page, on an address of its own; neither
    # links to the other, so two crawls seeded one each never fetch the same URL.
    kopije = govweb.kopije()
    web = SimWeb([kopije, dataclasses.replace(kopije, name="zrcalo.gov.si", ip_index=1)])
    web.start()
    yield web
    web.stop()


def test_copies_fetched_after_a_restart_name_the_original_stored_before(
    mirror_web: SimWeb, tmp_path: Path
) -> None:
    db_url = f"sqlite:///{tmp_path / 'crawldb.sqlite3'}"
    # robots.txt, the index, the original; the delay keeps the next request from going out
    # while the crawl closes.
    stop = {"CLOSESPIDER_PAGECOUNT": 3, "DEFAULT_CRAWL_DELAY": 0.5}
    first = run_crawl(mirror_web, db_url, tmp_path / "run1", [f"{K}/"], **stop, **E2E_SETTINGS)
    assert first.returncode == 0, first.log[-3000:]
    after_first = stored(db_url)
    # The stop fell between the original and its copies, or this test would prove nothing.
    assert after_first[f"{K}/clanek"] == ("HTML", True, None)
    assert all(
        after_first.get(copy, ("FRONTIER",))[0] == "FRONTIER" for copy in EXPECTED_DUPLICATES
    )

    second = run_crawl(mirror_web, db_url, tmp_path / "run2", [f"{K}/"], **E2E_SETTINGS)
    assert second.returncode == 0, second.log[-3000:]
    final = stored(db_url)
    duplicates = {url: row[2] for url, row in final.items() if row[0] == "DUPLICATE"}
    assert duplicates == EXPECTED_DUPLICATES
    assert all(not final[url][1] for url in duplicates)
    originals = {url for url, row in final.items() if row[0] == "HTML"}
    assert originals == {f"{K}/", f"{K}/clanek", f"{K}/clanek?print=1", f"{K}/clanek-datum",
                         f"{K}/novica-1", f"{K}/novica-2"}  # fmt: skip
    # The near copies are kept whole, and say which page they resemble.
    assert final[f"{K}/clanek-datum"][1] and final[f"{K}/clanek?print=1"][1]
    flagged = query(db_url, "SELECT p.url, o.url, p.similarity FROM page p JOIN page o "
                            "ON o.id = p.near_duplicate_of")  # fmt: skip
    resembles = {a: b for a, b, _ in flagged}
    assert resembles.keys() == EXPECTED_NEAR_DUPLICATES.keys()
    # The print view has the article's main text word for word; the dated article is as
    # like the one as the other.
    assert resembles[f"{K}/clanek?print=1"] == f"{K}/clanek"
    assert {a: s for a, _, s in flagged}[f"{K}/clanek?print=1"] == 1.0
    assert resembles[f"{K}/clanek-datum"] in (f"{K}/clanek", f"{K}/clanek?print=1")
    assert f"{K}/samo-v-kopiji" not in final  # a copy's links are not followed


def test_two_processes_fetching_copies_at_once_keep_one_original(
    mirror_web: SimWeb, pg_cluster: PgCluster, tmp_path: Path
) -> None:
    db_url = pg_cluster.create_database("two_processes_copies")
    # Each crawl takes seconds (a delay per page) and writes only when it ends, so each
    # fetches its copies before the other's are in crawldb: the race the writer settles.
    settings = {**E2E_SETTINGS, "DEFAULT_CRAWL_DELAY": 0.3, "DB_FLUSH_INTERVAL": 60}
    mirror_web.reset_log()
    crawls = [
        start_crawl(mirror_web, db_url, tmp_path / host, [f"http://{host}/"], **settings)
        for host in ("kopije.gov.si", "zrcalo.gov.si")
    ]
    runs = [c.wait() for c in crawls]
    for run in runs:
        assert run.returncode == 0, run.log[-3000:]
        assert "Traceback" not in run.log
    final = stored(db_url)
    for name, paths in GROUPS.items():
        group = [f"{base}{p}" for base in (K, Z) for p in paths]
        originals = [url for url in group if final[url][0] == "HTML"]
        assert len(originals) == 1, (name, {u: final[u] for u in group})
        (original,) = originals
        assert final[original] == ("HTML", True, None)
        for url in group:
            if url != original:
                assert final[url] == ("DUPLICATE", False, original), (name, url)
    for base in (K, Z):
        assert f"{base}/samo-v-kopiji" not in final
    # Each page was fetched once, by the process that owns its host.
    hits = [(h.host, h.target) for h in mirror_web.requested() if h.target != "/robots.txt"]
    assert len(hits) == len(set(hits))
    # The race happened: some copy was judged an original by its process, then settled.
    assert sum(int(r.stats.get("govsi/pages/duplicate_at_write", 0)) for r in runs) >= 1  # type: ignore[call-overload]
