"""The crawler's memory while PostgreSQL is away (issue 17 item 3): flat, not growing with
the pages found during the outage.

Crawls ``bench.lib.webs.memory_web`` (endless generated pages, delay 0) into a throwaway
PostgreSQL: ``--before`` seconds normally, then the server is stopped for ``--outage``
seconds while the crawl goes on, then started again for ``--after`` seconds, then SIGINT.
Samples the crawl process's VmRSS every second; reports RSS at the end of each phase, the
slope during the outage (MB per minute), pages fetched during it, items saved to spill
files, and whether everything was written back (no spill file left).

    PYTHONPATH=. python -m bench.outage_memory --outage 180     # ~6 min
"""

from __future__ import annotations

import argparse
import json
import signal
import time
from typing import Any

from bench.lib.crawl import unthrottled_crawl
from bench.lib.measure import memory_mb, slope
from bench.lib.postgres import start_postgres
from bench.lib.results import RESULTS, ROOT, write_result
from bench.lib.sysinfo import code, machine
from bench.lib.webs import memory_web


def mb_per_min(samples: list[tuple[float, float]]) -> float:
    """Least-squares MB per minute of (seconds, MB) samples."""
    return round(60 * (slope(samples) or 0.0), 2)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", type=float, default=60)
    ap.add_argument("--outage", type=float, default=180)
    ap.add_argument("--after", type=float, default=60)
    args = ap.parse_args()
    web, seeds = memory_web()
    web.start()
    pg = start_postgres()
    try:
        _db_url, work, crawl = unthrottled_crawl(pg, web, seeds, "outage_bench")
        started = time.time()
        phases = [("before", args.before), ("outage", args.outage), ("after", args.after)]
        rss: dict[str, list[tuple[float, float]]] = {name: [] for name, _ in phases}
        hits_at: dict[str, int] = {}
        spills_at_outage_end = 0
        for name, seconds in phases:
            if name == "outage":
                pg.stop_server()
            if name == "after":
                spills_at_outage_end = len(list(work.glob("crawldb-unwritten-*.jsonl")))
                pg.start_server()
            end = time.time() + seconds
            while time.time() < end and crawl.proc.poll() is None:
                mem = memory_mb(crawl.proc.pid)
                if mem is not None:
                    rss[name].append((time.time() - started, mem[0]))
                time.sleep(1.0)
            hits_at[name] = len(web.requested())
            last = rss[name][-1][1] if rss[name] else None
            print(f"{name:>7}: {seconds:.0f} s, requests so far {hits_at[name]}, RSS {last} MB",
                  flush=True)  # fmt: skip
        crawl.proc.send_signal(signal.SIGINT)
        run = crawl.wait(timeout=600)
        stats = run.stats
        left = list(work.glob("crawldb-unwritten-*.jsonl"))
        out: dict[str, Any] = {
            "machine": machine(),
            "code": code(ROOT),
            "seconds": {name: s for name, s in phases},
            "rss_mb_end_of": {k: (v[-1][1] if v else None) for k, v in rss.items()},
            "rss_mb_max_during_outage": max((r for _, r in rss["outage"]), default=None),
            # The frontier and the seen-URL sets grow with every crawl of an endless web:
            # the slope before the outage is the baseline to compare with.
            "rss_slope_mb_per_min_before": mb_per_min(rss["before"][10:]),
            "rss_slope_mb_per_min_during_outage": mb_per_min(rss["outage"][10:]),
            "rss_slope_mb_per_min_after": mb_per_min(rss["after"][5:]),
            "requests_during_outage": hits_at["outage"] - hits_at["before"],
            "spill_files_at_outage_end": spills_at_outage_end,
            "spilled_items": stats.get("govsi/db_spilled_items"),
            "flushes_failed": stats.get("govsi/db_flush_failed"),
            "items_written": stats.get("govsi/db_items_written"),
            "spill_files_left_after_the_crawl": len(left),
            "finish_reason": stats.get("finish_reason"),
        }
        print(json.dumps({k: v for k, v in out.items() if k not in ("machine", "code")},
                         indent=1))  # fmt: skip
        write_result(RESULTS / "outage_memory.json", out)
        return 0
    finally:
        pg.stop()
        web.stop()


if __name__ == "__main__":
    raise SystemExit(main())
