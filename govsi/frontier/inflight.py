"""Requests the scheduler let go, until it is done with them: when each reached its server
(``headers_received``: the next request to its host and address is timed from there), when
it left the downloader (its host and address are free again), the bytes of its body (the
host's byte budget), and a watchdog that frees a host whose request was never heard of
again (after ``stuck_after``), then gives the scheduler its periodic tick.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Collection

from scrapy import Request, Spider
from scrapy.http import Headers, Response
from scrapy.statscollectors import StatsCollector
from twisted.internet import task

from govsi.frontier.queue import Frontier
from govsi.requestmeta import META_ARRIVED, META_FINISHED, META_HOST

__all__ = ["WATCH_INTERVAL", "InFlight"]

logger = logging.getLogger(__name__)

# Seconds between the watchdog's looks (and the scheduler's ticks).
WATCH_INTERVAL = 10.0


class InFlight:
    """Hears Scrapy's signals for requests out (``headers_received``, ``response_received``,
    ``request_left_downloader``) and runs the watchdog. ``hosts``: the hosts the scheduler
    knows; ``body_received(host, nbytes)``; ``changed()``: a host may be ready sooner;
    ``tick(now)``: every ``WATCH_INTERVAL``, after the watchdog's look."""

    def __init__(
        self,
        frontier: Frontier,
        stats: StatsCollector,
        *,
        hosts: Collection[str],
        stuck_after: float,
        body_received: Callable[[str, int], None],
        changed: Callable[[], None],
        tick: Callable[[float], None],
    ) -> None:
        self.frontier = frontier
        self.stats = stats
        self.hosts = hosts
        # No single attempt can take longer (DNS and connection included in the timeout).
        self.stuck_after = stuck_after
        self.body_received = body_received
        self.changed = changed
        self.tick = tick
        self._watchdog: task.LoopingCall | None = None

    def start(self) -> None:
        self._watchdog = task.LoopingCall(self.free_stuck)
        self._watchdog.start(WATCH_INTERVAL, now=False)

    def stop(self) -> None:
        if self._watchdog is not None and self._watchdog.running:
            self._watchdog.stop()

    def headers_received(
        self, headers: Headers, body_length: int, request: Request, spider: Spider
    ) -> None:
        # The server has answered, so the request reached it by now.
        request.meta.setdefault(META_ARRIVED, time.monotonic())

    def response_received(self, response: Response, request: Request, spider: Spider) -> None:
        host: str | None = request.meta.get(META_HOST)
        if host is not None and host in self.hosts:
            self.body_received(host, len(response.body))

    def left_downloader(self, request: Request, spider: Spider) -> None:
        host = request.meta.get(META_HOST)
        if host is None or request.meta.get(META_FINISHED):
            return
        request.meta[META_FINISHED] = True
        self.frontier.finished(host, request.meta.get(META_ARRIVED, time.monotonic()))
        self.changed()

    def free_stuck(self) -> None:
        # A request whose end we never heard of would hold its address for ever.
        now = time.monotonic()
        for host in self.frontier.busy_longer_than(self.stuck_after, now):
            logger.error(
                "%s: no word of its request for %.0f s; freeing it", host, self.stuck_after
            )
            self.stats.inc_value("govsi/frontier/stuck")
            self.frontier.finished(host, now)
        self.tick(now)
