"""The scheduler's reading back of crawldb's FRONTIER rows: refilling a host's queue from
its rows by a (depth, id) cursor when memory does not hold them all, and taking up hosts
with rows another worker found or left.

``Refills`` is a part the scheduler holds: it writes the backlog fields of the hosts'
``HostInfo`` records it is given, and tells the scheduler what it finds through
``QueueCallbacks``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Container

from twisted.internet.threads import deferToThread
from twisted.python.failure import Failure

from govsi.frontier.config import SchedulerConfig
from govsi.frontier.entries import Entry, QueueCallbacks, Workbench
from govsi.frontier.queue import HostState
from govsi.requestmeta import KIND_PAGE
from govsi.web.urls import fingerprint

logger = logging.getLogger(__name__)

# A refill that could not tell whether more rows are on their way waits this long.
REFILL_RETRY = 0.5


class Refills:
    def __init__(
        self,
        config: SchedulerConfig,
        bench: Workbench,
        *,
        released: Container[int],
        callbacks: QueueCallbacks,
    ) -> None:
        self.hosts, self.frontier = bench.hosts, bench.frontier
        self.store, self.stats = bench.store, bench.stats
        # Pages and images this run released: never pushed again from their rows.
        self.released = released
        self.cb = callbacks
        self.depth_limit = config.scope.depth_limit
        self.refill_size = config.refill_size
        # Hosts with FRONTIER rows in crawldb that memory does not hold (HostInfo.backlog).
        self._backlogged: set[str] = set()

    def open(self) -> None:
        """A continuing crawl: every host with FRONTIER rows has work in crawldb."""
        for host, sample_url in self.store.frontier_hosts(self.depth_limit):
            self.cb.add_host(host, sample_url)
            self._set_backlog(host, True)

    def spilled(self, host: str, depth: int) -> None:
        """The window refused an entry of ``host``: its FRONTIER row is (or will be) in
        crawldb, to be read back later."""
        info = self.hosts[host]
        self._set_backlog(host, True)
        info.backlog_written_at = self.store.items_added
        if depth < info.cursor[0]:
            info.cursor = (-1, 0)
        self.stats.inc_value("govsi/frontier/spilled")

    # -- work other workers found ------------------------------------------------------
    def scan_frontier(self, then: Callable[[], None] | None = None) -> None:
        """Look for hosts with FRONTIER rows in crawldb (in a worker thread); ``then``
        is called once that is done, or failed."""
        d = deferToThread(self.store.frontier_hosts, self.depth_limit, True)
        d.addCallbacks(self._scanned, lambda f: logger.warning(
            "listing hosts with work in crawldb failed: %s", f.getErrorMessage()))  # fmt: skip
        if then is not None:
            d.addBoth(lambda _: then())

    def _scanned(self, rows: list[tuple[str, str, int]]) -> None:
        """Hosts with FRONTIER rows: take up those another worker found or left."""
        for host, sample_url, count in rows:
            info = self.hosts.get(host)
            if info is None:
                self.cb.add_host(host, sample_url)
                self._set_backlog(host, True)
                continue
            if info.unavailable or info.backlog or info.refilling or count == info.dry_count:
                continue
            info.dry_count = count
            info.cursor = (-1, 0)
            self._set_backlog(host, True)
            self.cb.work_for(info.ip)
        self.cb.wake()

    # -- refilling from crawldb -------------------------------------------------------------
    def start_refills(self, now: float) -> None:
        """Refill every host with rows in crawldb whose queue runs low (nothing was ready)."""
        if len(self.frontier) >= self.frontier.window:
            return
        low = self.refill_size // 4
        # Only hosts with rows in crawldb: this runs whenever nothing is ready to go.
        for host in list(self._backlogged):
            info = self.hosts[host]
            if not info.unavailable and len(self.frontier.host(host).queue) < low:
                self._refill(host, now)

    def refill_if_low(self, state: HostState, now: float) -> None:
        """A request of ``state``'s host left: refill its queue if it runs low."""
        info = self.hosts[state.name]
        if info.backlog and not info.unavailable and len(state.queue) < self.refill_size // 4:
            self._refill(state.name, now)

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
        self.cb.wake()

    def _refill_failed(self, failure: Failure, host: str) -> None:
        info = self.hosts[host]
        info.refilling = False
        info.refill_after = time.monotonic() + 5.0
        logger.warning("reading the frontier of %s failed: %s", host, failure.getErrorMessage())
