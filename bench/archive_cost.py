"""What the WARC archive (WARC_DIR) costs a crawl with the default settings, and what it
takes on disk (issue 31).

The web is ``bench.lib.webs.js_web`` of ``--hosts`` x ``--pages`` pages of ``--page-chars``
characters (a ministry's template by default), every page showing the same 20 KB coat of
arms from its own host (one URL per host, one payload), no delay. Runs alternate without
and with ``WARC_DIR`` (``--rounds`` of each), each timed by Scrapy's ``elapsed_time_seconds``
(spider opened to closed); reports pages/s, the ratio (median of the rounds), the
crawler's CPU, bytes on disk per byte the server sent, and what revisit records saved.

    PYTHONPATH=. python -m bench.archive_cost                 # ~3 min
    PYTHONPATH=. python -m bench.archive_cost --page-chars 0  # small pages

Writes bench/results/archive_cost.json.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
from pathlib import Path
from typing import Any

from bench.lib.measure import ProcessMeter
from bench.lib.results import RESULTS, ROOT, write_result
from bench.lib.sysinfo import code, machine
from bench.lib.webs import js_web
from bench.lib.webs.parts import image_bytes
from testkit.crawl import start_crawl
from testkit.simweb.server import SimWeb


def crawl(web: SimWeb, seeds: list[str], work: Path, warc: bool) -> dict[str, Any]:
    work.mkdir(parents=True)
    settings: dict[str, Any] = {"DEFAULT_CRAWL_DELAY": 0, "CONCURRENT_REQUESTS": 16,
                                "RENDER_JS": "auto"}  # fmt: skip
    if warc:
        settings["WARC_DIR"] = str(work / "warc")
    web.reset_log()
    running = start_crawl(web, f"sqlite:///{work / 'crawldb.sqlite3'}", work, seeds, **settings)
    meter = ProcessMeter(running.proc.pid)
    run = running.wait(timeout=1800)
    cpu = meter.stop()
    stats = run.stats
    elapsed = float(stats["elapsed_time_seconds"])  # type: ignore[arg-type]
    pages = int(stats.get("response_received_count", 0))  # type: ignore[call-overload]
    out: dict[str, Any] = {
        "ok": run.returncode == 0 and "Traceback" not in run.log,
        "crawl_s": round(elapsed, 2),
        "responses": pages,
        "responses_per_s": round(pages / elapsed, 1),
        "crawler_cpu_s": cpu["crawler_s"],
        "cpu": cpu,
        "served_bytes": sum(h.bytes_sent for h in web.requested()),
    }
    if warc:
        files = list((work / "warc").glob("*.warc.gz"))
        out["warc_files"] = len(files)
        out["warc_bytes"] = sum(f.stat().st_size for f in files)
        out["warc"] = {k.removeprefix("govsi/warc/"): v for k, v in stats.items()
                       if str(k).startswith("govsi/warc/")}  # fmt: skip
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hosts", type=int, default=60)
    ap.add_argument("--pages", type=int, default=40)
    ap.add_argument("--page-chars", type=int, default=40_000)
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    logo = image_bytes(random.Random(31), True, 20_000)
    web, seeds, _ = js_web(args.hosts, args.pages, args.page_chars, logo=logo)
    web.start()
    work = Path(tempfile.mkdtemp(prefix="govsi-archive-cost-"))
    runs: dict[str, list[dict[str, Any]]] = {"off": [], "warc": []}
    try:
        for n in range(args.rounds):
            for name in ("off", "warc"):
                r = crawl(web, seeds, work / f"{name}-{n}", name == "warc")
                runs[name].append(r)
                print(f"{name:>4} round {n}: {r['responses_per_s']:6.1f} responses/s in "
                      f"{r['crawl_s']} s  crawler CPU {r['crawler_cpu_s']} s  ok {r['ok']}"
                      + (f"  WARC {r['warc_bytes']} bytes, {r['warc']}" if name == "warc"
                         else ""), flush=True)  # fmt: skip
    finally:
        web.stop()
    speed = {k: statistics.median(r["responses_per_s"] for r in v) for k, v in runs.items()}
    last = runs["warc"][-1]
    payload = last["served_bytes"]
    result = {
        "machine": machine(),
        "code": code(ROOT),
        "web": {
            "hosts": args.hosts,
            "pages": args.pages,
            "page_chars": args.page_chars,
            "logo_bytes": len(logo),
        },
        "runs": runs,
        "responses_per_s_median": speed,
        "warc_vs_off": round(speed["warc"] / speed["off"], 3),
        "disk_bytes_per_served_byte": round(last["warc_bytes"] / payload, 3),
        "revisit_bytes_saved": last["warc"].get("revisit_bytes_saved", 0),
        "revisits": last["warc"].get("revisit", 0),
        "revisit_share_of_served": round(last["warc"].get("revisit_bytes_saved", 0) / payload, 3),
    }
    print(f"WARC on / off: {result['warc_vs_off']}  disk per served byte "
          f"{result['disk_bytes_per_served_byte']}  revisits {result['revisits']} saved "
          f"{result['revisit_bytes_saved']} bytes ({result['revisit_share_of_served']} of "
          "what was served)", flush=True)  # fmt: skip
    write_result(RESULTS / "archive_cost.json", result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
