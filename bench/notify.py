"""What a changes notification costs at a crawl's end (govsi/changes/notify.py): an SQLite
crawldb of ``--changes`` changed pages (texts of ``--words`` words each, all new to the
filter), one saved filter without search words and one with (``q=uredba``, matching
every page), each listed, counted and built into its message (sent to a stand-in that
takes it): seconds per filter.

    PYTHONPATH=. python -m bench.notify
    PYTHONPATH=. python -m bench.notify --changes 5000

Writes bench/results/notify.json.
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

from sqlalchemy import insert

from govsi.changes.config import ChangesConfig
from govsi.changes.message import Message
from govsi.changes.notify import ChangesNotify, NotifyConfig, SavedFilter
from govsi.changes.sending import Sent, Targets
from govsi.store import database, schema

T = datetime(2026, 11, 29)
WORDS = ("vlada", "uredba", "občina", "ministrstvo", "razpis", "javno", "naročilo", "rok", "dni",
         "člen", "sprejela")  # fmt: skip


class Taker(Targets):
    def __init__(self) -> None:
        self.message: Message | None = None

    def __len__(self) -> int:
        return 1

    def send(self, message: Message, timeout: float) -> Sent:
        self.message = message
        return Sent(True)


class _Stats:
    def inc_value(self, *args: object) -> None:
        pass


def build(url: str, changes: int, words: int) -> None:
    engine = database.make_engine(url)
    database.migrate(engine)
    rnd = random.Random(1)
    with engine.begin() as conn:
        site = conn.execute(insert(schema.SITE).values(domain="www.gov.si")).inserted_primary_key[0]
        for i in range(changes):
            page = conn.execute(insert(schema.PAGE).values(
                site_id=site, url=f"https://www.gov.si/p{i}", page_type_code="HTML",
                http_status_code=200, accessed_time=T,
            )).inserted_primary_key[0]  # fmt: skip
            text = " ".join(rnd.choice(WORDS) for _ in range(words))
            conn.execute(insert(schema.PAGE_TEXT).values(
                page_id=page, kind="HTML", status="ok", text=text + " novo", extracted_at=T,
            ))  # fmt: skip
            conn.execute(insert(schema.PAGE_CHANGE).values(
                page_id=page, visit_time=T + timedelta(seconds=i), kind="changed",
                title=f"Stran {i}", text_before=text,
            ))  # fmt: skip
    engine.dispose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--changes", type=int, default=2000)
    parser.add_argument("--words", type=int, default=800)
    args = parser.parse_args()
    results = {"changes": args.changes, "words": args.words, "filters": {}}
    with tempfile.TemporaryDirectory() as folder:
        url = f"sqlite:///{folder}/crawldb.sqlite3"
        build(url, args.changes, args.words)
        for name, params in (("all", ()), ("uredba", (("q", "uredba"),))):
            taker = Taker()
            config = NotifyConfig((SavedFilter(name, params),))
            ext = ChangesNotify(config, url, taker, _Stats(), ChangesConfig())  # type: ignore[arg-type]
            ext.started = T
            start = time.perf_counter()
            [outcome] = ext.notify_all(T + timedelta(days=1))
            seconds = time.perf_counter() - start
            assert outcome.sent and taker.message is not None
            results["filters"][name] = {"found": outcome.found, "seconds": round(seconds, 2),
                                        "body_chars": len(taker.message.body)}  # fmt: skip
            print(f"{name}: {outcome.found} changes in {seconds:.2f} s")
    out = Path(__file__).parent / "results" / "notify.json"
    out.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
