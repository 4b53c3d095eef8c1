"""Crawl speed of a real ``scrapy crawl govsi`` run with no politeness delay.

Builds the simulated web of ``bench.lib.webs.build_web``, serves it on loopback, runs the crawl in a
subprocess (``testkit.crawl.run_crawl``) into SQLite and/or a throwaway PostgreSQL,
checks that every page was fetched exactly once and stored as one HTML row, and reports
pages/s and requests/s. Writes ``bench/results/crawl_speed-<db>.json``.

    PYTHONPATH=. python -m bench.crawl_speed --hosts 20 --pages 250 --db both --concurrency 16
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from bench.lib.checks import Expected, check_db, disallowed_requests, expected
from bench.lib.measure import CpuSnapshot, loadavg
from bench.lib.postgres import postmaster_pid, start_postgres
from bench.lib.results import RESULTS, ROOT, write_result
from bench.lib.sysinfo import code, machine, run_at_commit
from bench.lib.webs import build_web
from testkit.crawl import run_crawl
from testkit.pgcluster import PgCluster
from testkit.simweb.server import SimWeb


def check_requests(web: SimWeb, exp: Expected) -> list[str]:
    counts = Counter((h.host, h.target) for h in web.requested())
    problems: list[str] = []
    wanted = exp["pages"] | exp["images"] | exp["robots"] | exp["sitemaps"]
    for kind in ("pages", "images", "robots"):
        missing = sorted(exp[kind] - counts.keys())
        if missing:
            problems.append(f"{len(missing)} {kind} never requested, e.g. {missing[:5]}")
    twice = sorted((k, n) for k, n in counts.items() if n > 1)
    if twice:
        problems.append(f"{len(twice)} URLs requested more than once, e.g. {twice[:5]}")
    unexpected = sorted(k for k in counts if k not in wanted)
    if unexpected:
        problems.append(f"{len(unexpected)} unexpected requests, e.g. {unexpected[:5]}")
    return problems + disallowed_requests(web, counts)


def run_once(
    web: SimWeb,
    seeds: list[str],
    db_url: str,
    workdir: Path,
    args: argparse.Namespace,
    pg_pid: int | None = None,
) -> dict[str, Any]:
    exp = expected(web)
    web.reset_log()
    load = loadavg()
    cpu_before = CpuSnapshot.take(pg_pid)
    started = time.perf_counter()
    run = run_crawl(
        web,
        db_url,
        workdir,
        seeds,
        timeout=args.timeout,
        DEFAULT_CRAWL_DELAY=0,
        CONCURRENT_REQUESTS=args.concurrency,
        CONCURRENT_REQUESTS_PER_DOMAIN=args.per_domain,
        LOG_LEVEL="INFO",
        **dict(item.split("=", 1) for item in args.set),
    )
    wall = time.perf_counter() - started
    time.sleep(0.2)  # let the postmaster reap the crawl's backend
    cpu = CpuSnapshot.take(pg_pid).since(cpu_before)
    hits = web.requested()
    problems = [] if run.returncode == 0 else [f"scrapy exited with {run.returncode}"]
    reason = run.stats.get("finish_reason")
    if reason != "finished":
        signals = [ln for ln in run.log.splitlines() if "Received SIG" in ln]
        problems.append(f"crawl ended with finish_reason={reason!r} {signals[:1]}")
    problems += check_requests(web, exp)
    db_problems, db_counts = check_db(db_url, exp)
    problems += db_problems
    log_lines = run.log.splitlines()
    warnings = [ln for ln in log_lines if " WARNING: " in ln or " ERROR: " in ln]
    elapsed = float(run.stats.get("elapsed_time_seconds") or 0.0)  # type: ignore[arg-type]
    span = (max(h.time for h in hits) - min(h.time for h in hits)) if hits else 0.0
    pages = sum(1 for h in hits if (h.host, h.target) in exp["pages"])
    images = sum(1 for h in hits if (h.host, h.target) in exp["images"])
    sitemaps = sum(1 for h in hits if (h.host, h.target) in exp["sitemaps"])
    return {
        "ok": not problems,
        "problems": problems,
        "pages": pages,
        "images": images,
        "sitemaps": sitemaps,
        "requests": len(hits),
        "bytes_served": sum(h.bytes_sent for h in hits),
        "crawl_seconds": round(elapsed, 3),
        "process_seconds": round(wall, 3),
        "first_to_last_request_seconds": round(span, 3),
        "pages_per_s": round(pages / elapsed, 1) if elapsed else None,
        "requests_per_s": round(len(hits) / elapsed, 1) if elapsed else None,
        "pages_per_s_process": round(pages / wall, 1),
        "cpu_seconds": cpu,
        "crawler_cpu_ms_per_page": round(1000 * cpu["crawler"] / pages, 2) if pages else None,
        "loadavg_before": load,
        "db": db_counts,
        "scrapy_stats": {
            k: run.stats.get(k)
            for k in (
                "response_received_count",
                "item_scraped_count",
                "dupefilter/filtered",
                "govsi/db_items_written",
                "scheduler/enqueued",
                "memusage/max",
                "finish_reason",
            )
        },
        "log_warnings": len(warnings),
        "log_warning_examples": warnings[:5],
        "workdir": str(workdir),
    }


def sqlite_url(workdir: Path) -> str:
    return f"sqlite:///{workdir / 'crawldb.sqlite3'}"


def without_option(argv: list[str], name: str) -> list[str]:
    out: list[str] = []
    skip = False
    for a in argv:
        if not skip and a != name and not a.startswith(name + "="):
            out.append(a)
        skip = a == name
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hosts", type=int, default=20)
    ap.add_argument("--pages", type=int, default=250, help="pages per host")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--db", choices=["sqlite", "postgresql", "both"], default="both")
    ap.add_argument("--concurrency", type=int, default=16, help="CONCURRENT_REQUESTS")
    ap.add_argument("--per-domain", type=int, default=1, help="CONCURRENT_REQUESTS_PER_DOMAIN")
    ap.add_argument("--repeat", type=int, default=1, help="runs per database")
    ap.add_argument("--timeout", type=float, default=1800)
    ap.add_argument("--keep", action="store_true", help="keep work dirs (logs, SQLite files)")
    ap.add_argument("--out", type=Path, default=RESULTS, help="directory for the JSON")
    ap.add_argument("--commit", help="measure this commit (a git export), not the work tree")
    ap.add_argument(
        "--set", action="append", default=[], metavar="NAME=VALUE", help="a crawl setting"
    )
    args = ap.parse_args(argv)
    if args.commit:
        rest = without_option(sys.argv[1:] if argv is None else argv, "--commit")
        return run_at_commit(
            args.commit, "bench.crawl_speed", [*rest, "--out", str(args.out.resolve())]
        )

    dbs = ["sqlite", "postgresql"] if args.db == "both" else [args.db]
    mach, measured = machine(), code(ROOT)
    web, seeds = build_web(args.hosts, args.pages, args.seed)
    web.start()
    exp = expected(web)
    print(
        f"web: {args.hosts} hosts, {len(exp['pages'])} pages, {len(exp['images'])} images; "
        f"CONCURRENT_REQUESTS={args.concurrency} "
        f"CONCURRENT_REQUESTS_PER_DOMAIN={args.per_domain}, delay 0",
        flush=True,
    )
    pg: PgCluster | None = None
    failed = False
    try:
        for db in dbs:
            if db == "postgresql" and pg is None:
                pg = start_postgres()
            runs = []
            for n in range(args.repeat):
                workdir = Path(tempfile.mkdtemp(prefix=f"govsi-bench-{db}-"))
                if db == "sqlite":
                    url = sqlite_url(workdir)
                else:
                    assert pg is not None
                    url = pg.create_database(f"bench_{n}")
                pg_pid = postmaster_pid(pg) if pg and db == "postgresql" else None
                result = run_once(web, seeds, url, workdir, args, pg_pid)
                runs.append(result)
                print(
                    f"{db} run {n + 1}: {result['pages']} pages, {result['images']} images, "
                    f"{result['requests']} requests in {result['crawl_seconds']} s "
                    f"(process {result['process_seconds']} s): "
                    f"{result['pages_per_s']} pages/s, {result['requests_per_s']} requests/s, "
                    f"crawler CPU {result['cpu_seconds']['crawler']} s, "
                    f"{result['log_warnings']} log warnings; "
                    + ("OK" if result["ok"] else "FAILED"),
                    flush=True,
                )
                for p in result["problems"]:
                    print(f"  problem: {p}", flush=True)
                if not result["ok"]:
                    failed = True
                    print(f"  log and stats kept in {workdir}", flush=True)
                elif not args.keep:
                    shutil.rmtree(workdir, ignore_errors=True)
            report = {
                "benchmark": "crawl_speed",
                "db": db,
                "config": {
                    "hosts": args.hosts,
                    "pages_per_host": args.pages,
                    "seed": args.seed,
                    "DEFAULT_CRAWL_DELAY": 0,
                    "CONCURRENT_REQUESTS": args.concurrency,
                    "CONCURRENT_REQUESTS_PER_DOMAIN": args.per_domain,
                },
                "web": {k: len(v) for k, v in exp.items()},
                "machine": mach,
                "code": measured,
                "runs": runs,
            }
            write_result(args.out / f"crawl_speed-{db}.json", report)
    finally:
        web.stop()
        if pg is not None:
            pg.stop()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
