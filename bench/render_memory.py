"""The browser's memory over a long rendered crawl (issue 5: "memory stays flat").

Serves an endless web (``--hosts`` hosts, each page linking to two new ones and having a
third inserted by a script; a stylesheet, a font and an outside script the browser must
refuse) and crawls it with RENDER_JS=always, DEFAULT_CRAWL_DELAY=0, until ``--renders``
pages have been rendered or ``--minutes`` have passed; then stops the crawl with SIGINT.

Every 5 s it samples the proportional set size (PSS, /proc/<pid>/smaps_rollup) summed
over the crawl's Chromium processes -- PSS, not RSS: Chromium's processes share most of
their pages, and summing their RSS counts those pages once per process -- with the number
of Chromium processes, the crawl process's own RSS, and the rendered pages in crawldb.
Flat means: the mean PSS of the last fifth of the run is within 15 % of the mean of the
second fifth (the first is start-up), and the least-squares slope over the second half is
reported in MB per 1 000 renders.

    PYTHONPATH=. python -m bench.render_memory                  # ~40 min, 6 000 renders
    PYTHONPATH=. python -m bench.render_memory --renders 500    # quick look

Writes bench/results/render-memory.json.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import signal
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.lib.measure import pss_kb, rss_kb, slope
from bench.lib.results import RESULTS, ROOT, write_result
from bench.lib.sysinfo import code, machine
from bench.lib.webs import endless_js_web
from testkit.crawl import browser_pids, query, start_crawl


def browser_pss(crawl_pid: int) -> tuple[float, int]:
    """(summed PSS in MB, process count) of the Chromium processes under the crawl."""
    pids = browser_pids(crawl_pid)
    return round(sum(pss_kb(pid) for pid in pids) / 1024, 1), len(pids)


def _mean(xs: list[float]) -> float:
    return sum(xs) / len(xs) if xs else 0.0


def summarize(samples: list[list[float]]) -> dict[str, Any]:
    """samples: [t, pss_mb, processes, crawler_rss_mb, rendered]."""
    live = [s for s in samples if s[1] > 0]
    fifth = max(1, len(live) // 5)
    second = _mean([s[1] for s in live[fifth : 2 * fifth]])
    last = _mean([s[1] for s in live[-fifth:]])
    half = live[len(live) // 2 :]
    per_k = slope([(s[4], s[1]) for s in half]) if len(half) >= 3 else None
    return {
        "pss_mb_second_fifth_mean": round(second, 1),
        "pss_mb_last_fifth_mean": round(last, 1),
        "pss_mb_peak": max((s[1] for s in live), default=0.0),
        "last_over_second": round(last / second, 3) if second else None,
        "flat": bool(second) and abs(last / second - 1) <= 0.15,
        "slope_mb_per_1000_renders_second_half": round(1000 * per_k, 1) if per_k else None,
        "processes_max": max((s[2] for s in live), default=0),
        "crawler_rss_mb_last": live[-1][3] if live else None,
        "rendered": int(samples[-1][4]) if samples else 0,
    }


def run(hosts: int, renders: int, minutes: float, max_pages: int) -> dict[str, Any]:
    web, seeds = endless_js_web(hosts)
    web.start()
    work = Path(tempfile.mkdtemp(prefix="govsi-render-memory-"))
    db = f"sqlite:///{work / 'crawl.sqlite3'}"
    try:
        crawl = start_crawl(
            web, db, work / "run", seeds, RENDER_JS="always", DEFAULT_CRAWL_DELAY=0,
            RENDER_MAX_PAGES=max_pages,
            CONCURRENT_REQUESTS=16, LOG_LEVEL="INFO",
        )  # fmt: skip
        proc = crawl.proc
        started = time.monotonic()
        samples: list[list[float]] = []
        rendered, stopped_at = 0, 0.0
        while proc.poll() is None:
            now = time.monotonic() - started
            with contextlib.suppress(Exception):  # the crawl may hold SQLite's write lock
                rendered = query(db, "SELECT count(*) FROM page WHERE rendered")[0][0]
            pss, nproc = browser_pss(proc.pid)
            rss = rss_kb(proc.pid) / 1024
            samples.append([round(now, 1), pss, nproc, round(rss, 1), rendered])
            if len(samples) % 12 == 0:
                print(f"  {now:6.0f} s: rendered {rendered}, browser PSS {pss:.0f} MB in "
                      f"{nproc} processes, crawler RSS {rss:.0f} MB", flush=True)  # fmt: skip
            if not stopped_at and (rendered >= renders or now > minutes * 60):
                stopped_at = now
                proc.send_signal(signal.SIGINT)
            elif stopped_at and now - stopped_at > 300:
                proc.kill()
            time.sleep(5.0)
        # Only while rendering: the tail after SIGINT is the browser shutting down.
        running = [s for s in samples if not stopped_at or s[0] <= stopped_at]
        return {"summary": summarize(running), "samples": samples,
                "returncode": proc.returncode}  # fmt: skip
    finally:
        web.stop()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hosts", type=int, default=4)
    ap.add_argument("--renders", type=int, default=6000)
    ap.add_argument("--minutes", type=float, default=60)
    ap.add_argument("--max-pages", type=int, default=4, help="RENDER_MAX_PAGES")
    args = ap.parse_args()
    result = run(args.hosts, args.renders, args.minutes, args.max_pages)
    out = {"benchmark": "render_memory", "machine": machine(), "code": code(ROOT),
           "args": vars(args), **result}  # fmt: skip
    write_result(RESULTS / "render-memory.json", out)
    print(json.dumps(out["summary"], indent=1))


if __name__ == "__main__":
    main()
