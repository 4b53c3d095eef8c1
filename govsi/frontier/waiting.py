"""Scrapy extension ``RevisitWait`` (REVISIT_WAIT): a crawl with nothing left to do stays
open until its next due visit, if that comes within REVISIT_WAIT seconds, instead of
ending; then it asks again what is due, and goes on.

On ``spider_idle`` it reads crawldb's due times (``govsi.store.nextdue``: stored pages'
next visits, feeds' and sitemaps' next polls) and picks the wake time
(``govsi.revisit.waiting.next_wake``); until then every idle signal is answered with
``DontCloseSpider``. Awake, the scheduler's revisits read the due hosts again
(``Revisits.open``) and the spider asks for the feeds and sitemaps due
(``GovsiSpider.due_polls``). A crawl stopped by SIGINT or SIGTERM closes at once, as
Scrapy's own shutdown does: the wait holds only the idle close.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Protocol, runtime_checkable

from scrapy import Request, Spider, signals
from scrapy.crawler import Crawler
from scrapy.exceptions import DontCloseSpider, NotConfigured
from scrapy.settings import BaseSettings
from twisted.internet.base import DelayedCall
from twisted.internet.threads import deferToThread
from twisted.python.failure import Failure

from govsi.frontier import waking
from govsi.frontier.revisits import Revisits
from govsi.revisit.due import MODE_OFF, revisit_mode
from govsi.revisit.waiting import next_wake
from govsi.store.extension import CrawlStore
from govsi.store.nextdue import due_times
from govsi.store.schema import utcnow

logger = logging.getLogger(__name__)

__all__ = ["RevisitWait", "WaitConfig"]


@dataclass(frozen=True)
class WaitConfig:
    wait: float  # REVISIT_WAIT, seconds; 0: the crawl ends when idle
    min_interval: float  # REVISIT_MIN_INTERVAL
    # REVISIT_HUB_MIN_INTERVAL, a hub's: the due rule takes the shorter of the two as the
    # least time after a visit.
    hub_min_interval: float

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> WaitConfig:
        wait = settings.getfloat("REVISIT_WAIT")
        if revisit_mode(str(settings.get("REVISIT", "due"))) == MODE_OFF:
            wait = 0.0  # nothing ever falls due
        least = settings.getfloat("REVISIT_MIN_INTERVAL")
        return cls(max(0.0, wait), least, settings.getfloat("REVISIT_HUB_MIN_INTERVAL", least))


@runtime_checkable
class _Polls(Protocol):
    """The spider's side: the feeds' and sitemaps' requests due now."""

    def due_polls(self) -> Iterator[Request]: ...


@runtime_checkable
class _Scheduler(Protocol):
    """The scheduler's side: its revisits, the worker it is, waking the engine."""

    revisits: Revisits
    sharing: Any

    def wake(self) -> None: ...


class RevisitWait:
    def __init__(self, crawler: Crawler, config: WaitConfig) -> None:
        self.crawler = crawler
        self.config = config
        self.store: CrawlStore | None = None
        # When what is due was last asked for (crawldb's clock): the run's start, each wake.
        self.looked = datetime.max
        self._asking = False  # crawldb's due times being read
        self._let_close = False  # they were read: nothing due within the wait
        self._timer: DelayedCall | None = None
        self._closed = False

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> RevisitWait:
        config = WaitConfig.from_settings(crawler.settings)
        if config.wait <= 0:
            raise NotConfigured("REVISIT_WAIT is 0: an idle crawl ends")
        ext = cls(crawler, config)
        crawler.signals.connect(ext.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(ext.spider_idle, signal=signals.spider_idle)
        crawler.signals.connect(ext.spider_closed, signal=signals.spider_closed)
        return ext

    def spider_opened(self, spider: Spider) -> None:
        self.store = self.crawler.get_extension(CrawlStore)
        self.looked = utcnow()

    def spider_closed(self, spider: Spider) -> None:
        self._closed = True
        if self._timer is not None and self._timer.active():
            self._timer.cancel()

    # -- idle -------------------------------------------------------------------------------
    def spider_idle(self, spider: Spider) -> None:
        """Hold the close while a wake is set, or while crawldb is asked for one."""
        if self._timer is not None and self._timer.active():
            raise DontCloseSpider
        if self._asking:
            raise DontCloseSpider
        if self._let_close or self.store is None:
            self._let_close = False  # if the crawl goes on after all, asked again
            return
        now = utcnow()
        horizon = now + timedelta(seconds=self.config.wait)
        self._asking = True
        c = self.config
        d = deferToThread(
            due_times, self.store.engine, min_interval=c.min_interval,
            hub_min_interval=c.hub_min_interval, horizon=horizon,
        )  # fmt: skip
        d.addCallbacks(self._answered, self._failed)
        raise DontCloseSpider

    def _answered(self, times: list[datetime]) -> None:
        self._asking = False
        if self._closed:
            return
        now = utcnow()
        when = next_wake(now, times, wait=self.config.wait, looked=self.looked)
        stats = self.crawler.stats
        if when is None:
            self._let_close = True
            self._wake_engine()  # idle again: the crawl ends
            return
        delay = (when - now).total_seconds()
        if stats is not None:
            stats.inc_value("govsi/revisit/wait/waits")
        logger.info("REVISIT_WAIT: nothing to do; the next due visit in %.0f s", delay)
        self._timer = waking.running_reactor().callLater(max(0.0, delay), self._wake)

    def _failed(self, failure: Failure) -> None:
        # Fails closed: without the due times the crawl ends, as without REVISIT_WAIT.
        self._asking = False
        self._let_close = True
        logger.warning("REVISIT_WAIT: the due times were not read (%s); the crawl ends",
                       failure.getErrorMessage())  # fmt: skip
        self._wake_engine()

    def _wake(self) -> None:
        """Due work picked up: the due hosts' revisits, the due feeds and sitemaps."""
        if self._closed:
            return
        self.looked = utcnow()
        stats = self.crawler.stats
        if stats is not None:
            stats.inc_value("govsi/revisit/wait/woken")
        scheduler = self._scheduler()
        if scheduler is None:
            return
        scheduler.revisits.open(scheduler.sharing.worker)
        spider, engine = self.crawler.spider, self.crawler.engine
        if isinstance(spider, _Polls) and engine is not None:
            for request in spider.due_polls():
                engine.crawl(request)
        scheduler.wake()

    # -- the engine -------------------------------------------------------------------------
    def _scheduler(self) -> _Scheduler | None:
        # Scrapy gives an extension no public way to its scheduler; the engine's slot
        # holds it (as ``govsi.frontier.scheduler`` wakes the engine through it).
        slot = getattr(self.crawler.engine, "_slot", None)
        scheduler = getattr(slot, "scheduler", None)
        if not isinstance(scheduler, _Scheduler):
            logger.warning("REVISIT_WAIT: not govsi's scheduler; the crawl ends")
            return None
        return scheduler

    def _wake_engine(self) -> None:
        """Let the engine look again now (and close, if still idle), not at its next 5 s
        heartbeat."""
        scheduler = self._scheduler()
        if scheduler is not None:
            scheduler.wake()
