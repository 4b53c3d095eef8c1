"""What crawldb's change rows (issue 52, govsi/store/changes.py) cost the store:

- ``write``: ``--pages`` HTML pages (~``--page-kb`` KB, real-sized main texts) written
  through ``CrawlWriter`` in batches of ``--batch`` on a new SQLite file: a first crawl
  (every page ``new``), then a revisit round in which ``--changed`` of the pages changed:
  the mean time per batch, and of it the time spent in ``ChangeRows.write`` (the rows,
  the replaced texts read, retention);
- ``backfill``: a crawldb at revision 0020 of ``--old-pages`` fetched pages, each with
  ``--old-versions`` ``page_version`` rows, upgraded to 0021 in a process of its own: the
  seconds it took, the rows made, and the process's peak RSS above what it held before
  (SQLite; with ``--postgres`` on the test suite's PostgreSQL too).

    PYTHONPATH=. python -m bench.change_rows                      # ~1 min
    PYTHONPATH=. python -m bench.change_rows --parts backfill --postgres

Writes bench/results/change_rows.json.
"""

from __future__ import annotations

import argparse
import multiprocessing
import resource
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import text

from bench.lib.postgres import start_postgres
from bench.lib.results import RESULTS, write_run
from govsi.items import FetchedPage, PageText
from govsi.store import changes, database
from govsi.store.writer import CrawlWriter
from testkit.crawldb import upgrade_to

START = datetime(2026, 11, 22, 12)


def page(i: int, round_: int, kb: int, changed: bool) -> FetchedPage:
    words = f"novica {i} " + ("besedilo o razpisu ministrstva " * (kb * 1024 // 32))
    if changed:
        words += f" popravek {round_}"
    html = f"<html><body><main>{words}</main></body></html>"
    return FetchedPage(
        f"https://www.gov.si/novice/{i}", 1, "HTML", START + timedelta(days=round_), 200,
        html_content=html, content_hash=f"{i}:{changed}",
        text=PageText("HTML", "ok", words, title=f"Novica {i}"),
    )  # fmt: skip


def write_part(args: argparse.Namespace, work: Path) -> list[dict[str, Any]]:
    out = []
    real = changes.ChangeRows.write
    spent = [0.0]

    def timed(self: changes.ChangeRows, conn: Any) -> int:
        t0 = time.perf_counter()
        try:
            return real(self, conn)
        finally:
            spent[0] += time.perf_counter() - t0

    changes.ChangeRows.write = timed  # type: ignore[method-assign]
    engine = database.make_engine(f"sqlite:///{work / 'write.sqlite3'}")
    database.migrate(engine)
    w = CrawlWriter(engine)
    every = max(int(1 / args.changed), 1) if args.changed > 0 else 0
    for round_ in (0, 1):
        took, batches, spent[0] = 0.0, 0, 0.0
        for start in range(0, args.pages, args.batch):
            for i in range(start, min(start + args.batch, args.pages)):
                w.add(page(i, round_, args.page_kb, bool(round_ and every and i % every == 0)))
            t0 = time.perf_counter()
            assert w.flush()
            took += time.perf_counter() - t0
            batches += 1
        with engine.connect() as conn:
            made = conn.execute(text("SELECT count(*) FROM page_change")).scalar_one()
        result = {"part": "write", "round": "first" if round_ == 0 else "revisit",
                  "ms_per_batch": round(1000 * took / batches, 1),
                  "ms_per_batch_in_change_rows": round(1000 * spent[0] / batches, 1),
                  "page_change_rows": made}  # fmt: skip
        print(result, flush=True)
        out.append(result)
    engine.dispose()
    changes.ChangeRows.write = real  # type: ignore[method-assign]
    return out


def _old_crawldb(url: str, pages: int, versions: int) -> None:
    engine = database.make_engine(url)
    upgrade_to(engine, "0020")
    step = 10_000
    with engine.begin() as conn:
        for start in range(1, pages + 1, step):
            ids = range(start, min(start + step, pages + 1))
            conn.execute(text(
                "INSERT INTO page (id, page_type_code, url, http_status_code, accessed_time, "
                "changed_time, depth, content_hash) VALUES (:id, 'HTML', :url, :s, :t, :t, 1, 'k')"
            ), [{"id": i, "url": f"https://www.gov.si/{i}", "s": 404 if i % 50 == 0 else 200,
                 "t": START + timedelta(days=versions)} for i in ids])  # fmt: skip
            conn.execute(text(
                "INSERT INTO page_text (page_id, kind, status, title, text, truncated, "
                "extracted_at) VALUES (:p, 'HTML', 'ok', :t, 'besedilo', false, :at)"
            ), [{"p": i, "t": f"Stran {i}", "at": START} for i in ids])  # fmt: skip
            if versions:
                conn.execute(text(
                    "INSERT INTO page_version (page_id, page_type_code, http_status_code, "
                    "changed_time, accessed_time) VALUES (:p, 'HTML', 200, :c, :c)"
                ), [{"p": i, "c": START + timedelta(days=v)} for i in ids
                    for v in range(versions)])  # fmt: skip
    engine.dispose()


def _upgrade(url: str, queue: Any) -> None:
    engine = database.make_engine(url)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0 = time.perf_counter()
    database.upgrade(engine)
    took = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with engine.connect() as conn:
        made = conn.execute(text("SELECT count(*) FROM page_change")).scalar_one()
    queue.put({"seconds": round(took, 2), "rows_made": made,
               "peak_rss_above_start_mb": round((peak - before) / 1024, 1)})  # fmt: skip


def backfill_part(args: argparse.Namespace, work: Path) -> list[dict[str, Any]]:
    out = [_backfill(args, f"sqlite:///{work / 'old.sqlite3'}", "sqlite")]
    if args.postgres:
        pg = start_postgres()
        try:
            out.append(_backfill(args, pg.create_database("changes0020"), "postgresql"))
        finally:
            pg.stop()
    return out


def _backfill(args: argparse.Namespace, url: str, backend: str) -> dict[str, Any]:
    t0 = time.perf_counter()
    _old_crawldb(url, args.old_pages, args.old_versions)
    print(f"crawldb at 0020 built in {time.perf_counter() - t0:.1f} s", flush=True)
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    proc = ctx.Process(target=_upgrade, args=(url, queue))
    proc.start()
    result = {"part": "backfill", "backend": backend, "pages": args.old_pages,
              "versions": args.old_pages * args.old_versions, **queue.get()}  # fmt: skip
    proc.join()
    print(result, flush=True)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parts", default="write,backfill")
    parser.add_argument("--pages", type=int, default=4000)
    parser.add_argument("--batch", type=int, default=200)
    parser.add_argument("--page-kb", type=int, default=8)
    parser.add_argument("--changed", type=float, default=0.1)
    parser.add_argument("--old-pages", type=int, default=200_000)
    parser.add_argument("--old-versions", type=int, default=2)
    parser.add_argument("--postgres", action="store_true", help="backfill on PostgreSQL too")
    args = parser.parse_args(argv)
    results: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="change-rows-") as tmp:
        work = Path(tmp)
        parts = args.parts.split(",")
        if "write" in parts:
            results += write_part(args, work)
        if "backfill" in parts:
            results += backfill_part(args, work)
    write_run(RESULTS / "change_rows.json", args, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
