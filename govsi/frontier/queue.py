"""The time-aware breadth-first frontier: which request may go out now, and when the next
one may.

Plain Python with time passed in, so every decision can be tested without a crawl; the
Scrapy scheduler (``govsi.frontier.scheduler``) feeds it and asks it. Rules:

- Per host, entries leave in order of depth, then of discovery (FIFO); pages known only
  from a sitemap after those found through links at the same depth. Entries with a
  negative depth (robots.txt, sitemaps) go before any page, and while a host is *gated*
  (its robots.txt is not known yet) only those may leave.
- Hosts are grouped by IP address, and the group is what is scheduled: at most one
  request is in flight per IP address (so per host), a host waits its own delay and an
  address ``ip_delay`` between requests. Hosts whose address is not known yet are not
  scheduled at all.
- While pages are *held*, only entries with a negative depth leave: robots.txt, sitemaps,
  and the sub-resources renders wait for. A host's pages are held while the browser's
  queue has enough of that host's pages; every host's while the queue is full.
- Delays are counted from the moment the previous request is known to have reached the
  server: when its response headers arrived, or when it failed. A request dispatched
  then cannot arrive at the server earlier than ``delay`` after its predecessor did,
  whatever the connection set-up cost of either.
- Memory holds a bounded window of entries. ``push`` refuses spillable entries beyond
  it; the caller keeps them elsewhere (crawldb's FRONTIER rows) and pushes them again.
"""

from __future__ import annotations

import heapq
import itertools
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Frontier", "HostQueue", "HostState"]


class HostQueue:
    """A host's queued entries, by level (depth, 0.5 more when late), first in first out
    within a level. One deque per level holds only the entries: no tuple and no sequence
    number per entry (~100 bytes less than a heap of (level, seq, entry), a third of it)."""

    __slots__ = ("_levels", "_order", "_size")

    def __init__(self) -> None:
        self._levels: dict[float, deque[Any]] = {}
        self._order: list[float] = []  # a heap of the levels in ``_levels``
        self._size = 0

    def __len__(self) -> int:
        return self._size

    def head(self) -> float | None:
        """The level of the entry ``pop`` returns next; None when empty."""
        return self._order[0] if self._order else None

    def push(self, level: float, entry: Any) -> None:
        entries = self._levels.get(level)
        if entries is None:
            entries = self._levels[level] = deque()
            heapq.heappush(self._order, level)
        entries.append(entry)
        self._size += 1

    def pop(self) -> Any:
        """The first entry of the lowest level (IndexError when empty)."""
        level = self._order[0]
        entries = self._levels[level]
        entry = entries.popleft()
        if not entries:
            del self._levels[level]
            heapq.heappop(self._order)
        self._size -= 1
        return entry

    def __iter__(self) -> Iterator[Any]:
        """The entries in the order they leave."""
        for level in sorted(self._order):
            yield from self._levels[level]

    def discard(self, drop: Callable[[Any], bool]) -> int:
        """Take out the entries ``drop`` says are stale; returns how many."""
        removed = 0
        for level in list(self._order):
            entries = self._levels[level]
            kept = deque(e for e in entries if not drop(e))
            removed += len(entries) - len(kept)
            if kept:
                self._levels[level] = kept
            else:
                del self._levels[level]
        if removed:
            self._order = list(self._levels)
            heapq.heapify(self._order)
            self._size -= removed
        return removed


@dataclass
class HostState:
    name: str
    delay: float
    ip: str | None = None
    gated: bool = True
    # When its last request is known to have reached the server. The delay is applied on
    # reading, so a Crawl-delay learned from the robots.txt just fetched already counts.
    last_arrival: float = float("-inf")
    # Its entries, opaque here.
    queue: HostQueue = field(default_factory=HostQueue)
    # Requests released so far, and how many page entries the window refused.
    released: int = 0
    refused: int = 0
    # Pages released whose links are not known yet, by depth: a late entry waits while a
    # page above its depth may still bring the links that go before it.
    open_pages: dict[int, int] = field(default_factory=dict)
    # Its pages wait (the browser's queue holds enough of them); see Frontier.hold_host.
    held: bool = False

    @property
    def free_at(self) -> float:
        return self.last_arrival + self.delay

    def eligible(self, held: bool = False) -> bool:
        head = self.queue.head()
        if head is None:
            return False
        if head < 0:
            return True
        if self.gated or held or self.held:
            return False
        return head == int(head) or not any(d < int(head) for d in self.open_pages)


@dataclass
class _IpGroup:
    ip: str
    free_at: float = 0.0
    busy_host: str | None = None
    busy_since: float = 0.0
    # The time this group is in the heap for (None: not in it). Only an earlier time adds
    # a heap entry, so the heap grows with wake-ups, not with queued entries.
    scheduled_at: float | None = None
    hosts: dict[str, HostState] = field(default_factory=dict)


class Frontier:
    def __init__(self, default_delay: float, ip_delay: float, window: int = 100_000) -> None:
        self.default_delay = default_delay
        self.ip_delay = ip_delay
        self.window = window
        self.hosts: dict[str, HostState] = {}
        self._groups: dict[str, _IpGroup] = {}
        self._seq = itertools.count()
        self._size = 0
        self.held = False
        # Lazy heap of (time the group may be ready, seq, ip); stale entries are skipped.
        self._heap: list[tuple[float, int, str]] = []

    # -- hosts ------------------------------------------------------------------------------
    def host(self, name: str) -> HostState:
        state = self.hosts.get(name)
        if state is None:
            state = self.hosts[name] = HostState(name, self.default_delay)
        return state

    def set_ip(self, name: str, ip: str) -> None:
        """Place a host in its address group; from now on it can be scheduled."""
        state = self.host(name)
        if state.ip == ip:
            return
        if state.ip is not None:
            old = self._groups[state.ip]
            old.hosts.pop(name, None)
        state.ip = ip
        group = self._groups.get(ip)
        if group is None:
            group = self._groups[ip] = _IpGroup(ip)
        group.hosts[name] = state
        self._wake(group)

    def park(self, name: str) -> None:
        """Take a host out of scheduling (its address is served by another process now);
        its entries stay queued until ``set_ip`` places it again."""
        state = self.host(name)
        if state.ip is not None:
            self._groups[state.ip].hosts.pop(name, None)
            state.ip = None

    def set_last_arrival(self, name: str, when: float) -> None:
        """A request reached the host's address at ``when`` (learned from elsewhere)."""
        state = self.host(name)
        state.last_arrival = max(state.last_arrival, when)
        if state.ip is not None:
            group = self._groups[state.ip]
            group.free_at = max(group.free_at, when + self.ip_delay)
            self._wake(group)

    def last_arrival(self, ip: str) -> float | None:
        """When a request last reached this address, as far as this frontier knows."""
        group = self._groups.get(ip)
        if group is None:
            return None
        latest = max((h.last_arrival for h in group.hosts.values()), default=float("-inf"))
        latest = max(latest, group.free_at - self.ip_delay)
        return None if latest == float("-inf") or latest <= 0 else latest

    def idle(self, ip: str) -> bool:
        """Nothing queued or in flight for any host on this address."""
        group = self._groups.get(ip)
        return group is None or (
            group.busy_host is None and not any(h.queue for h in group.hosts.values())
        )

    def set_delay(self, name: str, delay: float) -> None:
        """The host's delay: never below the default (a longer Crawl-delay wins)."""
        state = self.host(name)
        state.delay = max(self.default_delay, delay)
        self._wake_host(state)

    def open_gate(self, name: str) -> None:
        """Pages of this host may leave (its robots.txt is known)."""
        state = self.host(name)
        state.gated = False
        self._wake_host(state)

    def close_gate(self, name: str) -> None:
        self.host(name).gated = True

    def hold_pages(self, held: bool) -> None:
        """Hold every host's pages back (True), or let them go again (False)."""
        if held == self.held:
            return
        self.held = held
        if not held:
            for group in self._groups.values():
                self._wake(group)

    def hold_host(self, name: str, held: bool) -> None:
        """Hold one host's pages back (True), or let them go again (False); the other
        hosts' pages go on."""
        state = self.host(name)
        if held == state.held:
            return
        state.held = held
        if not held:
            self._wake_host(state)

    # -- entries ------------------------------------------------------------------------------
    def push(
        self, name: str, depth: int, entry: Any, spillable: bool = True, late: bool = False
    ) -> bool:
        """Queue an entry; False (and not queued) when a spillable entry finds the window
        full. Only entries the caller can find again elsewhere may be spillable. A ``late``
        entry leaves after every other entry of its depth, even those queued later (pages
        listed only in a sitemap, read long before the links of their depth are found)."""
        state = self.host(name)
        if spillable and self._size >= self.window:
            state.refused += 1
            return False
        state.queue.push(depth + 0.5 if late else depth, entry)
        self._size += 1
        self._wake_host(state)
        return True

    def __len__(self) -> int:
        return self._size

    def queued(self, name: str) -> int:
        state = self.hosts.get(name)
        return 0 if state is None else len(state.queue)

    def entries(self, name: str) -> Iterator[Any]:
        state = self.hosts.get(name)
        return iter(()) if state is None else iter(state.queue)

    def discard(self, name: str, drop: Callable[[Any], bool]) -> int:
        """Take the host's queued entries ``drop`` says are stale out; returns how many."""
        removed = self.host(name).queue.discard(drop)
        self._size -= removed
        return removed

    # -- releasing ---------------------------------------------------------------------------
    def pop(
        self, now: float, admit: Callable[[HostState, Any], bool] | None = None
    ) -> tuple[HostState, Any] | None:
        """The next entry that may go out at ``now``, its address marked busy; else None.

        ``admit`` may refuse an entry at the last moment (robots.txt, a trap, a budget):
        a refused entry is dropped and costs its host no delay.
        """
        while self._heap and self._heap[0][0] <= now:
            when, _, ip = heapq.heappop(self._heap)
            group = self._groups[ip]
            if group.scheduled_at != when:
                continue  # superseded by an earlier entry
            group.scheduled_at = None
            while (ready := self._ready_at(group)) is not None and ready <= now:
                state = self._choose(group, now)
                entry = state.queue.pop()
                self._size -= 1
                if admit is None or admit(state, entry):
                    group.busy_host, group.busy_since = state.name, now
                    state.released += 1
                    return state, entry
            self._wake(group)
        return None

    def page_opened(self, name: str, depth: int) -> None:
        """A page of ``name`` went out; its links are known once ``page_done``."""
        pages = self.host(name).open_pages
        pages[depth] = pages.get(depth, 0) + 1

    def page_done(self, name: str, depth: int) -> None:
        state = self.host(name)
        left = state.open_pages.get(depth, 0) - 1
        if left > 0:
            state.open_pages[depth] = left
        else:
            state.open_pages.pop(depth, None)
            self._wake_host(state)

    def finished(self, name: str, arrived_by: float) -> None:
        """The request released for ``name`` is over; it reached the server by ``arrived_by``."""
        state = self.host(name)
        state.last_arrival = max(state.last_arrival, arrived_by)
        if state.ip is not None:
            group = self._groups[state.ip]
        else:
            # Parked while its request was out: its address still counts the request.
            parked = [g for g in self._groups.values() if g.busy_host == name]
            if not parked:
                return
            group = parked[0]
        group.free_at = max(group.free_at, arrived_by + self.ip_delay)
        if group.busy_host == name:
            group.busy_host = None
        self._wake(group)

    def next_ready_time(self) -> float | None:
        """When ``pop`` may next return something (None: not before a push or a finish)."""
        while self._heap:
            when, _, ip = self._heap[0]
            if self._groups[ip].scheduled_at == when:
                return when
            heapq.heappop(self._heap)
        return None

    def busy_longer_than(self, seconds: float, now: float) -> list[str]:
        """Hosts whose request has been out longer than any request can take."""
        return [
            g.busy_host
            for g in self._groups.values()
            if g.busy_host is not None and now - g.busy_since > seconds
        ]

    def census(self, now: float) -> tuple[int, int, int]:
        """Hosts with work: (ready to go now, waiting for a delay, in flight)."""
        ready = waiting = busy = 0
        for group in self._groups.values():
            for state in group.hosts.values():
                if state.name == group.busy_host:
                    busy += 1
                elif state.eligible(self.held):
                    if max(group.free_at, state.free_at) <= now and group.busy_host is None:
                        ready += 1
                    else:
                        waiting += 1
        return ready, waiting, busy

    def busy_hosts(self) -> list[str]:
        return [g.busy_host for g in self._groups.values() if g.busy_host is not None]

    # -- internals ---------------------------------------------------------------------------
    def _ready_at(self, group: _IpGroup) -> float | None:
        times = [h.free_at for h in group.hosts.values() if h.eligible(self.held)]
        if not times:
            return None
        return max(group.free_at, min(times))

    def _choose(self, group: _IpGroup, now: float) -> HostState:
        # Hosts of one address take turns; the one with the most waiting time ahead of it
        # (queued entries x its delay) is the crawl's critical path and goes first, so that
        # a slow host is never left waiting behind quick ones. Ties: ready longest.
        ready = (h for h in group.hosts.values() if h.eligible(self.held) and h.free_at <= now)
        return min(ready, key=lambda h: (-len(h.queue) * h.delay, h.free_at))

    def _wake_host(self, state: HostState) -> None:
        if state.ip is not None:
            self._wake(self._groups[state.ip])

    def _wake(self, group: _IpGroup) -> None:
        if group.busy_host is not None:
            return  # finished() wakes it
        ready = self._ready_at(group)
        if ready is not None and (group.scheduled_at is None or ready < group.scheduled_at):
            group.scheduled_at = ready
            heapq.heappush(self._heap, (ready, next(self._seq), group.ip))
