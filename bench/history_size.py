"""How large does a page's history grow (issue 50: identical versions stored once, retention)?

One URL visited ``--visits`` times, ``--interval-days`` apart, flipping between two
contents of ``--page-kb`` KB at every visit, each visit a batch through crawldb's real
write path (``CrawlWriter`` on a new SQLite file, default settings unless ``--keep-versions``
or ``--keep-months`` say otherwise). Prints the page_version rows, the HTML copies and their
bytes, the crawldb file's size and the mean write time of a visit; writes
bench/results/history_size.json.

    PYTHONPATH=. python -m bench.history_size                  # 40 and 400 visits, ~10 s
    PYTHONPATH=. python -m bench.history_size --visits 40 --page-kb 100
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import text

from bench.lib.results import RESULTS, write_run
from govsi.items import FetchedPage
from govsi.store import database
from govsi.store.history import Retention
from govsi.store.writer import CrawlWriter

START = datetime(2026, 11, 22, 12)


def body(word: str, kb: int) -> str:
    """About ``kb`` KB of HTML whose main text is its own."""
    paragraph = f"<p>{word} " + "besedilo novice " * 6 + "</p>"
    return f"<html><body>{paragraph * (kb * 1024 // len(paragraph))}</body></html>"


def measure(visits: int, kb: int, days: float, retention: Retention, work: Path) -> dict[str, Any]:
    path = work / f"crawldb-{visits}.sqlite3"
    engine = database.make_engine(f"sqlite:///{path}")
    database.migrate(engine)
    writer = CrawlWriter(engine, history=retention)
    one, two = body("prva", kb), body("druga", kb)
    started = time.perf_counter()
    for visit in range(visits):
        html, key = (two, "two") if visit % 2 else (one, "one")
        when = START + timedelta(days=visit * days)
        writer.add(FetchedPage("https://www.gov.si/novica", 1, "HTML", when, 200,
                               html_content=html, content_hash=key))  # fmt: skip
        assert writer.flush()
    seconds = time.perf_counter() - started
    with engine.connect() as conn:
        rows = conn.execute(text("SELECT count(*) FROM page_version")).scalar()
        copies, size = conn.execute(
            text("SELECT count(*), coalesce(sum(size), 0) FROM page_version_content")
        ).one()
    engine.dispose()
    result = {
        "visits": visits, "page_bytes": len(one.encode()), "page_version_rows": rows,
        "html_copies": copies, "html_bytes": size, "crawldb_file_bytes": path.stat().st_size,
        "ms_per_visit": round(1000 * seconds / visits, 2),
    }  # fmt: skip
    print(result, flush=True)
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--visits", type=int, nargs="+", default=[40, 400])
    parser.add_argument("--page-kb", type=int, default=100)
    parser.add_argument("--interval-days", type=float, default=1.0)
    parser.add_argument("--keep-versions", type=int, default=Retention().versions)
    parser.add_argument("--keep-months", type=int, default=Retention().months)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    retention = Retention(args.keep_versions, args.keep_months)
    work = Path(tempfile.mkdtemp(prefix="govsi-history-bench-"))
    try:
        results = [
            measure(n, args.page_kb, args.interval_days, retention, work) for n in args.visits
        ]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    write_run(args.out / "history_size.json", args, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
