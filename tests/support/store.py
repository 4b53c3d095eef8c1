"""CrawlStore for tests: built with ``from_crawler`` on a temporary SQLite crawldb, writes
run at once instead of in a worker thread (the ``writes_at_once`` fixture, autouse where
imported)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from scrapy.utils.test import get_crawler
from twisted.internet import defer

import govsi.store.extension as extension_module
from govsi.items import DiscoveredPage, Item
from govsi.store.extension import CrawlStore
from govsi.store.reader import CrawlReader


@pytest.fixture(autouse=True)
def writes_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(extension_module, "deferToThread", defer.maybeDeferred)


def store(folder: Path, **settings: Any) -> CrawlStore:
    folder.mkdir(parents=True, exist_ok=True)
    crawler = get_crawler(settings_dict={
        "CRAWLDB_URL": f"sqlite:///{folder / 'crawldb.sqlite3'}",
        "DB_SPILL_DIR": str(folder / "spill"), "DB_BATCH_SIZE": 1000, **settings,
    })  # fmt: skip
    return CrawlStore.from_crawler(crawler)


def pages(*numbers: int) -> list[Item]:
    return [DiscoveredPage(f"http://a.gov.si/{n}", 1) for n in numbers]


def stored(s: CrawlStore) -> set[str]:
    return set(CrawlReader(s.engine).known_urls())


def spills(folder: Path) -> list[Path]:
    return sorted((folder / "spill").glob("crawldb-unwritten-*.jsonl"))


def close(s: CrawlStore) -> None:
    s.engine.dispose()
    if s._sqlite_lock is not None:
        s._sqlite_lock.close()
