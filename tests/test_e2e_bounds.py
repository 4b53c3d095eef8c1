"""End-to-end: pages, sitemaps and headers that are cheap to send and costly to read
(testkit/simweb/floodweb.py) cost the crawler bounded work; the crawl completes, and each
hostile input leaves its reason."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from testkit.crawl import CrawlRun, query, run_crawl
from testkit.simweb import floodweb as fw


@dataclass
class Result:
    run: CrawlRun
    db_url: str
    sent: dict[str, int]

    def rows(self, sql: str) -> list[Any]:
        return query(self.db_url, sql)


@pytest.fixture(scope="module")
def crawled(tmp_path_factory: Any) -> Result:
    work: Path = tmp_path_factory.mktemp("bounds")
    web, flood = fw.build()
    web.start()
    db_url = f"sqlite:///{work / 'crawldb.sqlite3'}"
    try:
        run = run_crawl(web, db_url, work, fw.SEEDS, timeout=300, DOWNLOAD_TIMEOUT=20,
                        MEMUSAGE_CHECK_INTERVAL_SECONDS=1)  # fmt: skip
    finally:
        web.stop()
        flood.close()
    assert "Traceback" not in run.log, run.log[-5000:]
    return Result(run, db_url, dict(flood.sent))


def test_the_crawl_completes_with_every_ordinary_page_stored(crawled: Result) -> None:
    assert crawled.run.returncode == 0, crawled.run.log[-3000:]
    assert crawled.run.stats["finish_reason"] == "finished"
    pages = dict(crawled.rows("SELECT url, page_type_code || ' ' || "
                              "coalesce(http_status_code, 0) FROM page"))  # fmt: skip
    for url in fw.ORDINARY:
        assert pages.get(url) == "HTML 200", url


def test_a_30_mb_one_word_page_costs_bounded_memory(crawled: Result) -> None:
    # Its signature needed 16 GB; the crawler's peak RSS (ru_maxrss) stays far below.
    assert crawled.run.stats["memusage/max"] < 1024 * 2**20


def test_a_30_mb_page_is_measured_for_copies_in_the_worker_not_on_the_reactor(
    crawled: Result,
) -> None:
    # Seconds of CPU for its main text and signature: in the worker process.
    assert crawled.run.stats["govsi/duplicates/in_worker"] >= 1
    assert "govsi/duplicates/check_failed" not in crawled.run.stats
    [(key,)] = crawled.rows("SELECT content_hash FROM page WHERE url LIKE '%/beseda'")
    assert key


def test_a_30_mb_page_of_tags_is_read_in_the_worker_up_to_max_parse_tags(
    crawled: Result,
) -> None:
    # 1.4 M elements would be a gigabyte of tree: the worker parses the first 250 000.
    [(ptype, status, error, size)] = crawled.rows(
        "SELECT page_type_code, http_status_code, fetch_error, length(html_content) "
        "FROM page WHERE url LIKE '%/znacke'"
    )
    assert (ptype, status) == ("HTML", 200)
    assert error == "only the first 250000 tags read (MAX_PARSE_TAGS)"
    assert size > 30_000_000  # stored whole
    assert crawled.run.stats["govsi/pages/parse_cut"] == 1
    assert crawled.run.stats["govsi/pages/read_in_worker"] >= 2
    # Its links are the ones read: the home page it links is known, nothing failed.
    assert "govsi/pages/read_failed" not in crawled.run.stats


def test_a_50_mb_sitemap_of_empty_elements_stops_at_the_element_limit(crawled: Result) -> None:
    assert crawled.run.stats["govsi/sitemaps/stopped/elements"] == 1
    assert f"sitemap {fw.P}/prazen.xml.gz: read cut at its limit of elements" in crawled.run.log
    assert crawled.run.stats["govsi/sitemaps/files"] == 2


@pytest.mark.parametrize(("host", "limit"), [(fw.GLAVE, "bytes"), (fw.POLJA, "count")])
def test_a_header_flood_drops_the_connection_with_the_reason(
    crawled: Result, host: str, limit: str
) -> None:
    (error,) = [e for (e,) in crawled.rows(f"SELECT fetch_error FROM page "
                                           f"WHERE url = 'http://{host}/'")]  # fmt: skip
    assert error is not None and error.startswith("HeaderLimitExceeded: "), error
    assert crawled.run.stats[f"govsi/fetch/header_limit/{limit}"] == 1
    # Dropped early: of a 25 MB flood, what the socket buffers hold at most was sent.
    assert crawled.sent[host] < 8 * 2**20, crawled.sent
