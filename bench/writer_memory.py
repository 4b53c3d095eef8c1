"""crawldb's writer process alone: its memory as the batch it is given grows.

Starts a throwaway PostgreSQL and one ``WriterProcess`` with the project's settings, and
feeds it ``--batches`` batches of ``--pages`` pages like the memory web's (``bench.memory``:
~10 KB of HTML, 5 KB of text, 50 links to new URLs, a signature and 21 band keys each),
reading the process's RSS and PSS after each write. The crawl cuts its batches at
DB_BATCH_MAX_BYTES; a writer given everything pending (``DB_BATCH_MAX_BYTES=0``) after
crawldb lagged gets batches of several hundred pages.

    python -m bench.writer_memory --pages 200 --batches 15
    python -m bench.writer_memory --pages 800 --batches 5

Writes bench/results/writer-memory-<pages>.json.
"""

from __future__ import annotations

import argparse
import pickle
import random
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from scrapy.settings import Settings

from bench.lib.measure import pss_kb, rss_kb
from bench.lib.postgres import start_postgres
from bench.lib.results import RESULTS, write_run
from bench.lib.webs.endless import FANOUT, mem_host, mem_path
from bench.lib.webs.parts import ascii_text
from govsi import settings as project
from govsi.items import FetchedPage, Item, PageText
from govsi.store import database
from govsi.store.config import StoreConfig
from govsi.store.writer import item_bytes
from govsi.store.writerprocess import WriterProcess


def page(node: int, rng: random.Random) -> FetchedPage:
    """Node ``node`` of the memory web as the spider hands it to the store."""
    links = [f"http://{mem_host(j % 8)}{mem_path(FANOUT * node + j)}" for j in range(1, FANOUT + 1)]
    text = ascii_text(rng, 680)
    html = "<html><body><p>" + text + "</p>" + "".join(f"<a href='{u}'>{u}</a>" for u in links)
    return FetchedPage(
        f"http://{mem_host(node % 8)}{mem_path(node)}", 3, "HTML", datetime.now(), 200,
        content_type="text/html", html_content=html + "</body></html>", links=links,
        content_hash=f"{node:064x}", minhash=rng.randbytes(512),
        band_keys=[rng.getrandbits(63) for _ in range(21)],
        text=PageText("html", "ok", text, title=f"mem {node}", language="sl"),
    )  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pages", type=int, default=200, help="pages per batch")
    ap.add_argument("--batches", type=int, default=15)
    ap.add_argument("--out", type=Path, default=RESULTS)
    args = ap.parse_args()
    settings = Settings()
    settings.setmodule(project)
    pg = start_postgres()
    samples: list[dict[str, Any]] = []
    try:
        url = pg.create_database("writer_memory")
        engine = database.make_engine(url)
        database.migrate(engine)
        engine.dispose()
        writes = WriterProcess(url, StoreConfig.from_settings(settings), "writer-memory")
        writes.start()
        pid = writes.pid
        assert pid is not None
        rng, node = random.Random(1), 1
        for b in range(args.batches):
            batch: list[Item] = []
            for _ in range(args.pages):
                batch.append(page(node, rng))
                node += 1
            started = time.monotonic()
            written = writes.write(batch)
            sample = {
                "batch": b,
                "written": written,
                "seconds": round(time.monotonic() - started, 2),
                "item_mb": round(sum(map(item_bytes, batch)) / 2**20, 1),
                "frame_mb": round(len(pickle.dumps(batch)) / 2**20, 1),
                "rss_mb": round(rss_kb(pid) / 1024, 1),
                "pss_mb": round(pss_kb(pid) / 1024, 1),
            }
            samples.append(sample)
            print(sample, flush=True)
        writes.close()
    finally:
        pg.stop()
    peak = max(samples, key=lambda s: s["pss_mb"])
    print(f"{args.pages} pages a batch: writer peak PSS {peak['pss_mb']} MB, "
          f"RSS {peak['rss_mb']} MB")  # fmt: skip
    result = {"samples": samples, "peak_pss_mb": peak["pss_mb"], "peak_rss_mb": peak["rss_mb"]}
    write_run(args.out / f"writer-memory-{args.pages}.json", args, [result])


if __name__ == "__main__":
    main()
