"""CrawlStore, the crawl's handle on crawldb: items reach crawldb in order and are counted,
a full buffer says so, an outage spills them to private files, and nothing is lost when
crawldb is back or when the next run starts. Built with ``from_crawler`` on a temporary
SQLite crawldb; writes run at once instead of in a worker thread."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from scrapy.utils.test import get_crawler
from twisted.internet.defer import Deferred, ensureDeferred

from govsi.items import DiscoveredPage, FetchedPage, Item, PageText
from govsi.store.config import StoreConfig
from govsi.store.extension import CrawlStore, pages_fetched
from govsi.store.spill import read_spill
from govsi.store.writer import item_bytes
from testkit.crawldb import T
from tests.support.store import (
    close,
    pages,
    spills,
    store,
    stored,
    writes_at_once,
)

__all__ = ["writes_at_once"]  # an autouse fixture


def test_items_reach_crawldb_when_flushed_and_are_counted(tmp_path: Path) -> None:
    s = store(tmp_path)
    for item in pages(1, 2, 3):
        s.add(item)
    assert stored(s) == set() and s.items_added == 3 and s.items_written == 0
    s.flush()
    assert stored(s) == {"http://a.gov.si/1", "http://a.gov.si/2", "http://a.gov.si/3"}
    assert s.items_written == 3
    assert s.stats.get_value("govsi/db_items_written") == 3
    close(s)


class Archive:
    """Stands in for the WARC archive's writer: crawldb's writes come after its records."""

    def __init__(self, done: Deferred[None]) -> None:
        self.done = done
        self.behind = False

    def barrier(self) -> Deferred[None]:
        return self.done

    def backlogged(self) -> bool:
        return self.behind

    def lost(self, url: str) -> bool:
        return False


def test_a_batch_waits_for_what_must_be_on_disk_first(tmp_path: Path) -> None:
    # The WARC archive's barrier: no page row before its capture is written.
    s = store(tmp_path)
    archived: Deferred[None] = Deferred()
    s.written_after.append(Archive(archived))
    for item in pages(1, 2):
        s.add(item)
    s.flush()
    assert stored(s) == set() and s.items_written == 0  # held
    archived.callback(None)
    assert stored(s) == {"http://a.gov.si/1", "http://a.gov.si/2"}
    assert s.items_written == 2
    close(s)


def test_an_archive_behind_holds_new_requests_as_a_full_buffer_does(tmp_path: Path) -> None:
    s = store(tmp_path)
    archive = Archive(Deferred())
    s.written_after.append(archive)
    assert not s.saturated()
    archive.behind = True  # its backlog is crawldb's too: memory stays bounded
    assert s.saturated()
    archive.behind = False
    assert not s.saturated()
    close(s)


def test_a_full_batch_is_written_without_waiting_for_the_timer(tmp_path: Path) -> None:
    s = store(tmp_path, DB_BATCH_SIZE=2)
    s.add(pages(1)[0])
    assert stored(s) == set()
    s.add(pages(2)[0])
    assert stored(s) == {"http://a.gov.si/1", "http://a.gov.si/2"}
    close(s)


def test_an_outage_spills_to_private_files_and_nothing_is_lost_when_crawldb_is_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    s = store(tmp_path)
    written_batches: list[list[str]] = []
    real_write = s.writer.write

    def away(batch: list[Item]) -> bool:
        return False

    def back(batch: list[Item]) -> bool:
        written_batches.append([i.url for i in batch])  # type: ignore[union-attr]
        return real_write(batch)

    monkeypatch.setattr(s.writer, "write", away)
    for item in pages(1, 2):
        s.add(item)
    s.flush()
    assert s.outage and s.writer.pending == []  # memory freed: the batch is on disk
    [first] = spills(tmp_path)
    assert first.stat().st_mode & 0o777 == 0o600
    for item in pages(3):
        s.add(item)
    s.flush()  # still away: the new items go to a second file
    assert len(spills(tmp_path)) == 2 and s.writer.pending == []
    assert s.stats.get_value("govsi/db_flush_failed") == 2

    monkeypatch.setattr(s.writer, "write", back)
    for item in pages(4):
        s.add(item)
    s.flush()
    # Oldest first, then what came since: crawldb ends as if there had been no outage.
    assert written_batches == [
        ["http://a.gov.si/1", "http://a.gov.si/2"],
        ["http://a.gov.si/3"],
        ["http://a.gov.si/4"],
    ]
    assert stored(s) == {f"http://a.gov.si/{n}" for n in (1, 2, 3, 4)}
    assert spills(tmp_path) == [] and not s.outage
    assert s.items_written == s.items_added == 4
    close(s)


def test_the_next_run_writes_what_an_outage_left_before_anything_else(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    s = store(tmp_path)
    monkeypatch.setattr(s.writer, "write", lambda batch: False)
    for item in pages(1, 2):
        s.add(item)
    s.flush()
    assert len(spills(tmp_path)) == 1
    close(s)  # the crawl ends while crawldb is still away

    again = store(tmp_path)
    assert stored(again) == {"http://a.gov.si/1", "http://a.gov.si/2"}
    assert spills(tmp_path) == []
    close(again)


def test_fresh_start_empties_crawldb_and_sets_old_spills_aside(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    s = store(tmp_path)
    for item in pages(1):
        s.add(item)
    s.flush()
    monkeypatch.setattr(s.writer, "write", lambda batch: False)
    for item in pages(2):
        s.add(item)
    s.flush()
    close(s)

    fresh = store(tmp_path, FRESH_START=True)
    assert stored(fresh) == set()
    assert spills(tmp_path) == []  # not loaded into the new crawl
    close(fresh)


def test_the_config_is_the_projects_settings() -> None:
    from govsi import settings as project

    values = {k: getattr(project, k) for k in dir(project) if k.isupper()}
    # No extensions: the project's would open a crawldb in the working directory.
    crawler = get_crawler(settings_dict={**values, "EXTENSIONS": {}, "DB_FLUSH_INTERVAL": 0.5})
    config = StoreConfig.from_settings(crawler.settings)
    assert config.flush_interval == 0.5
    assert config.buffer_max_items == project.DB_BUFFER_MAX_ITEMS
    assert config.buffer_max_bytes == project.DB_BUFFER_MAX_BYTES
    assert config.batch_max_bytes == project.DB_BATCH_MAX_BYTES > 0
    assert config.spill_dir == (project.DB_SPILL_DIR or "")


# -- the writer's buffer ---------------------------------------------------------------------
def _store(tmp_path: Path, **settings: Any) -> Any:
    tmp_path.mkdir(parents=True, exist_ok=True)
    crawler = get_crawler(settings_dict={
        "CRAWLDB_URL": f"sqlite:///{tmp_path / 'buffer.sqlite3'}", "DB_SPILL_DIR": str(tmp_path),
        "DB_BATCH_SIZE": 10_000, **settings,
    })  # fmt: skip
    return CrawlStore.from_crawler(crawler)


def test_a_full_buffer_says_so_and_during_an_outage_goes_to_disk_at_once(tmp_path: Path) -> None:
    store = _store(tmp_path, DB_BUFFER_MAX_ITEMS=5, DB_BUFFER_MAX_BYTES=0)
    for i in range(4):
        store.add(DiscoveredPage(f"http://a.gov.si/{i}", 1))
    assert not store.saturated()
    store.add(DiscoveredPage("http://a.gov.si/4", 1))
    assert store.saturated()  # crawldb slow: the scheduler holds new requests
    store.outage = True
    store.add(DiscoveredPage("http://a.gov.si/5", 1))
    # crawldb away: the whole buffer went to a private spill file, memory is free again.
    assert not store.saturated() and store.writer.pending == []
    (spill,) = tmp_path.glob("crawldb-unwritten-*.jsonl")
    assert len(read_spill(spill)) == 6 and spill.stat().st_mode & 0o777 == 0o600
    # Bytes count too: one large page fills a 1 MB buffer.
    big = _store(tmp_path / "b", DB_BUFFER_MAX_ITEMS=0, DB_BUFFER_MAX_BYTES=2**20)
    big.add(FetchedPage("http://a.gov.si/x", 0, "HTML", T, 200, "text/html", "x" * 2**20))
    assert big.saturated()


def test_pages_fetched_counts_each_page_once() -> None:
    # Each fetched page has one outcome; the other govsi/pages/ counters (read in the
    # worker, cut, read failed, nofollow, settled as a copy at write) count it again.
    stats = {
        "govsi/pages/html": 5,
        "govsi/pages/duplicate": 2,
        "govsi/pages/redirect": 1,
        "govsi/pages/binary/pdf": 3,
        "govsi/pages/other": 1,
        "govsi/pages/error": 4,
        "govsi/pages/not_modified": 6,
        "govsi/pages/revisit_failed": 1,
        "govsi/pages/read_in_worker": 7,
        "govsi/pages/parse_cut": 1,
        "govsi/pages/read_failed": 1,
        "govsi/pages/nofollow": 2,
        "govsi/pages/duplicate_at_write": 1,
        "govsi/images/fetched": 9,
    }
    assert pages_fetched(stats) == 23


# -- one write's batch ------------------------------------------------------------------------
def _sized(n: int, html_bytes: int) -> FetchedPage:
    return FetchedPage(f"http://a.gov.si/{n}", 1, "HTML", T, 200, "text/html", "x" * html_bytes)


@pytest.mark.parametrize(
    ("sizes", "max_bytes", "taken"),
    [
        ([1000, 1000, 1000], 0, 3),  # 0: everything pending
        ([1000, 1000, 1000], 10**9, 3),
        ([1000, 1000, 1000], 2500, 2),  # 1200 bytes each with the item's own 200
        ([1000, 1000, 1000], 2400, 2),  # exactly full
        ([1000, 1000, 1000], 2399, 1),
        ([5000, 10, 10], 100, 1),  # one item at least, however large
        ([10, 5000, 10], 1000, 1),  # a prefix: order is kept
        ([], 1000, 0),
    ],
)
def test_a_batch_takes_the_longest_prefix_within_its_bytes(
    tmp_path: Path, sizes: list[int], max_bytes: int, taken: int
) -> None:
    s = store(tmp_path)
    items = [_sized(i, size) for i, size in enumerate(sizes)]
    s.writer.pending = list(items)
    assert s.writer.take(max_bytes) == items[:taken]
    assert s.writer.pending == items[taken:]
    close(s)


def test_a_pages_text_counts_in_its_bytes() -> None:
    page = _sized(1, 1000)
    bare = item_bytes(page)
    page.text = PageText("html", "ok", "y" * 3000, title="z" * 100)
    page.minhash = bytes(512)
    assert item_bytes(page) == bare + 3000 + 100 + 512


def test_a_write_takes_at_most_db_batch_max_bytes_and_the_rest_follows_in_order(
    tmp_path: Path,
) -> None:
    # The writer holds its batch several times over: a crawldb that lags must not make
    # one write take the whole buffer.
    s = store(tmp_path, DB_BATCH_MAX_BYTES=2500)
    for i in range(5):
        s.add(_sized(i, 1000))
    s.flush()
    assert stored(s) == {"http://a.gov.si/0", "http://a.gov.si/1"}
    assert [i.url for i in s.writer.pending] == [f"http://a.gov.si/{i}" for i in (2, 3, 4)]
    assert s._pending_bytes == 3 * item_bytes(_sized(0, 1000))
    s.flush()
    assert stored(s) == {f"http://a.gov.si/{i}" for i in range(4)}
    # The crawl's end writes all that is left, a batch at a time, none of it to a spill.
    s.add(_sized(5, 1000))
    s.add(_sized(6, 1000))
    ensureDeferred(s.spider_closed(None, "finished"))
    assert stored(s) == {f"http://a.gov.si/{i}" for i in range(7)}
    assert s.items_written == 7 and s.writer.pending == [] and spills(tmp_path) == []
