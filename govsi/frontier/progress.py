"""The scheduler's progress line, every PROGRESS_INTERVAL seconds: pages fetched and their
rate, the frontier in memory and in crawldb, hosts ready, waiting and in flight, the
slowest host, the addresses this worker serves, and (in a run with revisits) the revisits
sent of those due."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from twisted.internet import task

from govsi.frontier.entries import Workbench
from govsi.store.extension import pages_fetched

logger = logging.getLogger(__name__)


class Progress:
    def __init__(
        self,
        interval: float,
        bench: Workbench,
        *,
        held: Callable[[], tuple[int, int]],
    ) -> None:
        self.interval = interval  # 0: no progress line
        self.hosts, self.frontier, self.stats = bench.hosts, bench.frontier, bench.stats
        # (addresses, hosts on them) this worker serves now.
        self.held = held
        self._last = (time.monotonic(), 0)
        self._loop: task.LoopingCall | None = None

    def start(self) -> None:
        if self.interval > 0:
            self._loop = task.LoopingCall(self.log)
            self._loop.start(self.interval, now=False)

    def stop(self) -> None:
        if self._loop is not None and self._loop.running:
            self._loop.stop()

    def log(self) -> None:
        now = time.monotonic()
        fetched = pages_fetched(self.stats.get_stats())
        then, before = self._last
        self._last = (now, fetched)
        per_min = (fetched - before) * 60 / max(now - then, 1e-9)
        ready, waiting, in_flight = self.frontier.census(now)
        blocked = sum(1 for h in self.hosts.values() if h.robots_retry is not None)
        slowest, slowest_work = "-", 0.0
        for name, state in self.frontier.hosts.items():
            work = len(state.queue) * state.delay
            if work > slowest_work:
                slowest, slowest_work = name, work
        backlog = sum(1 for h in self.hosts.values() if h.backlog)
        addresses, held_hosts = self.held()
        logger.info(
            "progress: %d pages fetched (%.0f/min); frontier %d in memory, %d hosts with more "
            "in crawldb; hosts ready %d, waiting for a delay %d, in flight %d, blocked by "
            "robots.txt errors %d; slowest host %s (%.0f s of delays queued); serving %d "
            "addresses (%d hosts)",
            fetched, per_min, len(self.frontier), backlog, ready, waiting, in_flight, blocked,
            slowest, slowest_work, addresses, held_hosts,
        )  # fmt: skip
        due = int(self.stats.get_value("govsi/revisit/due", 0) or 0)
        if due:
            sent = int(self.stats.get_value("govsi/revisit/sent", 0) or 0)
            refused = int(self.stats.get_value("govsi/revisit/refused_by_robots", 0) or 0)
            logger.info("progress: revisits sent %d of %d due at the start (%d refused by "
                        "robots.txt)", sent, due, refused)  # fmt: skip
