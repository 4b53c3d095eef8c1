"""When the scheduler wakes Scrapy's engine.

The engine asks for a request only when a download ends, or every 5 seconds; a host ready in
0.3 s would wait that long. ``Waker.schedule`` sets one timer for the frontier's next ready
time. ``Waker.store_full`` is the back-pressure: while crawldb's writer is full no request
leaves, logged once, and the engine is woken again every half second to look.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from scrapy.statscollectors import StatsCollector
from twisted.internet.base import DelayedCall

from govsi.frontier.queue import Frontier

logger = logging.getLogger(__name__)

__all__ = ["Waker", "running_reactor"]


def running_reactor() -> Any:
    """The reactor the crawl runs on, for the frontier's timers and lookups (tests put a
    clock of their own in its place)."""
    # Imported when used: importing the reactor at module level installs the default one
    # before Scrapy installs the one its settings ask for.
    from twisted.internet import reactor

    return reactor


class Waker:
    def __init__(self, frontier: Frontier, wake: Callable[[], None], stats: StatsCollector) -> None:
        self.frontier = frontier
        self.wake = wake
        self.stats = stats
        self._call: DelayedCall | None = None
        self._at = 0.0
        self._held_for_store = False
        self._store_wake: DelayedCall | None = None

    def schedule(self) -> None:
        """Wake the engine when the frontier's next host becomes ready (one timer)."""
        when = self.frontier.next_ready_time()
        if when is None:
            return
        if self._call is not None and self._call.active():
            if self._at <= when:
                return
            self._call.cancel()
        self._at = when
        self._call = running_reactor().callLater(max(0.0, when - time.monotonic()), self.wake)

    def store_full(self, saturated: bool) -> bool:
        """Whether requests are held because crawldb's writer is full (``saturated``)."""
        if not saturated:
            self._held_for_store = False
            return False
        if not self._held_for_store:
            self._held_for_store = True
            self.stats.inc_value("govsi/db_backpressure")
            logger.warning(
                "crawldb's write buffer is full (or the archive it waits for is "
                "behind): no new requests until it drains"
            )
        if self._store_wake is None or not self._store_wake.active():
            self._store_wake = running_reactor().callLater(0.5, self.wake)
        return True

    def close(self) -> None:
        if self._call is not None and self._call.active():
            self._call.cancel()
