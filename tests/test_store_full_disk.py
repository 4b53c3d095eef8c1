"""CrawlStore on a full disk: when neither crawldb nor the spill folder takes items, the
crawl pauses (no new requests) with one line, keeps what it holds, and goes on once
either has room; a page whose WARC records were never written is left for the next run
to fetch, never stored without them. Built as in tests/test_store_extension.py: a
temporary SQLite crawldb, writes at once."""

from __future__ import annotations

import errno
import logging
import os
from pathlib import Path

import pytest
from scrapy import Spider
from sqlalchemy.exc import OperationalError
from twisted.internet.defer import Deferred, succeed

import govsi.store.extension as extension_module
from govsi.items import FetchedPage, Item
from govsi.store.extension import CrawlStore
from govsi.store.spill import read_spill
from testkit.crawldb import T, q
from tests.support.store import close, pages, spills, store, stored, writes_at_once

__all__ = ["writes_at_once"]  # an autouse fixture

HELD = "cannot take it either"


def full(*args: object) -> Path:
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def away(batch: list[Item]) -> bool:
    return False


def said(caplog: pytest.LogCaptureFixture, text: str) -> int:
    return sum(text in r.getMessage() for r in caplog.records)


def paused(folder: Path) -> CrawlStore:
    """A store whose crawldb and spill folder take nothing, holding pages 1 and 2 after a
    flush: its writer's ``write`` and ``spill`` replaced on the instance (``del`` gives
    the writer's own back)."""
    s = store(folder)
    s.writer.write = away  # type: ignore[method-assign]
    s.writer.spill = full  # type: ignore[method-assign]
    for item in pages(1, 2):
        s.add(item)
    s.flush()
    return s


def test_crawldb_and_its_spills_on_a_full_disk_pause_the_crawl_and_lose_nothing(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    s = paused(tmp_path)
    assert s.outage and s.spills.held and s.saturated()  # the scheduler holds new requests
    assert len(s.writer.pending) == 2  # kept in memory: nowhere else to go
    for item in pages(3):  # what was in flight still comes
        s.add(item)
    s.flush()
    s.flush()
    assert len(s.writer.pending) == 3 and s.saturated()
    assert said(caplog, HELD) == 1  # one line for the pause, however long it lasts
    assert s.stats.get_value("govsi/db_held") == 1

    # Room in the spill folder again: what was held goes there, and the crawl goes on.
    del s.writer.spill  # the patched one: the writer's own again
    s.flush()
    assert not s.spills.held and not s.saturated() and s.writer.pending == []
    assert len(spills(tmp_path)) == 1
    # crawldb takes writes again: the spilled items first, then the rest.
    del s.writer.write
    for item in pages(4):
        s.add(item)
    s.flush()
    assert stored(s) == {f"http://a.gov.si/{n}" for n in (1, 2, 3, 4)}
    assert s.items_written == s.items_added == 4 and not s.outage
    close(s)


def test_room_in_crawldb_again_ends_the_pause(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    s = paused(tmp_path)
    assert s.spills.held
    del s.writer.write  # the patched one: the writer's own again
    s.flush()
    assert not s.spills.held and not s.saturated() and not s.outage
    assert stored(s) == {"http://a.gov.si/1", "http://a.gov.si/2"}
    assert said(caplog, "takes items again") == 1
    close(s)


class FailedArchive:
    """Stands in for the WARC archive's writer after a failed write: the pages in
    ``lost`` were fetched, their records never written."""

    def __init__(self, lost: set[str]) -> None:
        self.lost_urls = lost

    def barrier(self) -> Deferred[None]:
        return succeed(None)

    def backlogged(self) -> bool:
        return False

    def lost(self, url: str) -> bool:
        return url in self.lost_urls


def fetched(n: int) -> FetchedPage:
    return FetchedPage(f"http://a.gov.si/{n}", 0, "HTML", T, 200, "text/html", f"<p>{n}</p>")


def test_a_page_whose_records_were_never_written_is_left_for_the_next_run(
    tmp_path: Path,
) -> None:
    s: CrawlStore = store(tmp_path)
    s.written_after.append(FailedArchive({"http://a.gov.si/2"}))
    for item in [fetched(1), fetched(2), *pages(3)]:
        s.add(item)
    s.flush()
    rows = dict(q(s.engine, "SELECT url, page_type_code FROM page"))
    # Page 2 stays to be fetched (its own link from nowhere: not even a FRONTIER row).
    assert rows == {"http://a.gov.si/1": "HTML", "http://a.gov.si/3": "FRONTIER"}
    assert s.stats.get_value("govsi/db_left_unfetched") == 1
    close(s)


def test_a_crawl_ending_while_paused_waits_for_room_then_saves_its_last_items(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    s = paused(tmp_path)
    assert s.spills.held
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        # Each wait of DB_FLUSH_INTERVAL; at the third, the spill folder has room again.
        waits.append(seconds)
        if len(waits) == 3:
            del s.writer.spill  # the patched one: the writer's own again

    monkeypatch.setattr(extension_module, "sleep", sleep)
    # No reactor here: the Deferreds fire at once (writes_at_once), awaited as they are.
    monkeypatch.setattr(extension_module, "maybe_deferred_to_future", lambda d: d)
    closing = Deferred.fromCoroutine(s.spider_closed(Spider("t"), "finished"))
    assert closing.called and closing.result is None and len(waits) == 3
    assert said(caplog, "wait for room") == 1
    (saved,) = spills(tmp_path)
    assert [i.url for i in read_spill(saved)] == ["http://a.gov.si/1", "http://a.gov.si/2"]  # type: ignore[attr-defined]


def test_a_run_of_failed_writes_is_said_once_until_one_goes_through(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # A crawl paused on a full disk tries every flush, for hours perhaps: one warning.
    caplog.set_level(logging.WARNING)
    s = store(tmp_path, DB_WRITE_RETRIES=1)
    w = s.writer
    w.retry_backoff = 0
    apply = w._apply

    def disk_full(*args: object) -> int:
        raise OperationalError("INSERT", {}, Exception("database or disk is full"))

    monkeypatch.setattr(w, "_apply", disk_full)
    for _ in range(3):
        assert not w.write(pages(1))
    assert said(caplog, "database or disk is full") == 2  # the first write's two attempts
    assert said(caplog, "crawldb unreachable") == 1
    monkeypatch.setattr(w, "_apply", apply)
    assert w.write(pages(1))
    monkeypatch.setattr(w, "_apply", disk_full)
    assert not w.write(pages(2))  # a new run of failures: said again
    assert said(caplog, "crawldb unreachable") == 2
    close(s)


def test_a_page_spilled_before_its_records_failed_is_left_for_the_next_run_too(
    tmp_path: Path,
) -> None:
    # crawldb away: the page went to a spill file before the archive's write of its
    # records failed; written back once crawldb answers, it is still left unfetched.
    s = store(tmp_path)
    lost: set[str] = set()
    s.written_after.append(FailedArchive(lost))
    s.writer.write = away  # type: ignore[method-assign]
    for item in [fetched(1), fetched(2)]:
        s.add(item)
    s.flush()
    assert len(spills(tmp_path)) == 1
    lost.add("http://a.gov.si/2")
    del s.writer.write
    s.flush()
    rows = dict(q(s.engine, "SELECT url, page_type_code FROM page"))
    assert rows == {"http://a.gov.si/1": "HTML"}
    close(s)


def test_a_spill_file_left_for_the_next_run_keeps_no_page_whose_records_were_lost(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The next run loads the file knowing nothing of this run's archive: the pages are
    # taken out as this crawl ends.
    s = store(tmp_path)
    lost: set[str] = set()
    s.written_after.append(FailedArchive(lost))
    s.writer.write = away  # type: ignore[method-assign]
    for item in [fetched(1), fetched(2), *pages(3)]:
        s.add(item)
    s.flush()
    lost.add("http://a.gov.si/2")
    monkeypatch.setattr(extension_module, "maybe_deferred_to_future", lambda d: d)
    closing = Deferred.fromCoroutine(s.spider_closed(Spider("t"), "warc_failed"))
    assert closing.called and closing.result is None
    (saved,) = spills(tmp_path)
    urls = [i.url for i in read_spill(saved)]  # type: ignore[attr-defined]
    assert urls == ["http://a.gov.si/1", "http://a.gov.si/3"]
    assert s.stats.get_value("govsi/db_left_unfetched") == 1
