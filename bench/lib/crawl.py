"""govsi crawls as several benchmarks run them, and what their logs say."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from testkit.crawl import RunningCrawl, start_crawl
from testkit.pgcluster import PgCluster
from testkit.simweb.server import SimWeb


def unthrottled_crawl(
    pg: PgCluster, web: SimWeb, seeds: list[str], name: str, **settings: object
) -> tuple[str, Path, RunningCrawl]:
    """``scrapy crawl govsi`` of ``web`` into a new database ``name``, delay 0, rendering
    as by default (the test harness turns it off); ``settings`` over those."""
    workdir = Path(tempfile.mkdtemp(prefix=f"govsi-{name}-"))
    db_url = pg.create_database(name)
    running = start_crawl(web, db_url, workdir, seeds, DEFAULT_CRAWL_DELAY=0, RENDER_JS="auto",
                          CONCURRENT_REQUESTS=16, PROGRESS_INTERVAL=30, **settings)  # fmt: skip
    return db_url, workdir, running


def log_findings(log: str) -> dict[str, Any]:
    """A crawl log's errors and warnings (counts, the first ten) and its last progress lines."""
    lines = log.splitlines()
    errors = [ln for ln in lines if " ERROR: " in ln or "Traceback" in ln or " CRITICAL: " in ln]
    warnings = [ln for ln in lines if " WARNING: " in ln]
    progress = [ln.split("INFO: ", 1)[-1] for ln in lines if "progress:" in ln]
    return {"errors": len(errors), "error_examples": errors[:10], "warnings": len(warnings),
            "warning_examples": warnings[:10], "progress": progress[-5:]}  # fmt: skip
