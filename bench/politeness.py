"""Politeness benchmark: how close to the politeness limit a crawl gets, without breaking it.

Serves a generated web (``bench.benchwebs``: ``many`` small hosts, or one large ``skewed``
host among small ones) and crawls it with govsi (``scrapy crawl govsi``) and/or a plain
Scrapy spider (``bench.plain_spider``, per-host delays given as ``DOWNLOAD_SLOTS``, Scrapy's
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
import os
import shutil
import sys
import tempfile
import time
from collections import Counter, defaultdict
from itertools import pairwise
from pathlib import Path
from typing import Any

from bench.benchwebs import BenchWeb, many_web, mix_in_javascript, skewed_web
from bench.plain_spider import start_plain
from bench.sysinfo import code, machine, write_result
from tests.simweb.server import Hit
from tests.support.crawl import ROOT, query, run_crawl

RESULTS = Path(__file__).resolve().parent / "results"
WEBS = {"many": many_web, "skewed": skewed_web}
CONCURRENCY = 16


def _gaps(hits: list[Hit], need: Any, rule: str, key: str) -> tuple[list[dict[str, Any]], float]:
    """Violations among time-ordered ``hits`` (``need(a, b)``: the gap a->b must have), and
    the idle time beyond what the rules require."""
    bad: list[dict[str, Any]] = []
    slack = 0.0
    for a, b in pairwise(hits):
        gap, required = b.time - a.time, need(a, b)
        slack += max(0.0, gap - required)
        if gap < required:
            pair = {"first": f"{a.host}{a.target}", "second": f"{b.host}{b.target}"}
            bad.append({"rule": rule, "key": key, "gap": round(gap, 4), "required": required})
            bad[-1].update(pair)
    return bad, slack


def analyse(hits: list[Hit], bw: BenchWeb) -> dict[str, Any]:
    hits = sorted(hits, key=lambda h: h.time)
    if not hits:
        return {"requests": 0}
    default = bw.default_delay
    by_host: dict[str, list[Hit]] = defaultdict(list)
    by_ip: dict[str, list[Hit]] = defaultdict(list)
    for h in hits:
        by_host[h.host].append(h)
        by_ip[h.ip].append(h)

    def host_need(a: Hit, b: Hit) -> float:
        return bw.host_delay.get(a.host, default)

    def ip_need(a: Hit, b: Hit) -> float:
        return max(default, host_need(a, b)) if a.host == b.host else default

    violations: list[dict[str, Any]] = []
    work: list[dict[str, Any]] = []  # the ideal's candidates, with where time went
    first, last = hits[0].time, hits[-1].time
    for kind, groups, rule_need in (("host", by_host, host_need), ("ip", by_ip, ip_need)):
        for key, hs in groups.items():
            delay = bw.host_delay.get(key, default) if kind == "host" else default
            bad, slack = _gaps(hs, rule_need if kind == "ip" else host_need, kind, key)
            violations += bad
            work.append({
                "kind": kind, "key": key, "requests": len(hs), "delay": delay,
                "ideal": round((len(hs) - 1) * delay, 3),
                "starts_after": round(hs[0].time - first, 3),
                "ends_before": round(last - hs[-1].time, 3),
                "idle_beyond_rules": round(slack, 3),
                "hosts": sorted({h.host for h in hs}) if kind == "ip" else None,
            })  # fmt: skip
    work.sort(key=lambda w: -w["ideal"])
    ideal = work[0]["ideal"]
    span = last - first
    counts = Counter((h.host, h.target) for h in hits)
    targets = Counter(
        "page" if k in bw.pages else
        "robots" if k[1] == "/robots.txt" else
        "sitemap" if "sitemap" in k[1] else
        "image" if k[1].endswith(".png") else "other"
        for k in (((h.host, h.target)) for h in hits)
    )  # fmt: skip
    pages = {k for k in counts if k in bw.pages and k[0] in bw.host_delay}
    global_gaps = sorted((b.time - a.time for a, b in pairwise(hits)), reverse=True)
    return {
        "requests": len(hits),
        "requests_by_kind": dict(targets),
        "pages_fetched": len(pages),
        "pages_in_web": len(bw.pages),
        "urls_requested_twice_or_more": sum(1 for n in counts.values() if n > 1),
        "first_to_last_request_s": round(span, 3),
        "ideal_s": ideal,
        "efficiency": round(ideal / span, 3) if span else None,
        "violations_host": sum(1 for v in violations if v["rule"] == "host"),
        "violations_ip": sum(1 for v in violations if v["rule"] == "ip"),
        "violation_examples": sorted(violations, key=lambda v: v["gap"] / v["required"])[:10],
        "min_gap_ratio_host": _min_ratio(by_host, host_need),
        "min_gap_ratio_ip": _min_ratio(by_ip, ip_need),
        "critical_path": work[:3],
        "largest_gaps_between_any_requests_s": [round(g, 3) for g in global_gaps[:5]],
    }


def _min_ratio(groups: dict[str, list[Hit]], need: Any) -> float | None:
    ratios = [(b.time - a.time) / need(a, b) for hs in groups.values() for a, b in pairwise(hs)]
    return round(min(ratios), 3) if ratios else None


def log_findings(log: str) -> dict[str, Any]:
    lines = log.splitlines()
    errors = [ln for ln in lines if " ERROR: " in ln or "Traceback" in ln or " CRITICAL: " in ln]
    warnings = [ln for ln in lines if " WARNING: " in ln]
    progress = [ln.split("INFO: ", 1)[-1] for ln in lines if "progress:" in ln]
    return {"errors": len(errors), "error_examples": errors[:10], "warnings": len(warnings),
            "warning_examples": warnings[:10], "progress": progress[-5:]}  # fmt: skip


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
    load_before = [round(x, 2) for x in os.getloadavg()]
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
    result["loadavg_after"] = [round(x, 2) for x in os.getloadavg()]
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
