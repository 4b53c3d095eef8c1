"""Sharing a crawl without a database: the lease keeper's arithmetic (how many addresses a
worker serves, which it hands over) and the scheduler's answers to it
(``govsi.frontier.addresses``): when an address is idle, when it may be handed over."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import pytest
from scrapy import Request
from scrapy.statscollectors import MemoryStatsCollector
from scrapy.utils.test import get_crawler

from govsi.frontier.addresses import AddressSharing, robots_key
from govsi.frontier.entries import Entry, HostInfo
from govsi.frontier.outcomes import PagesOut
from govsi.frontier.queue import Frontier
from govsi.items import RobotsFile
from govsi.requestmeta import KIND_PAGE, META_KIND, META_URL
from govsi.sharing.keeper import LeaseCallbacks, LeaseKeeper, _Outcome, share_of, to_hand_over


@pytest.mark.parametrize(
    ("with_work", "workers", "share"),
    [
        (0, 1, 1),  # nothing to do: still room for the first address that turns up
        (10, 1, 10),  # alone: everything
        (9, 3, 3),
        (10, 3, 4),  # rounded up: three workers together cover all ten
        (1, 3, 1),
        (4, 0, 4),  # no heartbeat on record yet: counted as one worker
    ],
)
def test_share_of(with_work: int, workers: int, share: int) -> None:
    assert share_of(with_work, workers) == share


def test_shares_always_cover_the_work() -> None:
    for with_work in range(0, 40):
        for workers in range(1, 8):
            assert share_of(with_work, workers) * workers >= with_work


HELD = ["a", "b", "c", "d", "e"]


@pytest.mark.parametrize(
    ("idle", "moving", "share", "asked", "expected"),
    [
        (set(), set(), 5, {"a", "b"}, []),  # within its share: keeps all
        (set(), set(), 3, set(), []),  # beyond it, but nobody asks
        (set(), set(), 3, {"b", "d", "e"}, ["b", "d"]),  # two beyond its share, asked for
        (set(), set(), 1, {"e"}, ["e"]),  # only what is asked for
        ({"a", "b"}, set(), 3, {"c", "d"}, []),  # idle ones go back anyway: within share
        ({"a"}, set(), 3, {"a", "c", "d"}, ["c"]),  # an idle address is not handed over
        (set(), {"c"}, 3, {"c", "d", "e"}, ["c", "d"]),  # one already on its way counts
        (set(), {"c"}, 5, set(), ["c"]),  # once started, a hand-over is carried through
        ({"c"}, {"c"}, 5, set(), []),  # ... unless the address went idle meanwhile
    ],
)
def test_to_hand_over(
    idle: set[str], moving: set[str], share: int, asked: set[str], expected: list[str]
) -> None:
    assert to_hand_over(HELD, idle, moving, share, asked) == expected


@pytest.mark.parametrize(
    ("load", "share", "expected"),
    [
        # The least loaded go; the busiest address stays with its worker.
        ({"a": 900, "b": 3, "c": 0, "d": 40, "e": 7}, 3, ["c", "b"]),
        ({"a": 900, "b": 3, "c": 0, "d": 40, "e": 7}, 4, ["c"]),
        # Among equals, in the order held.
        ({"a": 1, "b": 1, "c": 1, "d": 1, "e": 1}, 3, ["a", "b"]),
        ({}, 3, ["a", "b"]),
        # A request out now counts above any queue.
        ({"a": 10**9, "b": 10**9 + 2, "c": 5, "d": 10**9, "e": 10**9}, 4, ["c"]),
    ],
)
def test_to_hand_over_moves_the_least_loaded_first(
    load: dict[str, int], share: int, expected: list[str]
) -> None:
    assert to_hand_over(HELD, set(), set(), share, set(HELD), load) == expected


def test_a_notice_brings_a_round_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = Calls()
    keeper = recording_keeper(object(), calls)  # shared
    rounds: list[float] = []
    monkeypatch.setattr(keeper, "soon", lambda delay=0.0: rounds.append(delay))
    keeper.state.held["10.0.0.1"] = 1e18
    keeper.state.wanted.add("10.0.0.2")
    keeper._notice("want", "10.0.0.3")  # not ours: nothing to do
    keeper._notice("free", "10.0.0.1")  # ours already
    assert rounds == []
    keeper._notice("want", "10.0.0.1")  # another worker asks for ours
    assert rounds == [0.0] and "10.0.0.1" in keeper.state.wanted_elsewhere
    keeper._notice("free", "10.0.0.2")  # what we wait for was given back
    assert rounds == [0.0, 0.0]


def test_a_round_that_finds_the_worker_above_its_share_starts_handing_over() -> None:
    keeper = recording_keeper(object(), Calls())
    later: list[float] = []
    keeper.soon = lambda delay=0.0: later.append(delay)  # type: ignore[method-assign]
    keeper.state.held = dict.fromkeys(["a", "b", "c"], 1e18)
    keeper.state.share = 3
    # Renewed; a second worker joined (share 2) and asks for "c": hand over now.
    renewed = dict.fromkeys(["a", "b", "c"], 1e18)
    keeper._done(_Outcome(renewed=renewed, share=2, wanted_elsewhere={"c"}), scan=False)
    assert later == [0.0]
    # The same next round (nothing changed): no new round of its own, so no spinning.
    keeper._done(_Outcome(renewed=renewed, share=2, wanted_elsewhere={"c"}), scan=False)
    assert later == [0.0]
    # Asked for, but within its share: nothing to hand over.
    keeper._done(_Outcome(renewed=renewed, share=3, wanted_elsewhere={"b", "c"}), scan=False)
    assert later == [0.0]


def test_a_round_asked_for_during_a_round_follows_it() -> None:
    keeper = recording_keeper(object(), Calls())
    later: list[float] = []
    keeper.soon = lambda delay=0.0: later.append(delay)  # type: ignore[method-assign]
    keeper._busy = True
    keeper.tick()  # a notice while the round is out
    keeper._done(_Outcome(), scan=False)
    assert later == [0.0]
    keeper._moving = {"10.0.0.1"}  # a hand-over under way: its next step soon
    keeper._done(_Outcome(), scan=False)
    assert later == [0.0, 0.2]


@dataclass
class Calls:
    granted: list[tuple[str, float | None, bool]] = field(default_factory=list)
    lost: list[str] = field(default_factory=list)


def recording_keeper(engine: Any, calls: Calls) -> LeaseKeeper:
    """A keeper (ttl 30 s) whose grants and losses land in ``calls``."""
    return LeaseKeeper(
        engine,
        LeaseCallbacks(
            granted=lambda *a: calls.granted.append(a),
            lost=calls.lost.append,
            arrivals=lambda ips: dict.fromkeys(ips),
            idle=lambda ips: [],
            found_hosts=lambda: None,
            movable=lambda ips: [],
        ),
        ttl=30,
        scan_interval=10,
    )


def test_without_a_shared_database_every_address_is_granted_at_once() -> None:
    calls = Calls()
    keeper = recording_keeper(None, calls)
    keeper.start()
    keeper.want("10.0.0.1")
    keeper.want("10.0.0.1")
    assert calls.granted == [("10.0.0.1", None, False)]
    assert keeper.holds("10.0.0.1") and not keeper.waiting()
    keeper.tick()  # nothing to renew or scan
    keeper.stop()
    assert calls.lost == []


def test_a_lease_is_dropped_on_time_while_a_round_hangs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # crawldb stopped answering in the middle of a round (a network partition): the round
    # never ends, and the address must not be served past its lease all the same.
    calls = Calls()
    clock = [1000.0]
    monkeypatch.setattr("govsi.sharing.keeper.time.monotonic", lambda: clock[0])
    keeper = recording_keeper(object(), calls)  # shared; the hung round never reaches it
    keeper.state.held["10.0.0.1"] = 1000.0 + 30  # renewed at 1000
    keeper._busy = True  # a round is out, and stays out
    for t in (1000.0, 1010.0, 1019.9):
        clock[0] = t
        keeper.tick()
        keeper.expire()
    assert keeper.holds("10.0.0.1") and calls.lost == []
    clock[0] = 1020.1  # the margin (ttl / 3) before the lease runs out
    keeper.expire()
    assert not keeper.holds("10.0.0.1") and calls.lost == ["10.0.0.1"]
    assert "10.0.0.1" in keeper.state.wanted  # taken up only through a round that works
    # The round that hung ends at last, late, saying it renewed the lease at its start:
    # that is no grant, so the address is not served again until a round acquires it.
    keeper._done(_Outcome(renewed={"10.0.0.1": 1030.0}, sent=1000.0), scan=False)
    assert not keeper.holds("10.0.0.1") and calls.granted == []


class FakeStore:
    """What AddressSharing uses of CrawlStore: item counts, flush, fetched URLs."""

    engine = None

    def __init__(self) -> None:
        self.items_added = 0
        self.items_written = 0
        self.flushes = 0

    def flush(self) -> None:
        self.flushes += 1

    def fetched_on_hosts(self, hosts: list[str]) -> set[str]:
        return set()


class World:
    def __init__(self) -> None:
        self.frontier = Frontier(default_delay=0, ip_delay=0)
        self.store = FakeStore()
        self.hosts: dict[str, HostInfo] = {}
        self.released: set[int] = set()
        self.sharing = AddressSharing(
            frontier=self.frontier,
            store=self.store,  # type: ignore[arg-type]
            served=self,
            stats=MemoryStatsCollector(get_crawler()),
            ttl=30,
            scan_interval=10,
            shared=False,
        )

    # What AddressSharing asks of the scheduler it serves (frontier.addresses.Served).
    def mark_released(self, fingerprints: Iterable[int]) -> None:
        self.released.update(fingerprints)

    def wake(self) -> None:
        pass

    def scan_frontier(self) -> None:
        pass

    def robots_read(self, stored: dict[str, Any]) -> None:
        pass

    def add_host(self, host: str, ip: str, *urls: str) -> None:
        self.hosts[host] = HostInfo(robots_url=f"https://{host}/robots.txt", ip=ip)
        self.frontier.open_gate(host)
        for url in urls:
            self.frontier.push(host, 1, Entry(KIND_PAGE, url, 1))
        self.sharing.resolved(host, ip)

    def fetch_one(self, now: float = 0.0) -> str:
        popped = self.frontier.pop(now)
        assert popped is not None
        state, entry = popped
        self.sharing.page_out(entry.url, self.hosts[state.name].ip)
        self.frontier.finished(state.name, now)  # left the downloader
        self.store.items_added += 1  # the spider's item, in the store, not yet written
        self.sharing.settled(entry.url)
        return str(entry.url)

    def idle(self, *ips: str) -> list[str]:
        return self.sharing.leases.cb.idle(list(ips))

    def movable(self, *ips: str) -> list[str]:
        return self.sharing.leases.cb.movable(list(ips))


def test_an_address_is_idle_only_when_its_hosts_have_no_work_and_all_is_written() -> None:
    w = World()
    w.add_host("a.gov.si", "10.0.0.1", "https://a.gov.si/1")
    w.add_host("b.gov.si", "10.0.0.2")
    assert w.idle("10.0.0.1", "10.0.0.2") == ["10.0.0.2"]  # a page is queued on a's
    w.fetch_one()
    assert w.idle("10.0.0.1", "10.0.0.2") == []  # its page is not in crawldb yet
    w.store.items_written = w.store.items_added
    assert w.idle("10.0.0.1", "10.0.0.2") == ["10.0.0.1", "10.0.0.2"]
    w.hosts["b.gov.si"].backlog = True  # rows in crawldb for b: not idle
    assert w.idle("10.0.0.1", "10.0.0.2") == ["10.0.0.1"]


def test_hand_over_stops_requests_first_and_lets_go_once_the_writes_are_in() -> None:
    w = World()
    w.add_host("a.gov.si", "10.0.0.1", "https://a.gov.si/1", "https://a.gov.si/2")
    w.fetch_one()
    assert w.movable("10.0.0.1") == []  # step one: stop, write
    assert w.store.flushes == 1
    assert w.frontier.pop(1.0) is None  # the host is parked: nothing more goes out
    assert w.movable("10.0.0.1") == []  # its page is not written yet
    w.store.items_written = w.store.items_added
    assert w.movable("10.0.0.1") == ["10.0.0.1"]
    assert [e.url for e in w.frontier.entries("a.gov.si")] == ["https://a.gov.si/2"]


def test_an_address_with_a_request_out_is_not_handed_over() -> None:
    w = World()
    w.add_host("a.gov.si", "10.0.0.1", "https://a.gov.si/1")
    assert w.frontier.pop(0.0) is not None  # out, no answer yet
    assert w.movable("10.0.0.1") == []
    w.store.items_written = w.store.items_added
    assert w.movable("10.0.0.1") == []  # still out
    w.frontier.finished("a.gov.si", 1.0)
    assert w.movable("10.0.0.1") == []  # now its writes
    assert w.movable("10.0.0.1") == ["10.0.0.1"]


def test_a_response_still_in_the_spider_keeps_the_address() -> None:
    # It left the downloader, but its page is not in the store yet (or waits for its
    # rendered version): given away now, the next holder would not know it was fetched.
    w = World()
    w.add_host("a.gov.si", "10.0.0.1", "https://a.gov.si/1")
    popped = w.frontier.pop(0.0)
    assert popped is not None
    w.sharing.page_out("https://a.gov.si/1", "10.0.0.1")
    w.frontier.finished("a.gov.si", 0.0)
    assert w.idle("10.0.0.1") == []
    assert w.movable("10.0.0.1") == [] and w.movable("10.0.0.1") == []
    w.store.items_added += 1
    w.sharing.settled("https://a.gov.si/1")
    assert w.movable("10.0.0.1") == []  # the page's write is asked for
    w.store.items_written = w.store.items_added
    assert w.movable("10.0.0.1") == ["10.0.0.1"]


def test_a_robots_txt_fetched_here_keeps_the_address_until_its_record_is_written() -> None:
    # Given away before its record is in crawldb, the next holder would fetch it again.
    w = World()
    w.add_host("a.gov.si", "10.0.0.1")
    out = PagesOut(w.frontier, settled=w.sharing.settled, changed=lambda: None, stuck_after=60)
    w.sharing.page_out(robots_key("a.gov.si"), "10.0.0.1")
    assert w.movable("10.0.0.1") == []
    w.store.items_added += 1
    out.item_done(RobotsFile("a.gov.si", "User-agent: *\nDisallow:\n", 200))
    assert w.movable("10.0.0.1") == []  # its write is asked for
    w.store.items_written = w.store.items_added
    assert w.movable("10.0.0.1") == ["10.0.0.1"]


def test_an_outcome_that_never_comes_is_forgotten_after_a_while() -> None:
    w = World()
    w.sharing.settle_within = 0.0
    w.add_host("a.gov.si", "10.0.0.1")
    w.sharing.page_out("https://a.gov.si/lost", "10.0.0.1")
    assert w.idle("10.0.0.1") == ["10.0.0.1"]


def test_a_queued_retry_keeps_the_address_until_it_is_fetched() -> None:
    w = World()
    w.add_host("a.gov.si", "10.0.0.1")
    retry = Request(
        "https://a.gov.si/napaka",
        dont_filter=True,
        meta={META_KIND: KIND_PAGE, META_URL: "https://a.gov.si/napaka"},
    )
    w.frontier.push("a.gov.si", 1, retry, spillable=False)
    # The next holder would fetch it again: not even the first step is taken.
    assert w.movable("10.0.0.1") == []
    assert w.store.flushes == 0
    assert w.frontier.pop(0.0) is not None  # still served
    w.frontier.finished("a.gov.si", 0.0)
    assert w.movable("10.0.0.1") == []  # now step one
    assert w.movable("10.0.0.1") == ["10.0.0.1"]


def test_a_retry_arriving_during_a_hand_over_is_served_here() -> None:
    w = World()
    w.add_host("a.gov.si", "10.0.0.1", "https://a.gov.si/1")
    assert w.movable("10.0.0.1") == []  # step one: parked
    retry = Request("https://a.gov.si/2", dont_filter=True,
                    meta={META_KIND: KIND_PAGE, META_URL: "https://a.gov.si/2"})  # fmt: skip
    w.frontier.push("a.gov.si", 1, retry, spillable=False)
    assert w.movable("10.0.0.1") == []  # hand-over called off: served again
    served = []
    while (popped := w.frontier.pop(0.0)) is not None:
        served.append(popped[1])
        w.frontier.finished("a.gov.si", 0.0)
    assert retry in served
