"""What ``scrapy serve``'s Changes pages cost to answer: the Changes page, its feed and a
diff page (``ChangesSite.route``, no socket) over an SQLite crawldb of ``--changes``
changes (half ``new``, half ``changed``, on ``--changes``/2 HTML pages of 800 words whose
earlier versions differ by five words), each asked ``--rounds`` times: the median.

    PYTHONPATH=. python -m bench.changes_page --changes 20000

Writes bench/results/changes_page.json.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, insert

from bench.lib.results import RESULTS, write_run
from govsi.changes.pages import ChangesSite
from govsi.store import database, schema

T = datetime(2026, 9, 1)
WORDS = ("vlada", "uredba", "občina", "zakon", "razpis", "javna", "naročila", "rok", "dni",
         "člen", "odlok", "sklep", "seja")  # fmt: skip
ASKED = [
    ("page", "/changes", ""),
    ("page, search words", "/changes", "q=javna+naročila"),
    ("page, one host and kind", "/changes", "host=www.gov.si&kind=changed"),
    ("feed", "/changes.atom", ""),
    ("feed, search words", "/changes.atom", "q=uredba&kind=changed"),
    ("diff", "/changes/2", ""),
    ("diff, side by side", "/changes/2", "view=side"),
]


def fill(engine: Engine, changes: int, rnd: random.Random) -> None:
    """``changes`` changes on ``changes`` / 2 pages, a crawl id."""
    schema.crawl_id(engine)

    def text(n: int) -> str:
        return " ".join(rnd.choice(WORDS) for _ in range(n))

    def edited(words: str) -> str:
        w = words.split()
        for _ in range(5):
            w[rnd.randrange(len(w))] = rnd.choice(WORDS) + "x"
        return " ".join(w)

    pages = changes // 2
    texts = [text(800) for _ in range(pages)]
    minutes = 60 * 24 * 28
    with engine.begin() as conn:
        site = conn.execute(insert(schema.SITE).values(domain="www.gov.si")).inserted_primary_key[0]
        conn.execute(insert(schema.PAGE), [
            {"id": i + 1, "site_id": site, "url": f"https://www.gov.si/p{i}",
             "page_type_code": "HTML"} for i in range(pages)
        ])  # fmt: skip
        conn.execute(insert(schema.PAGE_TEXT), [
            {"page_id": i + 1, "kind": "HTML", "status": "ok", "text": texts[i], "extracted_at": T}
            for i in range(pages)
        ])  # fmt: skip
        rows: list[dict[str, Any]] = []
        for i in range(pages):
            first = T + timedelta(minutes=rnd.randrange(minutes))
            later = T + timedelta(minutes=minutes + rnd.randrange(minutes))
            rows.append({"page_id": i + 1, "visit_time": first, "kind": "new",
                         "title": f"Stran {i}", "text_before": None})  # fmt: skip
            rows.append({"page_id": i + 1, "visit_time": later, "kind": "changed",
                         "title": f"Stran {i}", "text_before": edited(texts[i])})  # fmt: skip
        conn.execute(insert(schema.PAGE_CHANGE), rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--changes", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--out", type=Path, default=RESULTS / "changes_page.json")
    args = parser.parse_args()
    results = []
    with tempfile.TemporaryDirectory() as folder:
        url = f"sqlite:///{Path(folder) / 'crawldb.sqlite3'}"
        engine = database.make_engine(url)
        database.migrate(engine)
        fill(engine, args.changes, random.Random(1))
        engine.dispose()
        reading = database.reading_engine(url)
        site = ChangesSite(reading, now=lambda: T + timedelta(days=60))
        for label, path, query in ASKED:
            seconds = []
            for _ in range(args.rounds):
                start = time.perf_counter()
                status, _, body = site.route(path, query, "127.0.0.1:8080") or (0, "", "")
                seconds.append(time.perf_counter() - start)
            median = statistics.median(seconds)
            print(f"{label:26s} {status} {median * 1000:7.0f} ms {len(body):7d} chars", flush=True)
            results.append({"asked": label, "path": path, "query": query, "status": status,
                            "median_s": median, "chars": len(body)})  # fmt: skip
        reading.dispose()
    write_run(args.out, args, results)


if __name__ == "__main__":
    main()
