"""The crawl of the simulated .gov.si web that the end-to-end tests of the crawl and of its
archive share (the ``crawled`` fixture): one ``scrapy crawl govsi`` per database, into
SQLite and a real PostgreSQL, writing a WARC archive as it goes."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from testkit.crawl import CrawlRun, query, run_crawl
from testkit.simweb import govweb
from testkit.simweb.expected import E2E_SETTINGS
from testkit.simweb.server import Hit, SimWeb


@dataclass
class Result:
    run: CrawlRun
    hits: list[Hit]
    db_url: str
    store_binary: bool
    warc_dir: Path
    # The search index the crawl brought up to date as it ended (SEARCH_INDEX).
    search_index: Path

    def rows(self, sql: str) -> list[Any]:
        return query(self.db_url, sql)


def crawl_gov(gov_web: SimWeb, db_url: str, work: Path, store_binary: bool) -> Result:
    warc_dir = work / "warc"
    search_index = work / "search-index"
    gov_web.reset_log()
    run = run_crawl(
        gov_web,
        db_url,
        work,
        govweb.SEEDS,
        STORE_BINARY_DATA=store_binary,
        WARC_DIR=str(warc_dir),
        WARC_OPERATOR="e2e tests",
        SEARCH_INDEX=str(search_index),
        **{**E2E_SETTINGS, "RETRY_TIMES": 2},
    )
    assert run.returncode == 0, run.log[-5000:]
    # Errors inside components (a signal handler, a pipeline) are only logged by Scrapy.
    assert "Traceback" not in run.log, run.log
    return Result(run, gov_web.requested(), db_url, store_binary, warc_dir, search_index)
