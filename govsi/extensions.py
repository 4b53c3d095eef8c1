"""Scrapy glue for crawldb: one ``CrawlWriter`` per crawl, opened before anything reads
or writes the database, flushed on a timer and when the spider closes."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator, Mapping
from functools import partial
from typing import Any

from scrapy import Spider, signals
from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured
from scrapy.utils.defer import maybe_deferred_to_future
from scrapy.utils.log import failure_to_exc_info
from twisted.internet import task
from twisted.internet.defer import Deferred, succeed
from twisted.internet.threads import deferToThread
from twisted.python.failure import Failure

from govsi import db
from govsi.crawlreads import CrawlReader
from govsi.dupindex import stored_originals
from govsi.items import Item
from govsi.spill import default_spill_dir, replay_spills, set_spills_aside
from govsi.storage import CrawlWriter

logger = logging.getLogger(__name__)


def pages_fetched(stats: Mapping[str, Any]) -> int:
    """Responses (and failed fetches) turned into page rows, from the spider's
    ``govsi/pages/<outcome>`` counters; ``nofollow`` and ``duplicate_at_write`` re-count
    pages already counted under an outcome."""
    again = ("govsi/pages/nofollow", "govsi/pages/duplicate_at_write")
    return sum(v for k, v in stats.items() if k.startswith("govsi/pages/") and k not in again)


class CrawlStore:
    """The crawl's handle on crawldb; other components find it with
    ``crawler.get_extension(CrawlStore)``."""

    def __init__(self, crawler: Crawler) -> None:
        s = crawler.settings
        self.crawler = crawler
        self.url = db.resolve_crawldb_url(s.get("CRAWLDB_URL"))
        try:
            self._sqlite_lock = db.lock_sqlite(self.url)
        except db.CrawldbInUse as e:
            logger.error("%s", e)
            raise
        self.engine = db.make_engine(
            self.url,
            connect_timeout=s.getfloat("DB_CONNECT_TIMEOUT"),
            statement_timeout=s.getfloat("DB_STATEMENT_TIMEOUT"),
            keepalives_idle=s.getint("DB_KEEPALIVES_IDLE"),
        )
        db.migrate(self.engine)
        find_originals = None
        if s.getbool("DUPLICATE_DETECTION"):
            # Copies another process stored first are settled when the batch is written.
            find_originals = partial(
                stored_originals, threshold=s.getfloat("NEAR_DUPLICATE_THRESHOLD")
            )
        self.writer = CrawlWriter(
            self.engine,
            store_image_data=s.getbool("STORE_IMAGE_DATA"),
            store_binary_data=s.getbool("STORE_BINARY_DATA"),
            retries=s.getint("DB_WRITE_RETRIES"),
            find_originals=find_originals,
        )
        self.reader = CrawlReader(self.engine)
        self.batch_size = s.getint("DB_BATCH_SIZE")
        self.flush_interval = s.getfloat("DB_FLUSH_INTERVAL")
        self.spill_dir = s.get("DB_SPILL_DIR") or str(default_spill_dir(self.url))
        if s.getbool("FRESH_START"):
            logger.info("FRESH_START: emptying the crawldb tables")
            db.empty_tables(self.engine)
            set_spills_aside(self.spill_dir)
        self.writer.crawl_id = db.crawl_id(self.engine)
        if not s.getbool("FRESH_START"):
            # What an earlier run could not write goes in before this run reads the frontier.
            replay_spills(self.spill_dir, self.writer, self.writer.crawl_id)
        self._timer: task.LoopingCall | None = None
        self._writing: Deferred[None] | None = None
        self.items_added = 0
        self.items_written = 0
        crawler.signals.connect(self.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(self.spider_closed, signal=signals.spider_closed)
        logger.info("crawldb at %s", db.display_url(self.engine.url))

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> CrawlStore:
        return cls(crawler)

    # Reads for a continuing crawl.
    def fetched_urls(self) -> Iterator[str]:
        return self.reader.fetched_urls()

    def fetched_image_urls(self) -> Iterator[str]:
        return self.reader.fetched_image_urls()

    def unfetched_image_urls(self) -> Iterator[str]:
        return self.reader.unfetched_image_urls()

    def frontier(self, max_depth: int = 0) -> Iterator[tuple[str, int]]:
        return self.reader.frontier(max_depth)

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

    def pin_address(self, host: str, ip: str) -> str:
        """The crawl's one address for ``host`` (blocking: call it in a thread)."""
        return self.writer.pin_address(host, ip)

    def add(self, item: Item) -> None:
        # Items are written in the order they are added, so "items_written has reached the
        # count at which X was added" means X is in crawldb (see the scheduler's refills).
        self.items_added += 1
        self.writer.add(item)
        if len(self.writer.pending) >= self.batch_size:
            self.flush()

    def flush(self) -> Deferred[None]:
        """Start writing what is pending in a worker thread, one batch at a time, so
        that the reactor keeps crawling while the database is slow or away. Returns a
        Deferred that fires when the batch in flight (this one or an earlier) is done."""
        if self._writing is not None:
            return self._writing
        batch = self.writer.take()
        if not batch:
            return succeed(None)

        def done(written: bool) -> None:
            self._writing = None
            if written:
                self.items_written += len(batch)
                self.crawler.stats.inc_value("govsi/db_items_written", len(batch))
                if self.writer.copies_settled:
                    # Pages another process stored a copy of first (see dupindex).
                    self.crawler.stats.set_value(
                        "govsi/pages/duplicate_at_write", self.writer.copies_settled
                    )
            else:
                self.writer.putback(batch)
                self.crawler.stats.inc_value("govsi/db_flush_failed")

        def crashed(failure: Failure) -> None:
            # write() handles database errors itself; anything else is a bug, but the
            # batch must still not be lost.
            logger.error("crawldb writer failed", exc_info=failure_to_exc_info(failure))
            done(False)

        d = deferToThread(self.writer.write, batch)
        d.addCallbacks(done, crashed)
        self._writing = d
        return d

    def spider_opened(self, spider: Spider) -> None:
        self._timer = task.LoopingCall(self.flush)
        self._timer.start(self.flush_interval, now=False)

    async def spider_closed(self, spider: Spider, reason: Any) -> None:
        if self._timer and self._timer.running:
            self._timer.stop()
        while self._writing is not None:
            await maybe_deferred_to_future(self._writing)
        # One last attempt for what is left (it was retried already if a flush failed).
        await maybe_deferred_to_future(self.flush())
        path = self.writer.spill(self.spill_dir)
        if path:
            self.crawler.stats.set_value("govsi/db_spill_file", str(path))
        self.engine.dispose()
        if self._sqlite_lock is not None:
            self._sqlite_lock.close()  # another crawl may have the file now


class StatsFile:
    """Writes the crawl's final stats as JSON to STATS_FILE, for scripts and benchmarks."""

    def __init__(self, crawler: Crawler, path: str) -> None:
        self.crawler = crawler
        self.path = path
        # spider_closed handlers run side by side; by engine_stopped CrawlStore's final
        # flush is done, so the database counts and any spill file are in the stats.
        crawler.signals.connect(self.engine_stopped, signal=signals.engine_stopped)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> StatsFile:
        path = crawler.settings.get("STATS_FILE")
        if not path:
            raise NotConfigured("STATS_FILE is not set")
        return cls(crawler, path)

    def engine_stopped(self) -> None:
        stats = dict(self.crawler.stats.get_stats())
        with open(self.path, "w", encoding="utf-8") as fh:
            json.dump(stats, fh, indent=1, sort_keys=True, default=str)
