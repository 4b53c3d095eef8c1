"""The last look at crawldb before a crawl ends: FRONTIER rows this run never queued.

The seen-URL set holds 64-bit fingerprints (``govsi.frontier.fingerprints``): of ten
million URLs, two share one about three times in a million, and the second is then taken
for known. Its link still gives it a FRONTIER row (the writer gives every link's target
one), so crawldb, whose unique URL index is the ground truth, has it. When the crawl goes
idle, ``DrySweep`` asks crawldb, in one query in a thread, how many FRONTIER rows each
host has; hosts whose count changed since they were last read are read back (``Refills``),
and the rows this run has not released are queued. The crawl ends when it goes idle again
with nothing new released or stored since the last sweep: each sweep that finds something
releases a URL, so it ends.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sized
from typing import Any, Protocol

from scrapy.exceptions import DontCloseSpider
from twisted.internet.defer import Deferred

from govsi.frontier import waking

__all__ = ["DrySweep"]

# While crawldb's writes lag behind the items added, the idle crawl has them flushed at
# once and asks again this long after each flush, for at most WRITE_WAIT_MAX seconds: a
# crawldb that does not take them (gone, spilling) must not keep a finished crawl open.
WRITE_WAIT = 0.05
WRITE_WAIT_MAX = 10.0

logger = logging.getLogger(__name__)


class _Written(Protocol):
    """The part of the crawl's store the sweep reads: how far its writes have come."""

    items_added: int
    items_written: int
    outage: bool

    def flush(self) -> Deferred[Any]: ...


class DrySweep:
    def __init__(
        self,
        store: _Written,
        released: Sized,
        scan: Callable[[Callable[[], None]], None],
        wake: Callable[[], None],
        count: Callable[[str], None],
        call_later: Callable[[float, Callable[[], None]], Any] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """``scan(then)``: count every host's FRONTIER rows and read back those that
        changed, then call ``then``; ``wake``: let the engine ask for work again;
        ``count(stat)``: add one to a crawl stat; ``call_later``: the reactor's."""
        self.store = store
        self.released = released
        self.scan = scan
        self.wake = wake
        self.count = count
        self.call_later = call_later or (
            lambda delay, then: waking.running_reactor().callLater(delay, then)
        )
        self.clock = clock
        self.running = False
        self.sweeps = 0
        # Since when crawldb's writes lag behind at an idle moment (None: they do not).
        self._lagging_since: float | None = None
        # (pages released, items stored) when the last sweep began.
        self._last: tuple[int, int] | None = None

    def spider_idle(self) -> None:
        """Scrapy's spider_idle: the crawl ends unless ``hold`` (DontCloseSpider)."""
        if self.hold():
            raise DontCloseSpider

    def hold(self) -> bool:
        """The crawl went idle: whether to keep it open, because a sweep runs now (or
        crawldb's writes are not all in yet, so one cannot)."""
        if self.running:
            return True
        store = self.store
        state = (len(self.released), store.items_added)
        if state == self._last:
            return False
        if store.items_written < store.items_added:
            now = self.clock()
            if self._lagging_since is None:
                self._lagging_since = now
            if not store.outage and now - self._lagging_since < WRITE_WAIT_MAX:
                # Not the writer's next round (DB_FLUSH_INTERVAL): every crawl would end later.
                store.flush().addBoth(lambda _: self.call_later(WRITE_WAIT, self.wake))
                return True
            logger.warning(
                "crawldb has not taken every write: no last look at its FRONTIER rows; "
                "a URL taken for known by mistake waits for the next run"
            )
            self._last = state
            self._lagging_since = None
            return False
        self._lagging_since = None
        self._last = state
        self.running = True
        self.sweeps += 1
        self.count("govsi/frontier/dry_sweeps")
        self.scan(self._done)
        return True

    def _done(self) -> None:
        self.running = False
        self.wake()
