"""RENDER_JS off / always / auto on a local web where about 10 % of the pages need
JavaScript for some of their links.

The web: ``--hosts`` hosts of ``--pages`` pages. On the first host ("the app host") every
page is served with part of its links and text inserted by a script, each pointing to a
page reachable only that way; on the others, pages are plain HTML with an analytics script
that changes nothing. Every page has a stylesheet, a font and an outside script the
browser must not load. Delay 0. Reported per mode: crawl time, pages/s, pages rendered
(and how many needed it), the share of JavaScript-only pages found, and the browser's
refused requests. ``auto`` must find >= 99 % of the JavaScript-only pages while rendering
at most 1.2 x the pages that need it plus RENDER_SAMPLE_PAGES per script signature (the
other hosts' analytics snippet is one signature). ``bench/render_cost.py`` measures what
rendering costs with the default settings.

    PYTHONPATH=. python -m bench.render_speed                 # ~5 min
    PYTHONPATH=. python -m bench.render_speed --modes auto --hosts 10 --pages 40
"""

from __future__ import annotations

import argparse
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from bench.lib.measure import browser_processes, rss_kb
from bench.lib.results import RESULTS, ROOT, write_result
from bench.lib.sysinfo import code, machine
from bench.lib.webs import js_web
from testkit.crawl import query, run_crawl
from testkit.simweb.server import SimWeb


def browser_rss_mb() -> float:
    """Resident memory of every Chromium process on the machine (the benchmark's own)."""
    return round(sum(rss_kb(pid) for pid in browser_processes()) / 1024, 1)


class RssSampler(threading.Thread):
    """Samples the browsers' memory every second while a crawl runs."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.samples: list[tuple[float, float]] = []
        self.stop = threading.Event()

    def run(self) -> None:
        start = time.monotonic()
        while not self.stop.wait(1.0):
            self.samples.append((round(time.monotonic() - start, 1), browser_rss_mb()))


def run(web: SimWeb, seeds: list[str], js_only: set[str], mode: str, work: Path) -> dict[str, Any]:
    db = f"sqlite:///{work / f'{mode}.sqlite3'}"
    web.reset_log()
    sampler = RssSampler()
    sampler.start()
    started = time.perf_counter()
    result = run_crawl(
        web, db, work / mode, seeds, timeout=3600, RENDER_JS=mode,
        DEFAULT_CRAWL_DELAY=0,
        CONCURRENT_REQUESTS=16, LOG_LEVEL="INFO",
    )  # fmt: skip
    wall = time.perf_counter() - started
    sampler.stop.set()
    sampler.join()
    rss = [mb for _, mb in sampler.samples if mb > 0]
    stats = result.stats
    rows = query(db, "SELECT url, page_type_code, rendered FROM page")
    html_pages = [u for u, t, _ in rows if t in ("HTML", "DUPLICATE")]
    found = js_only & set(html_pages)
    crawl_s = float(stats.get("elapsed_time_seconds", wall))  # type: ignore[arg-type]
    return {
        "mode": mode,
        "ok": result.returncode == 0,
        "crawl_seconds": round(crawl_s, 1),
        "pages": len(html_pages),
        "pages_per_s": round(len(html_pages) / crawl_s, 1),
        "rendered": sum(1 for _, _, r in rows if r),
        "js_only_found": len(found),
        "js_only_total": len(js_only),
        "browser": {k: v for k, v in stats.items() if str(k).startswith("govsi/render")},
        "requests": len(web.requested()),
        # Browser memory: first and last quarter of the run (flat means no leak), peak.
        "browser_rss_mb": {
            "first_quarter_max": max(rss[: max(1, len(rss) // 4)], default=0),
            "last_quarter_max": max(rss[-max(1, len(rss) // 4) :], default=0),
            "peak": max(rss, default=0),
            "samples": sampler.samples,
        },
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--hosts", type=int, default=10)
    ap.add_argument("--pages", type=int, default=40, help="pages per host (the app host too)")
    ap.add_argument("--modes", default="off,always,auto")
    args = ap.parse_args()
    web, seeds, js_only = js_web(args.hosts, args.pages)
    web.start()
    results = []
    need = args.pages  # the app host's pages
    allowance = 3  # one script signature sampled (the snippet the other hosts share)
    try:
        with tempfile.TemporaryDirectory(prefix="govsi-render-") as tmp:
            for mode in args.modes.split(","):
                r = run(web, seeds, js_only, mode, Path(tmp))
                results.append(r)
                share = r["js_only_found"] / r["js_only_total"]
                mem = r["browser_rss_mb"]
                print(f"{mode:>6}: {r['crawl_seconds']:>6.1f} s  {r['pages']:>5} pages  "
                      f"{r['pages_per_s']:>5.1f} pages/s  rendered {r['rendered']:>4} "
                      f"(need {need}, bound {1.2 * need + allowance:.0f})  "
                      f"JS-only found {share:.1%}  browser MB {mem['first_quarter_max']}"
                      f" -> {mem['last_quarter_max']}  ok={r['ok']}",
                      flush=True)  # fmt: skip
    finally:
        web.stop()
    payload = {"argv": vars(args), "machine": machine(), "code": code(ROOT), "results": results}
    write_result(RESULTS / "render_speed.json", payload)
    return 0 if all(r["ok"] for r in results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
