"""Feed readers compared: govsi's (``govsi.web.feeds.read_feed``: the sitemap reader for RSS
and Atom, a bounded item-at-a-time reader for JSON Feed) and feedparser, on large feeds and
on hostile ones: CPU seconds, peak memory, what was read.

Each reader runs in a process of its own (peak RSS is per process). feedparser is not a
govsi dependency: install it where this runs (``pip install --target DIR feedparser`` and
``--feedparser-path DIR``), else only govsi's reader is measured.

    PYTHONPATH=. python -m bench.feed_parsers     # ~40 s; bench/results/feed_parsers.json
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.lib.results import RESULTS, ROOT, write_result
from bench.lib.sysinfo import code, machine

ITEMS = 100_000  # 6.8 MB of RSS: far past any real feed, well within the 50 MB bound


def json_feed(items: int, pad: int) -> bytes:
    entries = b",".join(
        b'{"id": "%d", "url": "https://www.gov.si/n/%d", "title": "t", "content_html": "%s"}'
        % (i, i, b"x" * pad)
        for i in range(items)
    )
    return b'{"version": "https://jsonfeed.org/version/1.1", "items": [' + entries + b"]}"


def bodies() -> dict[str, Callable[[], bytes]]:
    """Each case's body, made in the process that reads it (a peak RSS is per process)."""
    return {
        f"{ITEMS} items": _rss,
        "billion laughs": _laughs,
        "external entity": lambda: b'<?xml version="1.0"?><!DOCTYPE rss [<!ENTITY x SYSTEM '
        b'"file:///etc/hostname">]><rss><channel><item><title>&x;</title>'
        b"<link>https://www.gov.si/ok</link></item></channel></rss>",
        # 7.5 MB: within JSON_MAX_BYTES; 50 MB: past it (read up to it).
        f"{ITEMS} JSON items": lambda: json_feed(ITEMS, 0),
        "50 MB JSON": lambda: json_feed(50_000, 1_000),
    }


def _rss() -> bytes:
    items = b"".join(
        b"<item><title>t</title><link>https://www.gov.si/n/%d</link></item>" % i
        for i in range(ITEMS)
    )
    return b"<rss><channel>" + items + b"</channel></rss>"


def _laughs() -> bytes:
    entities = b"".join(
        (f'<!ENTITY l{i} "{f"&l{i - 1};" * 10}">'.encode() if i else b'<!ENTITY l0 "lol">')
        for i in range(10)
    )
    return (
        b'<?xml version="1.0"?><!DOCTYPE rss [' + entities + b"]><rss>"
        b"<channel><item><link>https://www.gov.si/ok</link><title>&l9;</title></item>"
        b"</channel></rss>"
    )


def one(reader: str, case: str) -> dict[str, Any]:
    """Run in a child: read one body with one reader."""
    body = bodies()[case]()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.process_time()
    if reader == "govsi":
        from govsi.web.feeds import read_feed

        # As many entries as the reader may take (MAX_URLS), not the crawl's 500.
        read = read_feed(body, "https://www.gov.si/rss", max_entries=ITEMS)
        outcome = f"{len(read.entries)} entries, error {read.error!r}"
    else:
        import feedparser  # type: ignore[import-not-found]

        parsed = feedparser.parse(body)
        titles = {str(e.get("title", ""))[:20] for e in parsed.entries[:3]}
        outcome = f"{len(parsed.entries)} entries, bozo {int(parsed.bozo)}, titles {titles}"
    seconds = time.process_time() - started
    grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) // 1024
    return {"reader": reader, "case": case, "cpu_s": round(seconds, 2), "peak_growth_mb": grown,
            "outcome": outcome}  # fmt: skip


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(RESULTS / "feed_parsers.json"))
    ap.add_argument("--feedparser-path", default="", help="where feedparser is installed")
    ap.add_argument("--one", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(one(*args.one)))
        return 0
    readers = ["govsi"]
    env_path = [str(ROOT), *([args.feedparser_path] if args.feedparser_path else [])]
    probe = subprocess.run([sys.executable, "-c", "import feedparser"], check=False,
                           env={"PYTHONPATH": ":".join(env_path)}, capture_output=True)  # fmt: skip
    if probe.returncode == 0:
        readers.append("feedparser")
    rows = []
    for reader in readers:
        for case in bodies():
            cmd = [sys.executable, "-m", "bench.feed_parsers", "--one", reader, case]
            out = subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=600,
                                 env={"PYTHONPATH": ":".join(env_path)})  # fmt: skip
            row = json.loads(out.stdout)
            rows.append(row)
            print(f"{reader:10} {case:16} {row['cpu_s']:7} s  +{row['peak_growth_mb']:4} MB  "
                  f"{row['outcome']}")  # fmt: skip
    write_result(Path(args.out), {"machine": machine(), "code": code(ROOT), "rows": rows})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
