"""Soak benchmark: three workers on one PostgreSQL crawldb for a long crawl, with faults.

A large generated web (``bench.lib.webs.build_web``; every host on an address of its own,
each asked at ``--delay`` seconds) is crawled by three ``scrapy crawl govsi`` processes with
the default settings (rendering off: the browser is not what this measures) for
``--minutes``, while

- PostgreSQL is stopped and started again every ``--pg-every`` minutes (down ``--pg-down``
  seconds each time),
- one worker (in turn) is SIGKILLed and started again every ``--kill-every`` minutes.

Then every worker is stopped with SIGINT, as a user would, and the run is compared with an
undisturbed one of the same length on a fresh database (``--undisturbed-minutes``, 0 to
skip). Reported:

- pages lost: URLs the web served whose outcome crawldb does not record as fetched, other
  than those served within ``DB_FLUSH_INTERVAL`` + 5 s before a kill (the work a SIGKILL may
  lose, fetched again after the restart or left FRONTIER); 0 expected;
- fetched twice: URLs served more than once, and how many of those a kill explains (the
  first time within that window before a kill); unexplained ones expected 0;
- politeness violations per host and per address (``bench.lib.politeness``): 0;
- each worker slot's RSS over time, sampled every 5 s;
- pages/s, disturbed against undisturbed.

    PYTHONPATH=. python -m bench.soak                              # ~45 min
    PYTHONPATH=. python -m bench.soak --minutes 4 --pg-every 1.5 --kill-every 2 \\
        --undisturbed-minutes 0                                    # a quick look

Writes bench/results/soak.json; exits 1 if a check fails.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from bench.lib.measure import memory_mb
from bench.lib.politeness import analyse
from bench.lib.postgres import start_postgres
from bench.lib.results import RESULTS, ROOT, write_result
from bench.lib.sysinfo import code, machine
from bench.lib.webs import BenchWeb, tree_bench_web
from testkit.crawl import RunningCrawl, query, start_crawl
from testkit.pgcluster import PgCluster
from testkit.simweb.server import Hit

FLUSH = 2.0  # DB_FLUSH_INTERVAL's default
KILL_WINDOW = FLUSH + 5.0
SAMPLE_EVERY = 5.0


class Workers:
    """Three worker slots; a slot's process can be killed and started again."""

    def __init__(self, bw: BenchWeb, db_url: str, work: Path, n: int, delay: float) -> None:
        self.bw, self.db_url, self.work, self.delay = bw, db_url, work, delay
        self.procs: list[RunningCrawl] = [self._start(i) for i in range(n)]
        self.rss: list[list[tuple[float, float]]] = [[] for _ in range(n)]
        self.started = time.monotonic()

    def _start(self, slot: int) -> RunningCrawl:
        # The same folder for a slot's every process: a restarted worker claims the spill
        # file its killed predecessor left.
        return start_crawl(
            self.bw.web, self.db_url, self.work / f"w{slot}", self.bw.seeds,
            DEFAULT_CRAWL_DELAY=self.delay, RENDER_JS="off", LOG_LEVEL="INFO",
        )  # fmt: skip

    def sample(self) -> None:
        now = round(time.monotonic() - self.started, 1)
        for slot, p in enumerate(self.procs):
            mem = memory_mb(p.proc.pid)
            if mem is not None:
                self.rss[slot].append((now, round(mem[0], 1)))

    def kill_and_restart(self, slot: int) -> None:
        old = self.procs[slot]
        os.kill(old.proc.pid, signal.SIGKILL)
        old.proc.wait(30)
        # Its pipes: read what is left so that the next process's log is its own.
        old.proc.communicate()
        self.procs[slot] = self._start(slot)

    def stop(self, timeout: float) -> list[int | None]:
        for p in self.procs:
            if p.proc.poll() is None:
                p.proc.send_signal(signal.SIGINT)
        codes = []
        for p in self.procs:
            try:
                p.proc.communicate(timeout=timeout)
            except Exception:
                p.proc.kill()
                p.proc.communicate()
            codes.append(p.proc.returncode)
        return codes


def run(
    pg: PgCluster, bw: BenchWeb, args: argparse.Namespace, minutes: float, faults: bool
) -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix=f"govsi-soak-{'faults' if faults else 'calm'}-"))
    db_url = pg.create_database(f"soak_{'faults' if faults else 'calm'}_{int(time.time())}")
    bw.web.reset_log()
    workers = Workers(bw, db_url, work, 3, args.delay)
    t0 = time.monotonic()
    events: list[dict[str, Any]] = []
    kills: list[float] = []  # server-clock times of the kills
    next_pg, next_kill, next_sample, slot = args.pg_every * 60, args.kill_every * 60, 0.0, 0
    end = minutes * 60
    while (now := time.monotonic() - t0) < end:
        if now >= next_sample:
            workers.sample()
            next_sample += SAMPLE_EVERY
        if faults and now >= next_pg:
            next_pg += args.pg_every * 60
            print(f"  {now:6.0f} s: PostgreSQL stopped for {args.pg_down:.0f} s", flush=True)
            pg.stop_server()
            time.sleep(args.pg_down)
            pg.start_server()
            events.append({"t_s": round(now, 1), "event": "postgresql restarted"})
        if faults and now >= next_kill:
            next_kill += args.kill_every * 60
            print(f"  {now:6.0f} s: worker {slot} SIGKILLed and started again", flush=True)
            kills.append(time.time())
            workers.kill_and_restart(slot)
            events.append({"t_s": round(now, 1), "event": f"worker {slot} killed"})
            slot = (slot + 1) % 3
        for i, p in enumerate(workers.procs):
            if p.proc.poll() is not None and not any(e.get("ended") == i for e in events):
                events.append({"t_s": round(now, 1), "ended": i, "code": p.proc.returncode})
        time.sleep(0.5)
    print(f"  {time.monotonic() - t0:6.0f} s: SIGINT to every worker", flush=True)
    codes = workers.stop(timeout=600)
    hits = bw.web.requested()
    result = check(db_url, hits, kills, bw)
    span = max(h.time for h in hits) - min(h.time for h in hits) if hits else 0.0
    pages = sum(1 for h in hits if (h.host, h.target) in bw.pages)
    result.update({
        "faults": faults,
        "minutes": minutes,
        "exit_codes": codes,
        "events": events,
        "html_requests": pages,
        "pages_per_s": round(pages / span, 2) if span else None,
        "rss_mb": workers.rss,
        "rss_summary": [_rss_summary(s) for s in workers.rss],
        "work_dir": str(work),
    })  # fmt: skip
    return result


def _rss_summary(samples: list[tuple[float, float]]) -> dict[str, Any]:
    if not samples:
        return {}
    values = [r for _, r in samples]
    third = max(1, len(values) // 3)
    return {
        "first_third_mean_mb": round(sum(values[:third]) / third, 1),
        "last_third_mean_mb": round(sum(values[-third:]) / third, 1),
        "max_mb": max(values),
    }


def check(db_url: str, hits: list[Hit], kills: list[float], bw: BenchWeb) -> dict[str, Any]:
    served = [h for h in hits if h.status == 200 and h.target != "/robots.txt"
              and "sitemap" not in h.target]  # fmt: skip
    first: dict[str, float] = {}
    count: Counter[str] = Counter()
    for h in sorted(served, key=lambda h: h.time):
        url = f"http://{h.host}{h.target}"
        first.setdefault(url, h.time)
        count[url] += 1

    def near_kill(t: float) -> bool:
        return any(0 <= k - t <= KILL_WINDOW for k in kills)

    pages = dict(query(db_url, "SELECT url, page_type_code FROM page"))
    images = {u for (u,) in query(db_url, "SELECT url FROM image WHERE accessed_time IS NOT NULL")}
    lost = sorted(
        u for u, t in first.items()
        if pages.get(u, "FRONTIER") == "FRONTIER" and u not in images and not near_kill(t)
    )  # fmt: skip
    twice = [u for u, n in count.items() if n > 1]
    unexplained = sorted(u for u in twice if not near_kill(first[u]))
    # Links of stored pages all have a row (nothing found was dropped).
    dangling = query(
        db_url,
        "SELECT count(*) FROM link l LEFT JOIN page p ON p.id = l.to_page WHERE p.id IS NULL",
    )[0][0]
    politeness = analyse(hits, bw)
    return {
        "urls_served": len(first),
        "pages_fetched_in_db": sum(1 for t in pages.values() if t != "FRONTIER"),
        "frontier_left": sum(1 for t in pages.values() if t == "FRONTIER"),
        "pages_lost": len(lost),
        "lost_examples": lost[:10],
        "fetched_twice": len(twice),
        "fetched_twice_unexplained": len(unexplained),
        "unexplained_examples": unexplained[:10],
        "dangling_links": dangling,
        "violations_host": politeness["violations_host"],
        "violations_ip": politeness["violations_ip"],
        "min_gap_ratio_host": politeness["min_gap_ratio_host"],
        "min_gap_ratio_ip": politeness["min_gap_ratio_ip"],
    }


def problems_of(r: dict[str, Any]) -> list[str]:
    out = []
    for key in ("pages_lost", "fetched_twice_unexplained", "violations_host", "violations_ip",
                "dangling_links"):  # fmt: skip
        if r[key]:
            out.append(f"{key}: {r[key]}")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--minutes", type=float, default=20)
    ap.add_argument("--undisturbed-minutes", type=float, default=20)
    ap.add_argument("--pg-every", type=float, default=5, help="minutes")
    ap.add_argument("--pg-down", type=float, default=10, help="seconds")
    ap.add_argument("--kill-every", type=float, default=7, help="minutes")
    ap.add_argument("--hosts", type=int, default=24)
    ap.add_argument("--pages", type=int, default=1500, help="per host")
    ap.add_argument("--delay", type=float, default=1.0, help="DEFAULT_CRAWL_DELAY")
    ap.add_argument("--out", type=Path, default=RESULTS)
    args = ap.parse_args(argv)
    print(f"building a web of {args.hosts} x {args.pages} pages", flush=True)
    bw = tree_bench_web(args.hosts, args.pages, args.delay)
    pg = start_postgres()
    bw.web.start()
    report: dict[str, Any] = {"benchmark": "soak", "config": vars(args) | {"out": str(args.out)},
                              "machine": {**machine(), "code": code(ROOT)}}  # fmt: skip
    ok = True
    try:
        runs = [("faults", args.minutes, True)]
        if args.undisturbed_minutes > 0:
            runs.append(("undisturbed", args.undisturbed_minutes, False))
        for name, minutes, faults in runs:
            print(f"{name}: 3 workers for {minutes:g} min", flush=True)
            r = run(pg, bw, args, minutes, faults)
            r["problems"] = problems_of(r) if faults else []
            ok &= not r["problems"]
            report[name] = r
            print(f"{name}: {r['html_requests']} pages at {r['pages_per_s']} pages/s; lost "
                  f"{r['pages_lost']}, twice {r['fetched_twice']} (unexplained "
                  f"{r['fetched_twice_unexplained']}), violations host {r['violations_host']} / "
                  f"IP {r['violations_ip']}, RSS {r['rss_summary']}, exit {r['exit_codes']}",
                  f"; PROBLEMS {r['problems']}" if r["problems"] else "", flush=True)  # fmt: skip
        if "undisturbed" in report and report["undisturbed"]["pages_per_s"]:
            report["pages_per_s_ratio"] = round(
                report["faults"]["pages_per_s"] / report["undisturbed"]["pages_per_s"], 3
            )
            print(f"pages/s with faults / undisturbed: {report['pages_per_s_ratio']}", flush=True)
    finally:
        bw.web.stop()
        pg.stop()
    write_result(args.out / "soak.json", report)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
