"""The scheduler's reading back of crawldb's FRONTIER rows: refilling a host's queue from
its rows by a (depth, id) cursor when memory does not hold them all, and taking up hosts
with rows another worker found or left.

A mixin of ``FrontierScheduler``: it declares below what it uses of the scheduler.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from twisted.internet.threads import deferToThread
from twisted.python.failure import Failure

from govsi.frontier.entries import Entry, HostInfo
from govsi.frontier.queue import Frontier
from govsi.requestmeta import KIND_PAGE
from govsi.sharing.addresses import AddressSharing
from govsi.store.extension import CrawlStore
from govsi.web.urls import fingerprint

logger = logging.getLogger("govsi.frontier.scheduler")

# A refill that could not tell whether more rows are on their way waits this long.
REFILL_RETRY = 0.5


class Refills:
    hosts: dict[str, HostInfo]
    frontier: Frontier
    store: CrawlStore
    sharing: AddressSharing
    stats: Any
    released: set[int]
    depth_limit: int
    refill_size: int
    _backlogged: set[str]

    wake: Callable[[], None]
    _host: Callable[[str, str], HostInfo]

    # -- work other workers found ------------------------------------------------------
    def scan_frontier(self) -> None:
        d = deferToThread(self.store.frontier_hosts, self.depth_limit, True)
        d.addCallbacks(self._scanned, lambda f: logger.warning(
            "listing hosts with work in crawldb failed: %s", f.getErrorMessage()))  # fmt: skip

    def _scanned(self, rows: list[tuple[str, str, int]]) -> None:
        """Hosts with FRONTIER rows: take up those another worker found or left."""
        for host, sample_url, count in rows:
            info = self.hosts.get(host)
            if info is None:
                self._host(host, sample_url)
                self._set_backlog(host, True)
                continue
            if info.unavailable or info.backlog or info.refilling or count == info.dry_count:
                continue
            info.dry_count = count
            info.cursor = (-1, 0)
            self._set_backlog(host, True)
            self.sharing.work_for(info.ip)
        self.wake()

    # -- refilling from crawldb -------------------------------------------------------------
    def _start_refills(self, now: float) -> None:
        if len(self.frontier) >= self.frontier.window:
            return
        low = self.refill_size // 4
        # Only hosts with rows in crawldb: this runs whenever nothing is ready to go.
        for host in list(self._backlogged):
            info = self.hosts[host]
            if not info.unavailable and len(self.frontier.host(host).queue) < low:
                self._refill(host, now)

    def _set_backlog(self, host: str, backlog: bool) -> None:
        self.hosts[host].backlog = backlog
        if backlog:
            self._backlogged.add(host)
        else:
            self._backlogged.discard(host)

    def _refill(self, host: str, now: float) -> None:
        info = self.hosts[host]
        if info.refilling or now < info.refill_after:
            return
        info.refilling = True
        written = self.store.items_written
        d = deferToThread(
            self.store.frontier_batch, host, info.cursor, self.refill_size, self.depth_limit
        )
        d.addCallbacks(self._refilled, self._refill_failed, (host, written), {}, (host,))

    def _refilled(self, rows: list[tuple[str, int, int]], host: str, written: int) -> None:
        info = self.hosts[host]
        info.refilling = False
        for url, depth, row_id in rows:
            if fingerprint(url) not in self.released:
                entry = Entry(KIND_PAGE, url, depth)
                if not self.frontier.push(host, depth, entry):
                    break  # the window is full again; the cursor stays before this row
            info.cursor = (depth, row_id)
        else:
            # Exhausted only if every refused entry's row had been written when we read.
            if len(rows) < self.refill_size:
                if written >= info.backlog_written_at:
                    self._set_backlog(host, False)
                else:
                    info.refill_after = time.monotonic() + REFILL_RETRY
        self.stats.inc_value("govsi/frontier/refills")
        self.wake()

    def _refill_failed(self, failure: Failure, host: str) -> None:
        info = self.hosts[host]
        info.refilling = False
        info.refill_after = time.monotonic() + 5.0
        logger.warning("reading the frontier of %s failed: %s", host, failure.getErrorMessage())
