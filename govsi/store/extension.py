"""Scrapy glue for crawldb: one ``CrawlWriter`` per crawl, opened before anything reads
or writes the database, flushed on a timer and when the spider closes."""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from scrapy import Spider, signals
from scrapy.crawler import Crawler
from scrapy.statscollectors import StatsCollector
from scrapy.utils.asyncio import sleep
from scrapy.utils.defer import maybe_deferred_to_future
from scrapy.utils.log import failure_to_exc_info
from sqlalchemy.exc import SQLAlchemyError
from twisted.internet import task
from twisted.internet.defer import Deferred, succeed
from twisted.internet.threads import deferToThread
from twisted.python.failure import Failure

from govsi.items import OUTCOME_PREFIX, PAGE_OUTCOMES, Item
from govsi.store import database, schema
from govsi.store.config import StoreConfig
from govsi.store.limits import limits_of, record_limits, run_name
from govsi.store.reader import CrawlReader, StoredRobots
from govsi.store.spill import default_spill_dir, read_spill, replay_spills, set_spills_aside
from govsi.store.spilling import RunSpills
from govsi.store.writer import CrawlWriter, item_bytes
from govsi.store.writerprocess import WriterProcess
from govsi.store.writesfirst import WritesFirst, barrier, captured

logger = logging.getLogger(__name__)


def pages_fetched(stats: Mapping[str, Any]) -> int:
    """Responses (and failed fetches) turned into page rows: the spider's counters of
    ``govsi.items.PAGE_OUTCOMES`` (``outcome_stat``), one per page."""
    return sum(
        value
        for key, value in stats.items()
        if key.startswith(OUTCOME_PREFIX)
        and key[len(OUTCOME_PREFIX) :].split("/", 1)[0] in PAGE_OUTCOMES
    )


class CrawlStore:
    """The crawl's handle on crawldb; other components find it with
    ``crawler.get_extension(CrawlStore)``."""

    def __init__(self, config: StoreConfig, stats: StatsCollector) -> None:
        c = config
        self.stats = stats
        self.config = config
        self.url = database.resolve_crawldb_url(c.crawldb_url)
        try:
            self._sqlite_lock = database.lock_sqlite(self.url)
            self.engine = database.make_engine(
                self.url,
                connect_timeout=c.connect_timeout,
                statement_timeout=c.statement_timeout,
                keepalives_idle=c.keepalives_idle,
            )
            database.migrate(self.engine)
        except database.CrawldbInUse as e:
            logger.error("%s", e)
            raise
        except (OSError, SQLAlchemyError) as e:
            if database.disk_full(e):
                logger.error("crawldb at %s cannot be opened: no space left on its disk (%s); "
                             "free some and run the crawl again", database.display_url(self.url),
                             e)  # fmt: skip
            raise
        self.writer = CrawlWriter.from_config(self.engine, c)
        self.reader = CrawlReader(self.engine)
        self.batch_size = c.batch_size
        self.batch_max_bytes = c.batch_max_bytes
        self.flush_interval = c.flush_interval
        spill_dir = c.spill_dir or str(default_spill_dir(self.url))
        if c.fresh_start:
            logger.info("FRESH_START: emptying the crawldb tables")
            database.empty_tables(self.engine)
            set_spills_aside(spill_dir)
        self.writer.crawl_id = schema.crawl_id(self.engine)
        if not c.fresh_start:
            # What an earlier run could not write goes in before this run reads the frontier.
            replay_spills(spill_dir, self.writer, self.writer.crawl_id)
        # Who writes the batches: the writer here, or crawldb's writer process (an
        # in-memory SQLite crawldb exists in this process only).
        self.writes: CrawlWriter | WriterProcess = self.writer
        if c.writer_process and not database.in_memory(self.url):
            self.writes = WriterProcess(self.url, c, self.writer.crawl_id)
        self._timer: task.LoopingCall | None = None
        self._writing: Deferred[Any] | None = None
        self.items_added = 0
        self.items_written = 0
        # Components whose own records must be on disk before crawldb mentions them (the
        # WARC archive): waited for before each batch, and full when they are behind.
        self.written_after: list[WritesFirst] = []
        # The buffer's limits (DB_BUFFER_MAX_*); during an outage what is pending goes to
        # a spill file at every flush, and at once when the buffer is full.
        self.max_items = c.buffer_max_items
        self.max_bytes = c.buffer_max_bytes
        self._pending_bytes = 0
        self.outage = False
        self.spills = RunSpills(spill_dir, c.spill_max_bytes, stats)
        # This run's name in crawl_limit (the limits it reached, written when it ends).
        self.run = run_name(time.time(), os.getpid())
        logger.info("crawldb at %s", database.display_url(self.engine.url))

    @property
    def crawl_id(self) -> str:
        """The crawl this crawldb holds (a UUID, kept in crawldb)."""
        return self.writer.crawl_id

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> CrawlStore:
        store = cls(StoreConfig.from_settings(crawler.settings), crawler.stats)
        crawler.signals.connect(store.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(store.spider_closed, signal=signals.spider_closed)
        return store

    # Reads for a continuing crawl.
    def fetched_image_urls(self) -> Iterator[str]:
        return self.reader.fetched_image_urls()

    def unfetched_image_urls(self) -> Iterator[str]:
        return self.reader.unfetched_image_urls()

    def frontier_hosts(self, max_depth: int = 0, counts: bool = False) -> list[Any]:
        return self.reader.frontier_hosts(max_depth, counts)

    def frontier_batch(
        self, host: str, after: tuple[int, int], limit: int, max_depth: int = 0
    ) -> list[tuple[str, int, int]]:
        return self.reader.frontier_batch(host, after, limit, max_depth)

    def known_urls(self) -> Iterator[str]:
        return self.reader.known_urls()

    def fetched_on_hosts(self, hosts: list[str]) -> set[str]:
        return self.reader.fetched_on_hosts(hosts)

    def robots_of_hosts(self, hosts: list[str], max_age: float) -> dict[str, StoredRobots]:
        return self.reader.robots_of_hosts(hosts, max_age)

    def pin_address(self, host: str, ip: str) -> str:
        """The crawl's one address for ``host`` (blocking: call it in a thread)."""
        return self.writer.pin_address(host, ip)

    def add(self, item: Item) -> None:
        # Items are written in the order they are added, so "items_written has reached the
        # count at which X was added" means X is in crawldb (see the scheduler's refills).
        self.items_added += 1
        self.writer.add(item)
        self._pending_bytes += item_bytes(item)
        if self.outage and not self.spills.held and self.saturated():
            self._spill_pending()
        elif len(self.writer.pending) >= self.batch_size:
            self.flush()

    def saturated(self) -> bool:
        """The buffer is full (the scheduler then takes no new requests): crawldb cannot
        keep up, or is away and the spill folder cannot take the items either, or a
        component its writes wait for (``written_after``) is behind; or neither crawldb
        nor the spill folder takes items (``RunSpills.held``)."""
        return (
            self.spills.held
            or (0 < self.max_items <= len(self.writer.pending))
            or (0 < self.max_bytes <= self._pending_bytes)
            or any(first.backlogged() for first in self.written_after)
        )

    def _spill_pending(self, stamp: int = 0, final: bool = False) -> None:
        """Save what is pending to a spill file (``RunSpills.save``)."""
        if self.spills.save(self.writer, stamp, final):
            self._pending_bytes = 0

    def _write_round(self, batch: list[Item], spilled: list[tuple[int, Path, int]]) -> int:
        """In a worker thread: this run's spill files first, oldest first, then the
        batch. How many of them were written (``len(spilled) + 1``: all and the batch).
        A spill file was saved before the barrier: its pages are checked here."""
        for done, (_stamp, path, _n) in enumerate(spilled):
            items = read_spill(path, self.writer.crawl_id)
            kept = [i for i in items if self._captured(i)]
            if not self.writes.write(kept):
                return done
            self._left_unfetched(len(items) - len(kept))  # counted once: when written
            path.unlink(missing_ok=True)
        return len(spilled) + int(self.writes.write(batch))

    def flush(self) -> Deferred[Any]:
        """Start writing what is pending in a worker thread, one batch at a time, so
        that the reactor keeps crawling while the database is slow or away. Returns a
        Deferred that fires when the batch in flight (this one or an earlier) is done."""
        if self._writing is not None:
            if self.outage:
                # Still trying: what came since goes to disk now, so that a kill loses at
                # most one flush interval, and memory stays flat however long it lasts.
                self._spill_pending()
            return self._writing
        stamp = time.time_ns()
        batch = self.writer.take(self.batch_max_bytes)
        # What stays pending keeps its count; only the batch taken is subtracted.
        self._pending_bytes = (
            max(0, self._pending_bytes - sum(map(item_bytes, batch))) if self.writer.pending else 0
        )
        spilled = list(self.spills.files)
        if not batch and not spilled:
            return succeed(None)

        def done(written: int) -> None:
            self._writing = None
            for _stamp, path, n in spilled[:written]:
                self.spills.sizes.pop(path, None)
                self.items_written += n
                self.stats.inc_value("govsi/db_items_written", n)
            del self.spills.files[: min(written, len(spilled))]
            if written > len(spilled):
                if self.outage:
                    logger.warning("crawldb answers again; what was saved meanwhile is in")
                self.outage = False
                self.spills.resume()
                self.items_written += len(batch)
                self.stats.inc_value("govsi/db_items_written", len(batch))
                if self.writes.copies_settled:
                    # Pages another process stored a copy of first (see dupindex).
                    self.stats.set_value(
                        "govsi/pages/duplicate_at_write", self.writes.copies_settled
                    )
                for kind, n in self.writes.changes.items():
                    # Revisits that found a change, by kind (govsi.revisit.change).
                    self.stats.set_value(f"govsi/revisit/changed/{kind}", n)
                self.spills.full_logged = False
                if len(self.writer.pending) >= self.batch_size or (
                    0 < self.batch_max_bytes <= self._pending_bytes
                ):
                    # A batch cut at DB_BATCH_MAX_BYTES left a full one behind: next.
                    from twisted.internet import reactor  # here: importing it installs one

                    task.deferLater(reactor, 0, self.flush)
                return
            self.stats.inc_value("govsi/db_flush_failed")
            self.outage = True
            # The batch goes to disk under the time it was taken, so that it is written
            # back before what came after it; then whatever is pending now.
            newer = self.writer.take()
            self.writer.pending = batch
            self._spill_pending(stamp)
            # What could not be saved (spill files full, or the folder unwritable) stays
            # in memory, ahead of what came after it.
            self.writer.pending += newer
            self._pending_bytes = sum(map(item_bytes, self.writer.pending))
            self._spill_pending()

        def crashed(failure: Failure) -> None:
            # write() handles database errors itself; anything else is a bug, but the
            # batch must still not be lost.
            logger.error("crawldb writer failed", exc_info=failure_to_exc_info(failure))
            done(0)

        def write(_: Any) -> Deferred[int]:
            self._leave_lost(batch)
            return deferToThread(self._write_round, batch, spilled)

        d = self._writing = self._before_write().addCallback(write)
        # Set before the callbacks: one that fires at once must still clear it.
        d.addCallbacks(done, crashed)
        return d

    def _leave_lost(self, batch: list[Item]) -> None:
        """Drop from ``batch`` (in place) the pages whose records a ``written_after``
        component could not write: left unfetched in crawldb, the next run fetches them
        again rather than hold a page without them. Run after the barrier, when every
        page of the batch has its outcome there."""
        if not self.written_after:
            return
        kept = [i for i in batch if self._captured(i)]
        self._left_unfetched(len(batch) - len(kept))
        batch[:] = kept

    def _captured(self, item: Item) -> bool:
        return captured(self.written_after, item)

    def _left_unfetched(self, pages: int) -> None:
        if pages:
            self.stats.inc_value("govsi/db_left_unfetched", pages)
            logger.warning("left %d fetched pages for the next run to fetch again: the "
                           "archive could not write their records", pages)  # fmt: skip

    def _before_write(self) -> Deferred[Any]:
        return barrier(self.written_after)

    def spider_opened(self, spider: Spider) -> None:
        if isinstance(self.writes, WriterProcess):
            self.writes.start()  # its imports overlap the crawl's start
        self._timer = task.LoopingCall(self.flush)
        self._timer.start(self.flush_interval, now=False)

    async def spider_closed(self, spider: Spider, reason: Any) -> None:
        if self._timer and self._timer.running:
            self._timer.stop()
        while self._writing is not None:
            await maybe_deferred_to_future(self._writing)
        # One last attempt for what is left (it was retried already if a flush failed), a
        # batch (DB_BATCH_MAX_BYTES) at a time while crawldb takes them.
        await maybe_deferred_to_future(self.flush())
        while self.writer.pending and not self.outage:
            await maybe_deferred_to_future(self.flush())
        if self.spills.full() and self.writer.pending:
            logger.warning("the crawl ends with crawldb away: its last %d items are saved "
                           "beyond DB_SPILL_MAX_BYTES", len(self.writer.pending))  # fmt: skip
        self._spill_pending(final=True)
        await self._wait_for_room()
        if self.written_after:
            # This run's spill files keep no page whose records were lost.
            self.spills.leave_lost(self._captured, self._left_unfetched, self.writer.crawl_id)
        if self.spills.files:
            # Loaded by the next run on this crawldb, before it reads the frontier.
            self.stats.set_value("govsi/db_spill_file", str(self.spills.files[-1][1]))
            self.stats.set_value("govsi/db_spill_files", len(self.spills.files))
        if isinstance(self.writes, WriterProcess):
            self.writes.close()
        self._record_limits()
        self.engine.dispose()
        if self._sqlite_lock is not None:
            self._sqlite_lock.close()  # another crawl may have the file now

    async def _wait_for_room(self) -> None:
        """At the end: what neither crawldb nor the spill folder took is tried again
        every DB_FLUSH_INTERVAL until one does (a second Ctrl-C gives it up)."""
        if self.spills.held and self.writer.pending:
            logger.error("the crawl has ended, but %d items wait for room in crawldb or in %s: "
                         "free some space (a second Ctrl-C gives them up)",
                         len(self.writer.pending), self.spills.dir)  # fmt: skip
        while self.spills.held and self.writer.pending:
            await sleep(self.flush_interval)
            await maybe_deferred_to_future(self.flush())
            self._spill_pending(final=True)

    def _record_limits(self) -> None:
        """The limits this run reached (``govsi.store.limits``), for ``scrapy report``."""
        found = limits_of(self.stats.get_stats())
        try:
            with self.engine.begin() as conn:
                record_limits(conn, self.run, found)
        except SQLAlchemyError as e:
            logger.warning("the limits this run reached are in its stats only: crawldb did "
                           "not take them (%s)", type(e).__name__)  # fmt: skip
