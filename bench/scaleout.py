"""Scale-out benchmark: several crawler processes on one PostgreSQL crawldb (issue 6).

Two parts, each a real ``scrapy crawl govsi`` per worker, all started at once against a
new database of a throwaway PostgreSQL cluster (``testkit/pgcluster.py``):

- ``speed``: pages/s with 1, then 2 processes on a web large enough to be CPU-bound
  (``bench.lib.webs.build_web``, delay 0, ``RENDER_JS=always``: every page is fetched,
  then rendered in each worker's own Chromium). Pages/s is over the wall time from the
  first worker's start to the last one's exit, start-up and migrations included. Checked:
  every page requested exactly once plainly and once by a browser, every image once, one
  HTML row per page.
- ``politeness``: the skewed web of ``bench.lib.webs`` (a 64-page portal with
  Crawl-delay 1.5 s sharing its address with a small host, eight small hosts) with 1, then
  3 processes: efficiency (ideal / actual, see ``bench.lib.politeness``), violations per
  host and per IP address, and pages requested twice (robots.txt is each worker's own).

    PYTHONPATH=. python -m bench.scaleout                          # both parts, ~15 min
    PYTHONPATH=. python -m bench.scaleout --part speed --workers 1,2 --hosts 16 --pages 60
    PYTHONPATH=. python -m bench.scaleout --part politeness --workers 1,3

Writes bench/results/scaleout-<part>.json; exits 1 if a run fails a check.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from collections import Counter
from itertools import pairwise
from pathlib import Path
from typing import Any

from bench.lib.checks import Expected, check_db, disallowed_requests, expected
from bench.lib.measure import CpuSnapshot
from bench.lib.politeness import analyse
from bench.lib.postgres import postmaster_pid, start_postgres
from bench.lib.results import RESULTS, ROOT, write_result
from bench.lib.sysinfo import code, machine
from bench.lib.webs import build_web, skewed_web
from govsi.store.extension import pages_fetched
from testkit.crawl import CrawlRun, start_crawl, wait_for_requests
from testkit.pgcluster import PgCluster
from testkit.simweb.server import SimWeb

# Leases renewed and hosts scanned for often enough that a short benchmark crawl is not
# dominated by the defaults (30 s / 10 s), which suit long crawls.
LEASE_SETTINGS = {"LEASE_TTL": 6, "LEASE_SCAN_INTERVAL": 2}
HANDED = "over to a worker that asks for it"  # the keeper's log line for a hand-over


def run_workers(
    web: SimWeb,
    db_url: str,
    work: Path,
    seeds: list[str],
    n: int,
    timeout: float,
    pg_pid: int | None,
    lease: dict[str, object] = LEASE_SETTINGS,
    **settings: object,
) -> dict[str, Any]:
    web.reset_log()
    cpu_before = CpuSnapshot.take(pg_pid)
    started = time.perf_counter()
    procs = [start_crawl(web, db_url, work / f"w{i}", seeds, **lease, **settings) for i in range(n)]
    runs: list[CrawlRun] = [p.wait(timeout) for p in procs]
    wall = time.perf_counter() - started
    time.sleep(0.2)  # let the postmaster reap the crawls' backends
    problems = []
    for i, run in enumerate(runs):
        if run.returncode != 0 or run.stats.get("finish_reason") != "finished":
            problems.append(
                f"worker {i}: exit {run.returncode}, finish_reason "
                f"{run.stats.get('finish_reason')!r}"
            )
        if "Traceback" in run.log:
            problems.append(f"worker {i}: a traceback in its log")
    per_worker = [
        {
            "pages": sum(v for k, v in r.stats.items() if k.startswith("govsi/pages/")),  # type: ignore[misc]
            "responses": r.stats.get("response_received_count"),
            "leases_granted": r.stats.get("govsi/leases/granted"),
            "fetched_elsewhere": r.stats.get("govsi/leases/fetched_elsewhere"),
            "rendered": r.stats.get("govsi/render/pages"),
            "elapsed_s": r.stats.get("elapsed_time_seconds"),
            "warnings": sum(1 for ln in r.log.splitlines() if " WARNING: " in ln),
        }
        for r in runs
    ]
    return {
        "workers": n,
        "wall_s": round(wall, 2),
        "cpu_seconds": CpuSnapshot.take(pg_pid).since(cpu_before),
        "per_worker": per_worker,
        "problems": problems,
    }


def _report_problems(r: dict[str, Any], work: Path, keep: bool) -> None:
    for p in r["problems"]:
        print(f"  problem: {p}", flush=True)
    if r["problems"] or keep:
        print(f"  work dir kept: {work}", flush=True)
    else:
        shutil.rmtree(work, ignore_errors=True)


# -- speed --------------------------------------------------------------------------------
def speed(pg: PgCluster, args: argparse.Namespace, mach: dict[str, Any]) -> tuple[bool, Any]:
    web, seeds = build_web(args.hosts, args.pages, args.seed)
    exp = expected(web)
    web.start()
    results = []
    try:
        for n in args.workers:
            work = Path(tempfile.mkdtemp(prefix=f"govsi-scaleout-speed-{n}-"))
            db_url = pg.create_database(f"speed_{n}_{int(time.time())}")
            r = run_workers(
                web, db_url, work, seeds, n, args.timeout, postmaster_pid(pg),
                DEFAULT_CRAWL_DELAY=0, CONCURRENT_REQUESTS=16, RENDER_JS="always",
                LOG_LEVEL="INFO",
            )  # fmt: skip
            r["problems"] += check_speed_requests(web, exp)
            db_problems, r["db"] = check_db(db_url, exp)
            r["problems"] += db_problems
            r["pages"] = len(exp["pages"])
            r["pages_per_s"] = round(len(exp["pages"]) / r["wall_s"], 2)
            hits = web.requested()
            span = max(h.time for h in hits) - min(h.time for h in hits) if hits else 0.0
            r["first_to_last_request_s"] = round(span, 2)
            r["pages_per_s_requests"] = round(len(exp["pages"]) / span, 2) if span else None
            results.append(r)
            print(f"speed, {n} worker(s): {r['pages']} pages in {r['wall_s']} s = "
                  f"{r['pages_per_s']} pages/s (first to last request {span:.1f} s); "
                  f"pages per worker {[w['pages'] for w in r['per_worker']]}; CPU "
                  f"{r['cpu_seconds']}; " + ("OK" if not r["problems"] else "FAILED"),
                  flush=True)  # fmt: skip
            _report_problems(r, work, args.keep)
    finally:
        web.stop()
    config = {"hosts": args.hosts, "pages_per_host": args.pages, "seed": args.seed,
              "DEFAULT_CRAWL_DELAY": 0, "RENDER_JS": "always", "CONCURRENT_REQUESTS": 16,
              **LEASE_SETTINGS}  # fmt: skip
    report = {"benchmark": "scaleout-speed", "config": config, "machine": mach, "runs": results}
    return all(not r["problems"] for r in results), report


def check_speed_requests(web: SimWeb, exp: Expected) -> list[str]:
    """Each page twice (plainly, then in the browser), each image once, robots.txt at most
    once per worker and never a disallowed URL."""
    counts = Counter((h.host, h.target) for h in web.requested())
    problems = []
    bad_pages = {k: counts[k] for k in exp["pages"] if counts[k] != 2}
    if bad_pages:
        problems.append(f"{len(bad_pages)} pages not requested exactly twice (plain, "
                        f"rendered), e.g. {sorted(bad_pages.items())[:5]}")  # fmt: skip
    bad_images = {k: counts[k] for k in exp["images"] if counts[k] != 1}
    if bad_images:
        problems.append(f"{len(bad_images)} images not requested exactly once, "
                        f"e.g. {sorted(bad_images.items())[:5]}")  # fmt: skip
    return problems + disallowed_requests(web, counts)


# -- politeness ---------------------------------------------------------------------------
def politeness(pg: PgCluster, args: argparse.Namespace, mach: dict[str, Any]) -> tuple[bool, Any]:
    bw = skewed_web(seed=args.seed)
    bw.web.start()
    lease = LEASE_SETTINGS if args.lease == "fast" else {}
    results = []
    try:
        for n in args.politeness_workers:
            work = Path(tempfile.mkdtemp(prefix=f"govsi-scaleout-polite-{n}-"))
            db_url = pg.create_database(f"polite_{n}_{int(time.time())}")
            r = run_workers(
                bw.web, db_url, work, bw.seeds, n, args.timeout, postmaster_pid(pg), lease,
                DEFAULT_CRAWL_DELAY=bw.default_delay, CONCURRENT_REQUESTS=16,
                RENDER_JS="off", LOG_LEVEL="INFO",
            )  # fmt: skip
            hits = bw.web.requested()
            r.update(analyse(hits, bw))
            counts = Counter((h.host, h.target) for h in hits if h.target != "/robots.txt")
            r["pages_requested_twice"] = sorted(f"{h}{t}" for (h, t), c in counts.items() if c > 1)
            # Once per host for the whole crawl, whatever the number of workers.
            r["robots_requests"] = sum(1 for h in hits if h.target == "/robots.txt")
            r["robots_hosts"] = len({h.host for h in hits if h.target == "/robots.txt"})
            if r["robots_requests"] > r["robots_hosts"]:
                r["problems"].append(
                    f"{r['robots_requests']} robots.txt requests for {r['robots_hosts']} hosts"
                )
            if r["violations_host"] or r["violations_ip"]:
                r["problems"].append(
                    f"{r['violations_host']} host and {r['violations_ip']} address violations"
                )
            if r["pages_requested_twice"]:
                r["problems"].append(f"requested twice: {r['pages_requested_twice'][:5]}")
            if r["pages_fetched"] != r["pages_in_web"]:
                r["problems"].append(f"{r['pages_fetched']} of {r['pages_in_web']} pages fetched")
            if results and n > 1 and r["efficiency"] < 0.95 * results[0]["efficiency"]:
                r["problems"].append(
                    f"efficiency {r['efficiency']} below 0.95 x one worker's "
                    f"{results[0]['efficiency']}"
                )
            results.append(r)
            print(f"politeness, {n} worker(s): span {r['first_to_last_request_s']} s, ideal "
                  f"{r['ideal_s']} s, efficiency {r['efficiency']}, violations host "
                  f"{r['violations_host']} / IP {r['violations_ip']}, smallest gap ratio "
                  f"host {r['min_gap_ratio_host']} / IP {r['min_gap_ratio_ip']}, pages "
                  f"{r['pages_fetched']}/{r['pages_in_web']}, robots.txt "
                  f"{r['robots_requests']} for {r['robots_hosts']} hosts, per worker "
                  f"{[w['pages'] for w in r['per_worker']]}; "
                  + ("OK" if not r["problems"] else "FAILED"), flush=True)  # fmt: skip
            _report_problems(r, work, args.keep)
    finally:
        bw.web.stop()
    config = {"web": "skewed", "seed": args.seed, "DEFAULT_CRAWL_DELAY": bw.default_delay,
              "CONCURRENT_REQUESTS": 16, **lease}  # fmt: skip
    report = {"benchmark": "scaleout-politeness", "config": config, "machine": mach,
              "runs": results}  # fmt: skip
    return all(not r["problems"] for r in results), report


# -- hand-over ----------------------------------------------------------------------------
def handover(pg: PgCluster, args: argparse.Namespace, mach: dict[str, Any]) -> tuple[bool, Any]:
    """One worker crawls two hosts (an address each, 0.5 s apart); a second joins once the
    crawl is under way and is handed one address. The longest pause each address had
    between two requests says how long the hand-over left it idle."""
    delay = 0.5
    web, seeds = build_web(2, args.handover_pages, args.seed)
    web.start()
    work = Path(tempfile.mkdtemp(prefix="govsi-scaleout-handover-"))
    try:
        db_url = pg.create_database(f"handover_{int(time.time())}")
        settings = {"DEFAULT_CRAWL_DELAY": delay, "RENDER_JS": "off", "LOG_LEVEL": "INFO"}
        first = start_crawl(web, db_url, work / "w0", seeds, **settings)
        wait_for_requests(web, 20)
        joined_at = max(h.time for h in web.requested())
        second = start_crawl(web, db_url, work / "w1", seeds, **settings)
        runs = [first.wait(args.timeout), second.wait(args.timeout)]
    finally:
        web.stop()
    hits = sorted(web.requested(), key=lambda h: h.time)
    by_ip: dict[str, list[float]] = {}
    for h in hits:
        by_ip.setdefault(h.ip, []).append(h.time)
    gaps = {ip: max((b - a for a, b in pairwise(t)), default=0.0) for ip, t in by_ip.items()}
    after = {ip: max((b - a for a, b in pairwise([x for x in t if x >= joined_at])), default=0.0)
             for ip, t in by_ip.items()}  # fmt: skip
    counts = Counter((h.host, h.target) for h in hits if h.target != "/robots.txt")
    r = {
        "delay_s": delay,
        "longest_gap_per_address_s": {ip: round(g, 3) for ip, g in gaps.items()},
        "longest_gap_after_join_s": {ip: round(g, 3) for ip, g in after.items()},
        "hand_overs_logged": sum(run.log.count(HANDED) for run in runs),
        "pages_per_worker": [pages_fetched(run.stats) for run in runs],  # type: ignore[arg-type]
        "requested_twice": sum(1 for n in counts.values() if n > 1),
        "problems": [
            f"worker {i}: exit {r.returncode}"
            for i, r in enumerate(runs)
            if r.returncode != 0 or "Traceback" in r.log
        ],
    }
    if r["requested_twice"]:
        r["problems"].append(f"{r['requested_twice']} URLs requested twice")
    print(f"hand-over: longest gap per address {r['longest_gap_per_address_s']} (delay {delay} s), "
          f"pages per worker {r['pages_per_worker']}, hand-overs {r['hand_overs_logged']}; "
          + ("OK" if not r["problems"] else f"FAILED {r['problems']}"), flush=True)  # fmt: skip
    _report_problems(r, work, args.keep)
    config = {"pages_per_host": args.handover_pages, "DEFAULT_CRAWL_DELAY": delay}
    report = {"benchmark": "scaleout-handover", "config": config, "machine": mach, "run": r}
    return not r["problems"], report


def _counts(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--part", choices=["speed", "politeness", "handover", "both"],
                    default="both", help="both = speed and politeness")  # fmt: skip
    ap.add_argument("--handover-pages", type=int, default=150, help="hand-over: pages per host")
    ap.add_argument("--workers", type=_counts, default=[1, 2], help="speed: process counts")
    ap.add_argument("--politeness-workers", type=_counts, default=[1, 2, 3],
                    help="politeness: process counts")  # fmt: skip
    ap.add_argument("--lease", choices=["default", "fast"], default="default",
                    help="politeness: the lease settings users get, or LEASE_SETTINGS")  # fmt: skip
    ap.add_argument("--hosts", type=int, default=16, help="speed: hosts")
    ap.add_argument("--pages", type=int, default=60, help="speed: pages per host")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--timeout", type=float, default=1800)
    ap.add_argument("--keep", action="store_true", help="keep work dirs")
    ap.add_argument("--out", type=Path, default=RESULTS)
    args = ap.parse_args(argv)
    mach = {**machine(), "code": code(ROOT)}
    parts = {"speed": speed, "politeness": politeness, "handover": handover}
    chosen = ["speed", "politeness"] if args.part == "both" else [args.part]
    pg = start_postgres()
    ok = True
    try:
        for part in chosen:
            passed, report = parts[part](pg, args, mach)
            ok &= passed
            write_result(args.out / f"scaleout-{part}.json", report)
    finally:
        pg.stop()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
