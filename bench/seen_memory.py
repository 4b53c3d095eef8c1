"""How much memory the per-URL structures take when fed millions of URLs directly.

No crawl: ``KnownUrls`` (every known URL), the scheduler's released set (a fetched page
for every ``--fanout`` known URLs, as on the endless web) and the frontier window
(``FRONTIER_WINDOW`` entries of ``--hosts`` hosts; what it refuses goes to crawldb) are fed
``--urls`` canonical URLs the way a crawl feeds them. Prints the process's resident memory
after each million, the bytes per known URL and the time per URL. The requirement (issue
30): at most 1 GB at 10 million.

    PYTHONPATH=. python -m bench.seen_memory                 # 10 000 000 URLs, ~3 min
    PYTHONPATH=. python -m bench.seen_memory --urls 1000000
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from bench.lib.measure import memory_mb
from bench.lib.results import RESULTS, ROOT, write_result
from bench.lib.sysinfo import code, machine
from govsi.frontier.entries import Entry
from govsi.frontier.fingerprints import FingerprintSet
from govsi.frontier.queue import Frontier
from govsi.frontier.seen import KnownUrls, seen_key
from govsi.requestmeta import KIND_PAGE
from govsi.settings import FRONTIER_WINDOW
from govsi.web.urls import fingerprint


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--urls", type=int, default=10_000_000)
    ap.add_argument("--hosts", type=int, default=10_000)
    ap.add_argument("--fanout", type=int, default=50, help="known URLs per fetched page")
    ap.add_argument("--out", type=Path, default=RESULTS / "seen_memory.json")
    args = ap.parse_args()

    pid = os.getpid()
    start_rss = memory_mb(pid)[0]  # type: ignore[index]
    known = KnownUrls()
    released = FingerprintSet()
    window = Frontier(0.0, 0.0, window=FRONTIER_WINDOW)
    rows = []
    began = time.perf_counter()
    for i in range(args.urls):
        url = f"https://stran{i % args.hosts}.gov.si/podrocje/{i // args.hosts}/clanek?id={i}"
        if known.add(seen_key(KIND_PAGE, url)):
            window.push(f"stran{i % args.hosts}.gov.si", 1, Entry(KIND_PAGE, url, 1))
        if i % args.fanout == 0:
            released.add(fingerprint(url))
        if (i + 1) % 1_000_000 == 0 or i + 1 == args.urls:
            rss = memory_mb(pid)[0]  # type: ignore[index]
            per_url = (rss - start_rss) * 1e6 / (i + 1)
            row = {"urls": i + 1, "rss_mb": round(rss, 1), "bytes_per_url": round(per_url, 1)}
            rows.append(row)
            print(f"{i + 1:>11,} URLs: RSS {rss:7.1f} MB, {per_url:5.1f} bytes per URL", flush=True)
    spent = time.perf_counter() - began
    result = {
        "urls": args.urls,
        "known_table_mb": round(known.nbytes / 1e6, 1),
        "released_table_mb": round(released.nbytes / 1e6, 1),
        "window_entries": len(window),
        "start_rss_mb": round(start_rss, 1),
        "peak_rss_mb": round(memory_mb(pid)[1], 1),  # type: ignore[index]
        "us_per_url": round(spent / args.urls * 1e6, 2),
        "rows": rows,
        "machine": machine(),
        "code": code(ROOT),
    }
    print(f"peak RSS {result['peak_rss_mb']} MB (requirement: <= 1 GB); known URLs table "
          f"{result['known_table_mb']} MB; {result['us_per_url']} us per URL")  # fmt: skip
    write_result(args.out, result)


if __name__ == "__main__":
    main()
