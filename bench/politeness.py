"""Politeness benchmark: how close to the politeness limit a crawl gets, without breaking it.

Serves a generated web (``bench.lib.webs``: ``many`` small hosts, or one large ``skewed``
host among small ones) and crawls it with govsi (``scrapy crawl govsi``) and/or a plain
Scrapy spider (``bench.lib.plain_spider``, per-host delays given as ``DOWNLOAD_SLOTS``, Scrapy's
default ±50 % jitter, Scrapy's robots.txt middleware, which ignores Crawl-delay). Every
request is timed at the server on arrival. Reported per run:

- violations: consecutive requests to one host closer than its delay (max of the default
  and its Crawl-delay), and to one IP address closer than DEFAULT_CRAWL_DELAY;
- efficiency = ideal / actual, ideal = the largest of (requests to a host - 1) x its delay
  and (requests to an address - 1) x the default delay; actual = first to last request.

    python -m bench.politeness --web many|skewed|both --crawler govsi|plain|both

Writes bench/results/politeness-<web>-<crawler>.json; exits 1 if govsi broke a rule.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from bench.lib.crawl import log_findings
from bench.lib.measure import loadavg
from bench.lib.plain_spider import start_plain
from bench.lib.politeness import analyse
from bench.lib.results import RESULTS, ROOT, write_result
from bench.lib.sysinfo import code, machine
from bench.lib.webs import BenchWeb, many_web, mix_in_javascript, skewed_web
from testkit.crawl import query, run_crawl

WEBS = {"many": many_web, "skewed": skewed_web}
CONCURRENCY = 16


def run_govsi(bw: BenchWeb, workdir: Path, timeout: float, render: str = "off") -> dict[str, Any]:
    db_url = f"sqlite:///{workdir / 'crawldb.sqlite3'}"
    started = time.time()
    extra: dict[str, str] = {}
    run = run_crawl(bw.web, db_url, workdir, bw.seeds, timeout=timeout,
                    DEFAULT_CRAWL_DELAY=bw.default_delay, CONCURRENT_REQUESTS=CONCURRENCY,
                    PROGRESS_INTERVAL=10, RENDER_JS=render, **extra)  # fmt: skip
    wall = time.time() - started
    html_rows = query(db_url, "SELECT count(*) FROM page WHERE page_type_code = 'HTML'")[0][0]
    stats = run.stats
    return {
        "returncode": run.returncode,
        "wall_s": round(wall, 2),
        "started": started,
        "finish_reason": stats.get("finish_reason"),
        "db_html_rows": html_rows,
        "scrapy_stats": {k: stats.get(k) for k in ("response_received_count",
                         "scheduler/enqueued", "elapsed_time_seconds", "memusage/max",
                         "govsi/robots/forbidden", "downloader/exception_count")},
        "log": log_findings(run.log),
    }  # fmt: skip


def run_plain(bw: BenchWeb, workdir: Path, timeout: float, mode: str) -> dict[str, Any]:
    settings: dict[str, object] = {"ROBOTSTXT_OBEY": True, "CONCURRENT_REQUESTS": CONCURRENCY}
    if mode == "slots":
        settings["DOWNLOAD_SLOTS"] = json.dumps(bw.slots())
    settings["DOWNLOAD_DELAY"] = bw.default_delay
    started = time.time()
    proc = start_plain(bw.web.hosts_map(), bw.seeds, str(workdir), **settings)
    try:
        returncode = proc.wait(timeout)
    except Exception:
        proc.kill()
        returncode = proc.wait()
    wall = time.time() - started
    stats_file, log_file = workdir / "stats.json", workdir / "crawl.log"
    stats = json.loads(stats_file.read_text()) if stats_file.exists() else {}
    log = log_file.read_text(errors="replace") if log_file.exists() else ""
    out = (workdir / "output.txt").read_text(errors="replace")
    return {
        "returncode": returncode,
        "wall_s": round(wall, 2),
        "started": started,
        "delays": "DOWNLOAD_SLOTS per host" if mode == "slots" else "DOWNLOAD_DELAY=default",
        "finish_reason": stats.get("finish_reason"),
        "scrapy_stats": {k: stats.get(k) for k in ("response_received_count",
                         "scheduler/enqueued", "elapsed_time_seconds", "memusage/max",
                         "robotstxt/request_count", "downloader/exception_count")},
        "log": log_findings(log + out),
    }  # fmt: skip


def once(bw: BenchWeb, crawler: str, args: argparse.Namespace) -> dict[str, Any]:
    workdir = Path(tempfile.mkdtemp(prefix=f"govsi-polite-{bw.name}-{crawler}-"))
    bw.web.reset_log()
    load_before = loadavg()
    if crawler == "govsi":
        run = run_govsi(bw, workdir, args.timeout, args.render)
    else:
        run = run_plain(bw, workdir, args.timeout, args.plain_delays)
    result = analyse(bw.web.requested(), bw)
    hits = bw.web.requested()
    if hits:
        result["first_request_after_start_s"] = round(min(h.time for h in hits) - run["started"], 2)
    run.pop("started")
    result.update(run)
    result["loadavg_before"] = load_before
    result["loadavg_after"] = loadavg()
    result["workdir"] = str(workdir)
    if args.keep or (crawler == "govsi" and (result.get("violations_host") or
                                             result.get("violations_ip"))):  # fmt: skip
        result["workdir_kept"] = True
    else:
        shutil.rmtree(workdir, ignore_errors=True)
    return result


def row(web: str, crawler: str, r: dict[str, Any]) -> str:
    return (
        f"{web:7} {crawler:6} {r['wall_s']:7.1f} {r['first_to_last_request_s']:7.1f} "
        f"{r['ideal_s']:7.1f} {r['efficiency']:6.3f} {r['requests']:6} "
        f"{r['pages_fetched']:5}/{r['pages_in_web']:<5} {r['violations_host']:6} "
        f"{r['violations_ip']:6} {r['min_gap_ratio_host']!s:>6} {r['min_gap_ratio_ip']!s:>6} "
        f"{r['log']['errors']:4}"
    )


HEADER = (
    f"{'web':7} {'crawler':6} {'wall s':>7} {'span s':>7} {'ideal s':>7} {'effic':>6} "
    f"{'reqs':>6} {'pages':>11} {'v_host':>6} {'v_ip':>6} {'minr_h':>6} {'minr_ip':>6} "
    f"{'errs':>4}"
)


def main(argv: list[str] | None = None) -> int:
    doc = __doc__ or ""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("--web", choices=["many", "skewed", "both"], default="both")
    ap.add_argument("--crawler", choices=["govsi", "plain", "both"], default="both")
    ap.add_argument("--plain-delays", choices=["slots", "default"], default="slots",
                    help="plain Scrapy: per-host DOWNLOAD_SLOTS delays, or DOWNLOAD_DELAY="
                    "the default for all hosts (Crawl-delay not obeyed)")  # fmt: skip
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--js-share",
        type=float,
        default=0.0,
        help="share of pages that give a link only through a script",
    )
    ap.add_argument("--render", choices=["off", "always", "auto"], default="off",
                    help="govsi's RENDER_JS")  # fmt: skip
    ap.add_argument("--timeout", type=float, default=900)
    ap.add_argument("--keep", action="store_true", help="keep work dirs")
    ap.add_argument("--out", type=Path, default=RESULTS)
    args = ap.parse_args(argv)
    webs = ["many", "skewed"] if args.web == "both" else [args.web]
    crawlers = ["govsi", "plain"] if args.crawler == "both" else [args.crawler]
    mach, measured = machine(), code(ROOT)
    args.out.mkdir(parents=True, exist_ok=True)
    lines, govsi_bad = [], False
    for name in webs:
        bw = WEBS[name](seed=args.seed)
        if args.js_share:
            n = mix_in_javascript(bw, args.js_share, args.seed)
            print(f"{name}: {n} pages give a link only through a script", flush=True)
        bw.web.start()
        try:
            for crawler in crawlers:
                print(f"crawling {name} with {crawler} ...", flush=True)
                r = once(bw, crawler, args)
                lines.append(row(name, crawler, r))
                print(HEADER + "\n" + lines[-1], flush=True)
                for v in r["violation_examples"][:3]:
                    print(f"  violation: {v}", flush=True)
                for e in r["log"]["error_examples"][:3]:
                    print(f"  log: {e}", flush=True)
                if crawler == "govsi" and (r["violations_host"] or r["violations_ip"]):
                    govsi_bad = True
                report = {
                    "benchmark": "politeness", "web": name, "crawler": crawler,
                    "config": {"seed": args.seed, "hosts": len(bw.web.hosts),
                               "DEFAULT_CRAWL_DELAY": bw.default_delay,
                               "CONCURRENT_REQUESTS": CONCURRENCY,
                               "plain_delays": args.plain_delays,
                               "host_delays": Counter(bw.host_delay.values())},
                    "machine": mach, "code": measured, "result": r,
                }  # fmt: skip
                report["config"]["host_delays"] = {
                    str(k): v for k, v in report["config"]["host_delays"].items()
                }
                tag = (
                    "-default-delay" if crawler == "plain" and args.plain_delays != "slots" else ""
                )
                tag += (
                    f"-render-{args.render}" if crawler == "govsi" and args.render != "off" else ""
                )
                write_result(args.out / f"politeness-{name}-{crawler}{tag}.json", report)
        finally:
            bw.web.stop()
    print("\n" + HEADER + "\n" + "\n".join(lines))
    print("span: first to last request; effic: ideal/span; minr: smallest gap / required gap")
    return 1 if govsi_bad else 0


if __name__ == "__main__":
    sys.exit(main())
