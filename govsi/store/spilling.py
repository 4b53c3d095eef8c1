"""This run's spill files (``RunSpills``): what crawldb did not take, saved while it is
away (``govsi.store.spill``'s files) up to DB_SPILL_MAX_BYTES, oldest first, so that each is
written back before anything newer; ``held`` while neither crawldb nor the spill folder
takes items (a full disk under both)."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from pathlib import Path

from scrapy.statscollectors import StatsCollector

from govsi.items import Item
from govsi.store.spill import filter_spill
from govsi.store.writer import CrawlWriter

logger = logging.getLogger("govsi.store.extension")  # its lines, as before the split


class RunSpills:
    """The spill files of this run not yet written back, their bytes and their cap; the
    pause (``held``) while no items can be taken."""

    def __init__(self, directory: str, max_bytes: int, stats: StatsCollector) -> None:
        self.dir = directory
        self.stats = stats
        # This run's spill files, (stamp, path, items), oldest first: written to crawldb,
        # in order and before anything newer, as soon as it answers again.
        self.files: list[tuple[int, Path, int]] = []
        # Bytes of those files on disk, and their cap (DB_SPILL_MAX_BYTES).
        self.sizes: dict[Path, int] = {}
        self.max_bytes = max_bytes
        self.full_logged = False
        # Neither crawldb nor the spill folder takes items (a full disk under both): the
        # crawl holds new requests until one does, and goes on by itself then.
        self.held = False

    def full(self) -> bool:
        """This run's spill files not yet written back have reached DB_SPILL_MAX_BYTES."""
        return 0 < self.max_bytes <= sum(self.sizes.values())

    def save(self, writer: CrawlWriter, stamp: int = 0, final: bool = False) -> bool:
        """Save what ``writer`` holds pending to a spill file; whether it did. Past
        DB_SPILL_MAX_BYTES the items stay in memory instead, where the full buffer holds
        new requests back (nothing is dropped); the ``final`` save when the crawl closes
        goes to disk all the same, since memory is about to go (it adds at most one
        buffer, DB_BUFFER_MAX_BYTES)."""
        pending = len(writer.pending)
        if not pending:
            return False
        if self.full() and not final:
            if not self.full_logged:
                self.full_logged = True
                self.stats.inc_value("govsi/budget/spill_bytes")
                logger.warning(
                    "spill files reached DB_SPILL_MAX_BYTES (%d bytes): %d items stay in "
                    "memory; once the buffer is full no new requests go out until crawldb "
                    "answers", self.max_bytes, pending,
                )  # fmt: skip
            return False
        stamp = stamp or time.time_ns()
        try:
            path = writer.spill(self.dir, stamp)
        except OSError as e:
            if not self.held:
                self.held = True
                self.stats.inc_value("govsi/db_held")
                logger.error("crawldb did not take the last write and the spill folder %s "
                             "cannot take it either (%s): the crawl pauses, no new requests "
                             "go out, and it goes on by itself once either has room; %d items "
                             "wait in memory", self.dir, e, pending)  # fmt: skip
            return False
        if path is None:
            return False
        self.resume()
        self.sizes[path] = _size(path)
        self.files.append((stamp, path, pending))
        self.files.sort()
        self.stats.inc_value("govsi/db_spilled_items", pending)
        return True

    def resume(self) -> None:
        if self.held:
            self.held = False
            logger.warning("crawldb or the spill folder takes items again: the crawl goes on")

    def leave_lost(
        self, captured: Callable[[Item], bool], left: Callable[[int], None], crawl_id: str
    ) -> None:
        """As the crawl ends: the spill files keep no page ``captured`` refuses (its WARC
        records were lost), for the next run, which loads them, knows nothing of it;
        ``left`` counts those pages."""
        for _stamp, path, _n in self.files:
            try:
                left(filter_spill(path, captured, crawl_id))
            except OSError as e:
                logger.error("%s may hold pages whose WARC records were lost (%s): they are "
                             "not fetched again", path, e)  # fmt: skip


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0
