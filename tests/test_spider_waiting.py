"""``RevisitWait`` (REVISIT_WAIT) in a crawl's idle moments, on a fake engine and a test
clock: it holds the close until the next due time and then asks again for what is due; it
lets the crawl end when nothing falls due within the wait, when crawldb cannot say, and
when the crawl is stopped while it waits."""

from __future__ import annotations

from datetime import datetime, timedelta
from types import SimpleNamespace
from typing import Any

import pytest
from scrapy import Request
from scrapy.exceptions import DontCloseSpider
from scrapy.settings import Settings
from twisted.internet import defer
from twisted.internet.task import Clock

from govsi.frontier import waiting, waking
from govsi.frontier.waiting import RevisitWait, WaitConfig

NOW = datetime(2026, 11, 29, 12, 0)
POLL = Request("http://a.gov.si/rss")


class FakeRevisits:
    def __init__(self) -> None:
        self.opened: list[str] = []

    def open(self, worker: str) -> None:
        self.opened.append(worker)


class FakeScheduler:
    def __init__(self) -> None:
        self.revisits = FakeRevisits()
        self.sharing = SimpleNamespace(worker="w1")
        self.wakes = 0

    def wake(self) -> None:
        self.wakes += 1


class FakeSpider:
    def due_polls(self) -> list[Request]:
        return [POLL]


class FakeStats:
    def __init__(self) -> None:
        self.values: dict[str, int] = {}

    def inc_value(self, key: str, count: int = 1) -> None:
        self.values[key] = self.values.get(key, 0) + count


class World:
    """The crawl around the extension: the engine, crawldb's due times, the clocks."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, due_in: list[float] | None) -> None:
        self.clock = Clock()
        self.now = NOW
        self.due_in = due_in  # seconds from NOW; None: crawldb's read fails
        self.scheduler = FakeScheduler()
        self.crawled: list[Request] = []
        engine = SimpleNamespace(_slot=SimpleNamespace(scheduler=self.scheduler),
                                 crawl=self.crawled.append)  # fmt: skip
        self.stats = FakeStats()
        store = SimpleNamespace(engine=None)
        crawler = SimpleNamespace(engine=engine, spider=FakeSpider(), stats=self.stats,
                                  get_extension=lambda cls: store)  # fmt: skip
        monkeypatch.setattr(waiting, "deferToThread", defer.maybeDeferred)
        monkeypatch.setattr(waiting, "due_times", self.due_times)
        monkeypatch.setattr(waiting, "utcnow", lambda: self.now)
        monkeypatch.setattr(waking, "running_reactor", lambda: self.clock)
        self.ext = RevisitWait(
            crawler, WaitConfig(wait=120.0, min_interval=86400.0, hub_min_interval=3600.0)
        )  # type: ignore[arg-type]
        self.ext.spider_opened(None)  # type: ignore[arg-type]

    def due_times(self, engine: Any, **kw: Any) -> list[datetime]:
        if self.due_in is None:
            raise OSError("crawldb is gone")
        return [NOW + timedelta(seconds=s) for s in self.due_in]

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)
        self.clock.advance(seconds)

    def holds(self) -> bool:
        """Whether the idle crawl is kept open now."""
        try:
            self.ext.spider_idle(None)  # type: ignore[arg-type]
        except DontCloseSpider:
            return True
        return False


def test_an_idle_crawl_waits_for_its_next_due_visit_then_asks_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    w = World(monkeypatch, [30.0, 600.0])
    w.advance(5)
    assert w.holds()  # the due times read: a wake in 25 s
    w.advance(20)
    assert w.holds() and not w.scheduler.revisits.opened
    w.advance(5)
    # Awake: the due revisits read again, the due feeds and sitemaps asked for.
    assert w.scheduler.revisits.opened == ["w1"]
    assert w.crawled == [POLL]
    assert w.stats.values == {"govsi/revisit/wait/waits": 1, "govsi/revisit/wait/woken": 1}
    # Idle again: the time it woke for was looked at; the next is past the wait.
    assert w.holds()
    assert not w.holds()


def test_an_idle_crawl_ends_when_nothing_falls_due_within_the_wait(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    w = World(monkeypatch, [121.0])
    assert w.holds()  # while crawldb is asked
    assert w.scheduler.wakes == 1  # told at once, not at the engine's next heartbeat
    assert not w.holds()
    assert not w.scheduler.revisits.opened and "govsi/revisit/wait/waits" not in w.stats.values


def test_a_crawl_whose_due_times_cannot_be_read_ends(monkeypatch: pytest.MonkeyPatch) -> None:
    w = World(monkeypatch, None)
    assert w.holds()
    assert not w.holds()


def test_a_crawl_stopped_while_it_waits_does_not_wake(monkeypatch: pytest.MonkeyPatch) -> None:
    w = World(monkeypatch, [30.0])
    assert w.holds()
    w.ext.spider_closed(None)  # type: ignore[arg-type]
    w.advance(60)
    assert not w.scheduler.revisits.opened and not w.crawled


@pytest.mark.parametrize(
    ("settings", "wait"),
    [
        ({}, 0.0),  # the default: an idle crawl ends
        ({"REVISIT_WAIT": "3600"}, 3600.0),
        ({"REVISIT_WAIT": "-5"}, 0.0),
        ({"REVISIT_WAIT": "3600", "REVISIT": "off"}, 0.0),  # nothing ever falls due
    ],
)
def test_the_setting(settings: dict[str, str], wait: float) -> None:
    values = Settings()
    values.setmodule("govsi.settings")
    values.update(settings)
    config = WaitConfig.from_settings(values)
    assert config.wait == wait
    assert config.hub_min_interval == 3600.0  # REVISIT_HUB_MIN_INTERVAL
