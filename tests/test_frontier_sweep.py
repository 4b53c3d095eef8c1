"""The sweep before a crawl ends: a URL the seen-URL set wrongly took for known (a 64-bit
fingerprint shared with another) is still fetched, from its FRONTIER row in crawldb."""

from __future__ import annotations

from typing import Any

import pytest
from scrapy.exceptions import DontCloseSpider
from twisted.internet.defer import Deferred, succeed

from govsi.frontier.sweep import DrySweep
from tests.support.scheduler import DELAY, Harness, harnesses, make

__all__ = ["harnesses"]  # a fixture, used by name


class Store:
    def __init__(self, added: int, written: int) -> None:
        self.items_added, self.items_written = added, written
        self.outage = False
        self.flushes = 0

    def flush(self) -> Deferred[None]:
        self.flushes += 1
        return succeed(None)


class Sweep:
    """A DrySweep whose scan is answered by the test."""

    def __init__(self, added: int = 5, written: int = 5) -> None:
        self.store = Store(added, written)
        self.released: list[int] = []
        self.scans: list[Any] = []
        self.later: list[float] = []
        self.wakes = 0
        self.now = 0.0
        self.sweep = DrySweep(
            self.store, self.released, self.scans.append, self._wake, lambda stat: None,
            lambda delay, then: self.later.append(delay), lambda: self.now,
        )  # fmt: skip

    def _wake(self) -> None:
        self.wakes += 1


def test_an_idle_crawl_is_held_while_crawldb_is_swept_once() -> None:
    s = Sweep()
    assert s.sweep.hold() and len(s.scans) == 1  # the first idle: a sweep
    assert s.sweep.hold() and len(s.scans) == 1  # still running: held, not asked again
    s.scans[0]()
    assert s.wakes == 1  # the engine asks again at once
    assert not s.sweep.hold()  # nothing released or stored since: the crawl ends


def test_a_sweep_that_found_work_is_followed_by_another() -> None:
    s = Sweep()
    s.sweep.hold()
    s.scans[0]()
    s.released.append(1)  # the sweep's page was fetched...
    s.store.items_added = s.store.items_written = 6  # ...and stored
    assert s.sweep.hold() and len(s.scans) == 2
    s.scans[1]()
    assert not s.sweep.hold()


def test_no_sweep_before_crawldb_has_every_write() -> None:
    s = Sweep(added=7, written=5)
    # The writes are flushed at once, and the crawl asks again once they are in.
    assert s.sweep.hold() and s.scans == [] and s.store.flushes == 1 and s.later == [0.05]
    s.now = 9.0
    s.store.items_written = 7
    assert s.sweep.hold() and len(s.scans) == 1


@pytest.mark.parametrize(("outage", "waited"), [(False, 10.0), (True, 0.0)])
def test_a_crawldb_that_does_not_take_the_writes_does_not_keep_the_crawl_open(
    outage: bool, waited: float, caplog: pytest.LogCaptureFixture
) -> None:
    s = Sweep(added=7, written=5)
    s.store.outage = outage
    if not outage:
        assert s.sweep.hold()
        s.now = waited
    assert not s.sweep.hold() and s.scans == []
    assert "no last look at its FRONTIER rows" in caplog.text
    assert not s.sweep.hold()  # and it is said once
    assert caplog.text.count("no last look") == 1


def test_a_url_taken_for_known_is_fetched_from_its_frontier_row(
    harnesses: list[Harness], monkeypatch: pytest.MonkeyPatch
) -> None:
    h = make(harnesses, monkeypatch, {"a.gov.si": "10.0.0.1"})
    h.page("https://a.gov.si/")
    robots = h.take()
    assert robots is not None
    h.answer_robots(robots, body="User-agent: *\nAllow: /\n")
    h.at(DELAY)
    assert [r.url for r in h.drain()] == ["https://a.gov.si/"]
    # The page linked /skrita, whose fingerprint the set already held: no request was made,
    # but the writer gave it a FRONTIER row, as crawldb now says.
    rows = [("https://a.gov.si/", 0, 1), ("https://a.gov.si/skrita", 1, 2)]
    monkeypatch.setattr(h.store, "frontier_hosts", lambda *_: [("a.gov.si", rows[0][0], 2)],
                        raising=False)  # fmt: skip
    monkeypatch.setattr(
        h.store, "frontier_batch",
        lambda host, after, limit, max_depth=0: [r for r in rows if r[1:] > after][:limit],
        raising=False,
    )  # fmt: skip
    assert not h.scheduler.has_pending_requests()
    with pytest.raises(DontCloseSpider):
        h.scheduler.sweep.spider_idle()
    h.at(DELAY)
    assert h.take() is None  # the engine's ask that starts the host's refill
    assert [r.url for r in h.drain()] == ["https://a.gov.si/skrita"]  # / is not again
    assert h.stats.get_value("govsi/frontier/dry_sweeps") == 1
    assert not h.scheduler.has_pending_requests()
    # Idle again with only that page released since: one more look finds nothing new.
    with pytest.raises(DontCloseSpider):
        h.scheduler.sweep.spider_idle()
    h.scheduler.sweep.spider_idle()  # nothing new since: the crawl ends
    assert h.stats.get_value("govsi/frontier/dry_sweeps") == 2
