"""Scrapy extension ``ReactorStalls``: a loop-lag probe on the reactor thread.

A tick is scheduled every ``STALL_PROBE_INTERVAL`` seconds; how much later than due it
runs is the time the reactor spent on something else without returning to its loop. While
it does, no download is read, no timeout fires and no delay is kept, for every host. The
probe keeps the longest stall and counts the stalls over ``STALL_WARN_SECONDS`` (each one
logged as a warning with its length), in the stats:

- ``govsi/reactor/max_stall_seconds``: the longest stall of the crawl;
- ``govsi/reactor/stalls_over_warn``: how many exceeded ``STALL_WARN_SECONDS``.

``StallMeter`` is the pure part (explicit times), so tests feed it ticks directly.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any

from scrapy import signals
from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured
from twisted.internet import task

logger = logging.getLogger(__name__)

MAX_STAT = "govsi/reactor/max_stall_seconds"
OVER_STAT = "govsi/reactor/stalls_over_warn"


@dataclass(frozen=True)
class StallConfig:
    interval: float
    warn: float

    @classmethod
    def from_settings(cls, settings: Any) -> StallConfig:
        return cls(
            settings.getfloat("STALL_PROBE_INTERVAL"), settings.getfloat("STALL_WARN_SECONDS")
        )


class StallMeter:
    """Ticks in, stalls out: a tick due ``interval`` after the previous one that came at
    ``now`` stalled for ``now - previous - interval`` (never below 0)."""

    def __init__(self, interval: float, warn: float) -> None:
        self.interval = interval
        self.warn = warn
        self.previous: float | None = None
        self.longest = 0.0
        self.over_warn = 0

    def tick(self, now: float) -> float:
        """The stall that ended at ``now``; it is kept in ``longest`` and ``over_warn``."""
        stall = 0.0 if self.previous is None else max(0.0, now - self.previous - self.interval)
        self.previous = now
        self.longest = max(self.longest, stall)
        if stall > self.warn:
            self.over_warn += 1
        return stall


class ReactorStalls:
    def __init__(self, crawler: Crawler, config: StallConfig) -> None:
        self.stats = crawler.stats
        self.meter = StallMeter(config.interval, config.warn)
        self._loop = task.LoopingCall(self._tick)
        crawler.signals.connect(self._opened, signal=signals.spider_opened)
        crawler.signals.connect(self._closed, signal=signals.spider_closed)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> ReactorStalls:
        config = StallConfig.from_settings(crawler.settings)
        if config.interval <= 0:
            raise NotConfigured("STALL_PROBE_INTERVAL is 0")
        return cls(crawler, config)

    def _opened(self) -> None:
        self._loop.start(self.meter.interval, now=True)

    def _tick(self) -> None:
        stall = self.meter.tick(time.monotonic())
        if stall > self.meter.warn:
            logger.warning(
                "The reactor was kept from its loop for %.2f s: every download, timeout and "
                "delay waited (govsi/reactor/max_stall_seconds)",
                stall,
            )
        assert self.stats is not None
        self.stats.set_value(MAX_STAT, round(self.meter.longest, 3))
        self.stats.set_value(OVER_STAT, self.meter.over_warn)

    def _closed(self) -> None:
        if self._loop.running:
            self._loop.stop()
