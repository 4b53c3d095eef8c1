"""Memory benchmark: the crawler's resident memory as the number of known URLs grows.

Serves ``bench.lib.webs.memory_web`` (8 hosts on their own addresses, endless generated
pages, each linking to 50 new ones, so known URLs grow ~50x faster than fetched pages) and
crawls it with govsi into a throwaway PostgreSQL (DEFAULT_CRAWL_DELAY=0), sampling the
crawl process's VmRSS/VmHWM (/proc/<pid>/status) every second and the page rows in crawldb
(known URLs) every few seconds (RSS: the crawl process and every process below it, its worker
pool included), until ``--known`` URLs are known; then stops it with SIGINT.
The requirement: under 300 MB past 1 000 000 known URLs. ``--crawler plain`` runs the
plain Scrapy spider (``bench.lib.plain_spider``, DOWNLOAD_DELAY=0, its own in-memory queue)
for a limited time for comparison, "known" being its ``scheduler/enqueued`` stat.

    python -m bench.memory --known 1000000 --crawler govsi|plain|both

Writes bench/results/memory-<crawler>.json.
"""

from __future__ import annotations

import argparse
import json
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, text

from bench.lib.crawl import log_findings, unthrottled_crawl
from bench.lib.measure import helper_of, loadavg, memory_mb, pss_kb, rss_kb, slope
from bench.lib.plain_spider import start_plain
from bench.lib.postgres import start_postgres
from bench.lib.results import RESULTS, ROOT, write_result
from bench.lib.sysinfo import code, machine
from bench.lib.webs import FANOUT, MEM_HOSTS, mem_links, mem_node, memory_web
from testkit.crawl import descendants
from testkit.simweb.server import SimWeb

MILESTONES = [100_000, 250_000, 500_000, 750_000, 1_000_000]


def watch(
    proc: subprocess.Popen[Any],
    counts: Callable[[], tuple[int, int] | None],
    target: int,
    limit_s: float,
    max_rss_mb: float,
    count_every: float,
) -> dict[str, Any]:
    """Sample memory every second and (known, fetched) every ``count_every`` seconds;
    SIGINT the crawl once ``target`` URLs are known, after ``limit_s`` or past
    ``max_rss_mb``; sample on until it exits."""
    started = time.time()
    samples: list[list[float]] = []  # [t, rss, hwm, known, fetched]
    known = fetched = 0
    last_count = 0.0
    stop_reason, stopped_at, hwm = "", 0.0, 0.0
    # Each process's own RSS (the crawl, its helpers by role, the browser) at the peak of
    # the sum: which of them the peak is made of.
    peak_parts: dict[str, float] = {}
    # The same by PSS (shared pages divided among the processes sharing them: the RSS sum
    # counts the interpreter's and the libraries' pages once per process).
    peak_pss: dict[str, float] = {}
    while proc.poll() is None:
        now = time.time() - started
        if now - last_count >= count_every:
            last_count = now
            got = counts()
            if got is not None:
                known, fetched = got
        mem = memory_mb(proc.pid)
        if mem is not None:
            hwm = max(hwm, mem[1])
            # The worker pool (and any browser) below the crawl counts in its RSS.
            parts = {"crawler": mem[0]}
            pss = {"crawler": pss_kb(proc.pid) / 1024}
            for kid in descendants(proc.pid):
                role = helper_of(kid) or "browser"
                parts[role] = parts.get(role, 0.0) + rss_kb(kid) / 1024
                pss[role] = pss.get(role, 0.0) + pss_kb(kid) / 1024
            rss = sum(parts.values())
            if rss > sum(peak_parts.values()) and not stop_reason:
                peak_parts = {k: round(v, 1) for k, v in parts.items()}
            if sum(pss.values()) > sum(peak_pss.values()) and not stop_reason:
                peak_pss = {k: round(v, 1) for k, v in pss.items()}
            samples.append([round(now, 1), round(rss, 1), round(mem[1], 1), known, fetched])
            if not stop_reason and rss > max_rss_mb:
                stop_reason = f"RSS over {max_rss_mb:.0f} MB"
        if not stop_reason and known >= target:
            stop_reason = f"{target} URLs known"
        if not stop_reason and now > limit_s:
            stop_reason = f"time limit {limit_s:.0f} s"
        if stop_reason and not stopped_at:
            stopped_at = now
            print(f"  {now:.0f} s: {stop_reason}; SIGINT", flush=True)
            proc.send_signal(signal.SIGINT)
        elif stopped_at and now - stopped_at > 300 and proc.poll() is None:
            print("  still running 300 s after SIGINT; killing", flush=True)
            proc.kill()
        if int(now) % 30 == 0 and samples:
            print(f"  {now:5.0f} s: known {known}, fetched {fetched}, "
                  f"RSS {samples[-1][1]:.0f} MB", flush=True)  # fmt: skip
        time.sleep(1.0)
    exit_s = time.time() - started
    return {
        "stop_reason": stop_reason or "crawl ended by itself",
        "sigint_at_s": round(stopped_at, 1) if stopped_at else None,
        "exited_at_s": round(exit_s, 1),
        "shutdown_s": round(exit_s - stopped_at, 1) if stopped_at else None,
        "returncode": proc.returncode,
        "vmhwm_mb_last_read": round(hwm, 1),
        "peak_rss_mb_by_process": peak_parts,
        "peak_pss_mb": round(sum(peak_pss.values()), 1),
        "peak_pss_mb_by_process": peak_pss,
        "samples": samples,
    }


def milestones(samples: list[list[float]]) -> list[dict[str, Any]]:
    """At the first sample past each milestone: known, fetched, RSS now and peak so far."""
    out, peak, i = [], 0.0, 0
    for t, rss, _hwm, known, fetched in samples:
        peak = max(peak, rss)
        while i < len(MILESTONES) and known >= MILESTONES[i]:
            out.append({"milestone": MILESTONES[i], "t_s": t, "known": int(known),
                        "fetched": int(fetched), "rss_mb": rss, "peak_rss_mb": peak})  # fmt: skip
            i += 1
    return out


def slope_per_100k(samples: list[list[float]], start: int = 20_000) -> float | None:
    """Least-squares MB of RSS per 100 000 known URLs (past ``start`` known)."""
    pts = [(s[3], s[1]) for s in samples if s[3] >= start]
    per_url = slope(pts) if len(pts) >= 3 else None
    return round(100_000 * per_url, 1) if per_url is not None else None


def drain(proc: subprocess.Popen[Any], wait: Callable[[], Any]) -> dict[str, Any]:
    """Read the crawl's pipes in a thread, so that it never blocks on a full pipe."""
    box: dict[str, Any] = {}
    threading.Thread(target=lambda: box.setdefault("run", wait()), daemon=True).start()
    return box


def checked(web: SimWeb, engine: Engine) -> dict[str, int]:
    """No URL fetched twice and none lost, from the web's request log and crawldb: each
    page URL requested at most once; each one requested stored as fetched (not left in
    the frontier, not missing); every link of each fetched page stored (fetched or queued)."""
    hits = [h for h in web.requested() if h.target != "/robots.txt"]
    requested = Counter(f"http://{h.host}{h.target}" for h in hits)
    with engine.connect() as conn:
        rows = dict(conn.execute(text("SELECT url, page_type_code FROM crawldb.page")).all())
    links_lost = 0
    for url, kind in rows.items():
        host, _, path = url.removeprefix("http://").partition("/")
        node = mem_node("/" + path)
        if kind != "HTML" or node is None or not host.startswith("mem-"):
            continue
        number = int(host.split(".")[0].removeprefix("mem-"))
        links = mem_links(number, node)
        links[0] = f"http://{host}/"
        links_lost += sum(1 for link in links if link not in rows)
    return {
        "requested": len(requested),
        "requested_twice": sum(1 for n in requested.values() if n > 1),
        "requested_not_stored": sum(1 for u in requested if rows.get(u) in (None, "FRONTIER")),
        "links_not_stored": links_lost,
        "page_rows": len(rows),
    }


def run_govsi(web: SimWeb, seeds: list[str], args: argparse.Namespace) -> dict[str, Any]:
    pg = start_postgres()
    try:
        extra = dict(kv.split("=", 1) for kv in args.set)
        db_url, workdir, running = unthrottled_crawl(pg, web, seeds, "memory_bench", **extra)
        box = drain(running.proc, lambda: running.wait(timeout=args.limit + 600))
        engine = create_engine(db_url, isolation_level="AUTOCOMMIT")
        sql = text("SELECT count(*), count(*) FILTER (WHERE page_type_code = 'HTML') "
                   "FROM crawldb.page")  # fmt: skip

        def counts() -> tuple[int, int] | None:
            try:
                with engine.connect() as conn:
                    known, fetched = conn.execute(sql).one()
                return int(known), int(fetched)
            except Exception:
                return None  # the schema may not exist yet

        watched = watch(running.proc, counts, args.known, args.limit, 1e9, args.poll)
        final = counts()
        watched["checked_against_crawldb"] = checked(web, engine)
        print(f"checked against crawldb: {watched['checked_against_crawldb']}", flush=True)
        engine.dispose()
        for _ in range(100):
            if "run" in box:
                break
            time.sleep(0.1)
        run = box.get("run")
        stats = run.stats if run else {}
        watched["final_db_counts"] = {"known": final[0], "fetched": final[1]} if final else None
        watched["scrapy_stats"] = {k: stats.get(k) for k in ("finish_reason",
                                   "response_received_count", "scheduler/enqueued",
                                   "memusage/max", "govsi/frontier/spilled",
                                   "govsi/frontier/refills", "govsi/db_items_written",
                                   "elapsed_time_seconds")}  # fmt: skip
        watched["log"] = log_findings(run.log if run else "")
        watched["workdir"] = str(workdir)
        return watched
    finally:
        pg.stop()


def run_plain(web: SimWeb, seeds: list[str], args: argparse.Namespace) -> dict[str, Any]:
    workdir = Path(tempfile.mkdtemp(prefix="govsi-memory-plain-"))
    stats_file = workdir / "stats.json"
    proc = start_plain(web.hosts_map(), seeds, str(workdir), DOWNLOAD_DELAY=0,
                       ROBOTSTXT_OBEY=True, CONCURRENT_REQUESTS=16)  # fmt: skip

    def counts() -> tuple[int, int] | None:
        try:
            stats = json.loads(stats_file.read_text())
        except (OSError, ValueError):
            return None
        return stats.get("scheduler/enqueued", 0), stats.get("response_received_count", 0)

    watched = watch(proc, counts, args.known, args.plain_seconds, args.plain_max_mb, 2.0)
    watched["final_stats"] = counts()
    log_file = workdir / "crawl.log"
    log = log_file.read_text(errors="replace") if log_file.exists() else ""
    watched["log"] = log_findings(log)
    watched["workdir"] = str(workdir)
    return watched


def summarize(crawler: str, w: dict[str, Any]) -> dict[str, Any]:
    samples = w["samples"]
    before_stop = [s for s in samples if not w["sigint_at_s"] or s[0] <= w["sigint_at_s"]]
    w["milestones"] = milestones(samples)
    w["peak_rss_mb_until_sigint"] = max((s[1] for s in before_stop), default=None)
    w["peak_rss_mb_whole_run"] = max((s[1] for s in samples), default=None)
    w["rss_mb_per_100k_known"] = slope_per_100k(before_stop)
    # The frontier window (FRONTIER_WINDOW entries), the recent originals and the writer's
    # buffer fill early and stay full; over the run's second half only what grows with
    # the web is left.
    half = before_stop[-1][3] / 2 if before_stop else 0
    w["rss_mb_per_100k_known_second_half"] = slope_per_100k(before_stop, start=int(half))
    last = before_stop[-1] if before_stop else [0, 0, 0, 0, 0]
    w["known_at_sigint"], w["fetched_at_sigint"] = int(last[3]), int(last[4])
    print(f"\n{crawler}: stopped because {w['stop_reason']}; known {w['known_at_sigint']}, "
          f"fetched {w['fetched_at_sigint']}; peak RSS {w['peak_rss_mb_until_sigint']} MB "
          f"(whole run {w['peak_rss_mb_whole_run']} MB, VmHWM {w['vmhwm_mb_last_read']} MB); "
          f"{w['rss_mb_per_100k_known']} MB per 100k known from 20 000, "
          f"{w['rss_mb_per_100k_known_second_half']} over the second half")  # fmt: skip
    if w.get("peak_rss_mb_by_process"):
        print(
            "at the peak: "
            + ", ".join(f"{k} {v:.0f} MB" for k, v in w["peak_rss_mb_by_process"].items())
        )
    if w.get("peak_pss_mb_by_process"):
        print(
            f"peak PSS {w['peak_pss_mb']} MB (shared pages counted once): "
            + ", ".join(f"{k} {v:.0f} MB" for k, v in w["peak_pss_mb_by_process"].items())
        )
    print(f"{'known':>9} {'t s':>7} {'fetched':>8} {'RSS MB':>7} {'peak MB':>8}")
    for m in w["milestones"]:
        print(f"{m['milestone']:9} {m['t_s']:7.0f} {m['fetched']:8} {m['rss_mb']:7.0f} "
              f"{m['peak_rss_mb']:8.0f}")  # fmt: skip
    for e in w["log"]["error_examples"][:5]:
        print(f"  log: {e}")
    return w


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--known", type=int, default=1_000_000, help="stop past this many URLs")
    ap.add_argument("--crawler", choices=["govsi", "plain", "both"], default="both")
    ap.add_argument("--limit", type=float, default=3600, help="govsi: time limit, s")
    ap.add_argument("--poll", type=float, default=5, help="govsi: seconds between counts")
    ap.add_argument("--plain-seconds", type=float, default=240, help="plain: time limit")
    ap.add_argument("--plain-max-mb", type=float, default=3000, help="plain: RSS limit")
    ap.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="govsi: a setting over the defaults (repeatable), to explain a figure",
    )
    ap.add_argument("--out", type=Path, default=RESULTS)
    args = ap.parse_args(argv)
    crawlers = ["govsi", "plain"] if args.crawler == "both" else [args.crawler]
    web, seeds = memory_web()
    web.start()
    args.out.mkdir(parents=True, exist_ok=True)
    ok = True
    try:
        for crawler in crawlers:
            web.reset_log()
            load = loadavg()
            print(f"memory: {crawler}, until {args.known} known URLs", flush=True)
            w = (run_govsi if crawler == "govsi" else run_plain)(web, seeds, args)
            w["requests_served"] = len(web.requested())
            w = summarize(crawler, w)
            w["loadavg_before"] = load
            w["loadavg_after"] = loadavg()
            if crawler == "govsi":
                peak = w["peak_rss_mb_until_sigint"] or 0
                w["requirement_met"] = w["known_at_sigint"] >= args.known and peak < 300
                ok = ok and w["requirement_met"]
            report = {
                "benchmark": "memory", "crawler": crawler,
                "config": {"hosts": MEM_HOSTS, "fanout": FANOUT, "known_target": args.known,
                           "DEFAULT_CRAWL_DELAY": 0, "CONCURRENT_REQUESTS": 16,
                           "db": "postgresql" if crawler == "govsi" else None,
                           "settings": args.set},
                "machine": machine(), "code": code(ROOT), "result": w,
            }  # fmt: skip
            write_result(args.out / f"memory-{crawler}.json", report)
    finally:
        web.stop()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
