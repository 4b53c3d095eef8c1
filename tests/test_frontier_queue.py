"""The frontier's release decisions, driven with explicit times."""

from __future__ import annotations

import itertools
import random
from collections import defaultdict

import pytest

from govsi.frontier.queue import Frontier, HostQueue, HostState


def frontier(default: float = 5.0, ip: float = 5.0, window: int = 1000) -> Frontier:
    return Frontier(default_delay=default, ip_delay=ip, window=window)


def ready_host(f: Frontier, name: str, ip: str) -> None:
    f.set_ip(name, ip)
    f.open_gate(name)


def test_per_host_order_is_depth_then_discovery() -> None:
    f = frontier(default=0, ip=0)
    ready_host(f, "a.gov.si", "10.0.0.1")
    for depth, url in [(2, "d2-first"), (1, "d1-first"), (2, "d2-second"), (1, "d1-second")]:
        f.push("a.gov.si", depth, url)
    out = []
    for t in range(4):
        _host, entry = f.pop(float(t)) or (None, None)
        out.append(entry)
        f.finished("a.gov.si", float(t))
    assert out == ["d1-first", "d1-second", "d2-first", "d2-second"]


def test_pages_only_in_a_sitemap_leave_after_the_links_of_their_depth() -> None:
    f = frontier(default=0, ip=0)
    ready_host(f, "a.gov.si", "10.0.0.1")
    # The sitemap is read first, long before the links of depth 1 are found.
    f.push("a.gov.si", 1, "sitemap-1", late=True)
    f.push("a.gov.si", 1, "sitemap-2", late=True)
    f.push("a.gov.si", 0, "home")
    f.push("a.gov.si", 1, "link-1")
    f.push("a.gov.si", 2, "link-deeper")
    f.push("a.gov.si", 1, "link-2")
    out = []
    for t in range(6):
        _host, entry = f.pop(float(t)) or (None, None)
        out.append(entry)
        f.finished("a.gov.si", float(t))
    assert out == ["home", "link-1", "link-2", "sitemap-1", "sitemap-2", "link-deeper"]


def test_a_sitemap_page_waits_while_a_page_above_its_depth_may_bring_links() -> None:
    f = frontier(default=0, ip=0)
    ready_host(f, "a.gov.si", "10.0.0.1")
    f.push("a.gov.si", 0, "home")
    f.push("a.gov.si", 1, "sitemap-1", late=True)
    _host, entry = f.pop(0.0) or (None, None)
    assert entry == "home"
    f.page_opened("a.gov.si", 0)
    f.finished("a.gov.si", 0.0)
    # Downloaded, not yet parsed: its links are unknown, so the sitemap page waits.
    assert f.pop(1.0) is None
    f.push("a.gov.si", 1, "link-1")
    f.page_done("a.gov.si", 0)
    got = []
    for t in (2.0, 3.0):
        _host, entry = f.pop(t) or (None, None)
        got.append(entry)
        f.finished("a.gov.si", t)
    assert got == ["link-1", "sitemap-1"]
    # Pages open at its own depth or below do not hold it.
    f.push("a.gov.si", 2, "sitemap-2", late=True)
    f.page_opened("a.gov.si", 2)
    _host, entry = f.pop(4.0) or (None, None)
    assert entry == "sitemap-2"


def test_host_waits_its_delay_from_the_arrival_of_the_previous_request() -> None:
    f = frontier(default=5, ip=0)
    ready_host(f, "a.gov.si", "10.0.0.1")
    f.push("a.gov.si", 0, "one")
    f.push("a.gov.si", 0, "two")
    assert f.pop(100.0) is not None
    assert f.pop(100.0) is None  # in flight
    f.finished("a.gov.si", arrived_by=100.4)  # headers came back at 100.4
    assert f.next_ready_time() == pytest.approx(105.4)
    assert f.pop(105.3) is None
    popped = f.pop(105.4)
    assert popped is not None and popped[1] == "two"


@pytest.mark.parametrize(
    ("crawl_delay", "expected"),
    [(None, 5.0), (2.0, 5.0), (10.0, 10.0), (7.5, 7.5)],
    ids=["default", "shorter-ignored", "longer-wins", "fractional"],
)
def test_host_delay_is_the_larger_of_default_and_crawl_delay(
    crawl_delay: float | None, expected: float
) -> None:
    f = frontier(default=5, ip=0)
    if crawl_delay is not None:
        f.set_delay("a.gov.si", crawl_delay)
    assert f.host("a.gov.si").delay == expected


def test_hosts_sharing_an_address_share_its_delay_and_one_request_at_a_time() -> None:
    f = frontier(default=1, ip=5)
    for name in ("a.gov.si", "b.gov.si"):
        ready_host(f, name, "10.0.0.1")
        f.push(name, 0, name)
    first = f.pop(0.0)
    assert first is not None
    assert f.pop(0.0) is None  # the address is busy, though b has never been asked
    f.finished(first[0].name, arrived_by=0.1)
    assert f.pop(5.0) is None
    second = f.pop(5.1)
    assert second is not None and second[0].name != first[0].name


def test_different_addresses_go_in_parallel() -> None:
    f = frontier(default=5, ip=5)
    for i, name in enumerate(("a.gov.si", "b.gov.si", "c.gov.si")):
        ready_host(f, name, f"10.0.0.{i}")
        f.push(name, 0, name)
    released = {f.pop(0.0)[1] for _ in range(3)}  # type: ignore[index]
    assert released == {"a.gov.si", "b.gov.si", "c.gov.si"}


def test_a_gated_host_releases_only_robots_and_sitemaps() -> None:
    f = frontier(default=0, ip=0)
    f.set_ip("a.gov.si", "10.0.0.1")
    f.push("a.gov.si", 0, "page")
    assert f.pop(0.0) is None
    f.push("a.gov.si", -1, "robots.txt")
    assert f.pop(0.0)[1] == "robots.txt"  # type: ignore[index]
    f.finished("a.gov.si", 0.0)
    assert f.pop(1.0) is None
    f.open_gate("a.gov.si")
    assert f.pop(1.0)[1] == "page"  # type: ignore[index]


def test_a_host_without_an_address_is_never_released() -> None:
    f = frontier(default=0, ip=0)
    f.open_gate("a.gov.si")
    f.push("a.gov.si", 0, "page")
    assert f.pop(1e9) is None and f.next_ready_time() is None
    f.set_ip("a.gov.si", "10.0.0.1")
    assert f.pop(0.0)[1] == "page"  # type: ignore[index]


def test_the_window_refuses_only_spillable_entries() -> None:
    f = frontier(window=2)
    assert f.push("a.gov.si", 0, "p1") and f.push("a.gov.si", 1, "p2")
    assert not f.push("a.gov.si", 1, "p3")
    assert f.push("a.gov.si", -1, "robots.txt", spillable=False)
    assert len(f) == 3 and f.host("a.gov.si").refused == 1


def test_a_refused_entry_costs_no_delay() -> None:
    f = frontier(default=5, ip=5)
    ready_host(f, "a.gov.si", "10.0.0.1")
    for url in ("forbidden", "allowed"):
        f.push("a.gov.si", 0, url)
    refused: list[str] = []

    def admit(state: HostState, entry: str) -> bool:
        if entry == "forbidden":
            refused.append(entry)
            return False
        return True

    popped = f.pop(0.0, admit)
    assert popped is not None and popped[1] == "allowed"
    assert refused == ["forbidden"] and len(f) == 0


def test_the_address_ready_longest_goes_first() -> None:
    f = frontier(default=1, ip=1)
    for i, name in enumerate(("a.gov.si", "b.gov.si")):
        ready_host(f, name, f"10.0.0.{i}")
        f.push(name, 0, f"{name}/1")
        f.push(name, 0, f"{name}/2")
    got = [f.pop(0.0), f.pop(0.0)]
    f.finished("b.gov.si", 0.0)  # b is done earlier, so it is ready earlier
    f.finished("a.gov.si", 0.5)
    assert [g[0].name for g in got] == ["a.gov.si", "b.gov.si"]  # type: ignore[index]
    assert f.pop(2.0)[0].name == "b.gov.si"  # type: ignore[index]


@pytest.mark.parametrize("seed", range(5))
def test_simulated_crawl_is_polite_and_wastes_no_time(seed: int) -> None:
    """A discrete-event crawl: random hosts on shared addresses, random response times,
    a downloader that asks as soon as it can. Every gap holds, and the crawl takes as
    long as its busiest host or address needs, not longer."""
    rng = random.Random(seed)
    ip_delay = 1.0
    f = frontier(default=1.0, ip=ip_delay, window=10_000)
    pages = {}
    for i in range(30):
        name = f"h{i}.gov.si"
        ready_host(f, name, f"10.0.0.{rng.randrange(12)}")
        f.set_delay(name, rng.choice([1.0, 1.0, 2.0, 3.5]))
        pages[name] = rng.randrange(1, 15)
        for p in range(pages[name]):
            f.push(name, p % 3, f"{name}/{p}")

    now, in_flight = 0.0, []  # (finish time, arrival time, host)
    arrivals: dict[str, list[float]] = defaultdict(list)
    by_ip: dict[str, list[float]] = defaultdict(list)
    while len(f) or in_flight:
        while (popped := f.pop(now)) is not None:
            state, _ = popped
            latency = rng.uniform(0.001, 0.05)  # connection set-up, then the server sees it
            ttfb = rng.uniform(0.001, 0.05)
            arrival = now + latency
            arrivals[state.name].append(arrival)
            by_ip[state.ip or ""].append(arrival)
            in_flight.append((arrival + ttfb, arrival + ttfb, state.name))
        events = [t for t, _, _ in in_flight]
        nxt = f.next_ready_time()
        if nxt is not None:
            events.append(nxt)
        now = max(now, min(events))
        for item in [x for x in in_flight if x[0] <= now]:
            in_flight.remove(item)
            f.finished(item[2], arrived_by=item[1])

    for name, times in arrivals.items():
        gaps = [b - a for a, b in itertools.pairwise(times)]
        assert all(g >= f.host(name).delay for g in gaps), name
    for ip, times in by_ip.items():
        times.sort()
        assert all(b - a >= ip_delay for a, b in itertools.pairwise(times)), ip
    # The least time the same requests could take, against the time they took.
    ideal = max(
        max((n - 1) * f.host(h).delay for h, n in pages.items()),
        max((len(t) - 1) * ip_delay for t in by_ip.values()),
    )
    first = min(min(t) for t in arrivals.values())
    last = max(max(t) for t in arrivals.values())
    assert ideal / (last - first) > 0.88


def test_an_address_busy_longer_than_any_request_can_take_is_reported() -> None:
    f = frontier(default=0, ip=0)
    ready_host(f, "a.gov.si", "10.0.0.1")
    f.push("a.gov.si", 0, "page")
    f.pop(10.0)
    assert f.busy_longer_than(60, now=50.0) == []
    assert f.busy_longer_than(60, now=71.0) == ["a.gov.si"]
    f.finished("a.gov.si", 71.0)
    assert f.busy_longer_than(60, now=200.0) == []


def test_a_crawl_delay_learned_after_a_request_already_applies_to_it() -> None:
    f = frontier(default=0.5, ip=0.5)
    ready_host(f, "c.gov.si", "10.0.0.1")
    f.push("c.gov.si", 0, "page")
    f.close_gate("c.gov.si")
    f.push("c.gov.si", -2, "robots.txt", spillable=False)
    assert f.pop(0.0)[1] == "robots.txt"  # type: ignore[index]
    f.finished("c.gov.si", arrived_by=0.1)
    f.set_delay("c.gov.si", 1.5)  # parsed from that robots.txt, after it finished
    f.open_gate("c.gov.si")
    assert f.pop(0.7) is None
    assert f.pop(1.6)[1] == "page"  # type: ignore[index]


def test_census_counts_the_address_delay_too() -> None:
    f = frontier(default=1, ip=5)
    for name in ("a.gov.si", "b.gov.si"):
        ready_host(f, name, "10.0.0.1")
        f.push(name, 0, name)
    ready_host(f, "c.gov.si", "10.0.0.2")
    f.push("c.gov.si", 0, "c")
    assert f.census(0.0) == (3, 0, 0)
    f.pop(0.0)
    f.pop(0.0)
    assert f.census(0.0) == (0, 1, 2)  # the other host of the busy address waits
    f.finished("a.gov.si", 0.0)
    f.finished("c.gov.si", 0.0)
    assert f.census(2.0) == (0, 1, 0)  # its own delay is over, the address's is not
    assert f.census(5.0) == (1, 0, 0)


def test_held_pages_wait_while_what_renders_need_goes_out() -> None:
    # The browser's queue is full: pages wait, a render's script (negative depth) goes,
    # still after its host's delay; once the hold ends the pages go again.
    f = frontier(default=1.0, ip=1.0)
    ready_host(f, "a.gov.si", "10.0.0.1")
    ready_host(f, "b.gov.si", "10.0.0.2")
    f.push("a.gov.si", 0, "a-page")
    f.push("b.gov.si", 0, "b-page")
    f.hold_pages(True)
    assert f.pop(0.0) is None
    assert f.census(0.0) == (0, 0, 0)  # held pages are not work that is ready
    f.push("a.gov.si", -2, "a-script")
    assert f.pop(0.0)[1] == "a-script"  # type: ignore[index]
    f.finished("a.gov.si", 0.0)
    f.hold_pages(False)
    assert f.pop(0.5)[1] == "b-page"  # type: ignore[index]
    assert f.pop(0.5) is None  # a.gov.si waits its delay from the script
    assert f.pop(1.0)[1] == "a-page"  # type: ignore[index]
    assert f.next_ready_time() is None


def test_a_held_host_waits_while_the_others_go_on() -> None:
    # The browser's queue holds enough of a.gov.si's pages: its pages wait, b.gov.si's
    # go; a.gov.si's scripts for its renders still go; released, its pages go again.
    f = frontier(default=0.0, ip=0.0)
    ready_host(f, "a.gov.si", "10.0.0.1")
    ready_host(f, "b.gov.si", "10.0.0.2")
    f.push("a.gov.si", 0, "a-page")
    f.push("b.gov.si", 0, "b-page")
    f.hold_host("a.gov.si", True)
    assert f.pop(0.0)[1] == "b-page"  # type: ignore[index]
    f.finished("b.gov.si", 0.0)
    assert f.pop(0.0) is None
    assert f.census(0.0) == (0, 0, 0)
    f.push("a.gov.si", -2, "a-script")
    assert f.pop(0.0)[1] == "a-script"  # type: ignore[index]
    f.finished("a.gov.si", 0.0)
    f.hold_host("a.gov.si", False)
    assert f.pop(0.0)[1] == "a-page"  # type: ignore[index]


@pytest.mark.parametrize(
    ("pushes", "order"),
    [
        ([], []),
        ([(0, "a")], ["a"]),
        ([(1, "a"), (0, "b"), (1, "c"), (0, "d")], ["b", "d", "a", "c"]),
        ([(1.5, "late"), (1, "a"), (2, "deep"), (1, "b")], ["a", "b", "late", "deep"]),
        ([(-1, "robots"), (0, "page"), (-1, "sitemap")], ["robots", "sitemap", "page"]),
    ],
)
def test_a_host_queue_gives_levels_in_order_and_each_level_first_in_first_out(
    pushes: list[tuple[float, str]], order: list[str]
) -> None:
    queue = HostQueue()
    for level, entry in pushes:
        queue.push(level, entry)
    assert list(queue) == order and len(queue) == len(order)
    assert queue.head() == (min(level for level, _ in pushes) if pushes else None)
    assert [queue.pop() for _ in order] == order
    assert len(queue) == 0 and queue.head() is None


def test_a_host_queue_discards_stale_entries_and_keeps_the_order_of_the_rest() -> None:
    queue = HostQueue()
    for level, entry in [(2, "x1"), (0, "a"), (2, "b"), (0, "x2"), (1, "x3"), (1, "c")]:
        queue.push(level, entry)
    assert queue.discard(lambda e: e.startswith("x")) == 3
    assert list(queue) == ["a", "c", "b"] and len(queue) == 3
    queue.push(0, "d")
    assert [queue.pop() for _ in range(4)] == ["a", "d", "c", "b"]
