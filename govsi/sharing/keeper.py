"""The scheduler's side of sharing a crawl: which IP addresses this process may serve now.

Several crawler processes on one PostgreSQL crawldb take IP addresses from its
``ip_lease`` table (``govsi.sharing.leases``). The scheduler asks for an address when one of its
hosts resolves to it (``want``) and schedules that address's hosts only once the lease is
granted; ``LeaseKeeper`` renews what it holds every ``ttl / 3`` seconds in a worker thread,
retries what it wants, gives back addresses it has had no work for, and tells the
scheduler about each lease granted or lost. Every ``scan_interval`` it also lists the
hosts with FRONTIER rows in crawldb: pages other workers found.

On SQLite (one process only) every address is granted at once and nothing is stored.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast

from sqlalchemy import Engine
from twisted.internet import task
from twisted.internet.threads import deferToThread
from twisted.python.failure import Failure

from govsi.sharing import leases
from govsi.sharing.notices import LeaseNotices

logger = logging.getLogger(__name__)

# Seconds between the steps of a hand-over under way (stop requests, write, give back).
HAND_OVER_POLL = 0.2


@dataclass
class LeaseCallbacks:
    # A lease was granted: (ip, when a request last reached it on the monotonic clock,
    # whether another worker held it before).
    granted: Callable[[str, float | None, bool], None]
    # A lease was lost (ran out and was taken, or could not be renewed in time).
    lost: Callable[[str], None]
    # The last arrival of each held address (monotonic), to record in crawldb.
    arrivals: Callable[[list[str]], dict[str, float | None]]
    # Held addresses with nothing queued, in flight or in crawldb for them, whose fetched
    # pages are all written: the ones that can be given back.
    idle: Callable[[list[str]], list[str]]
    # Hosts with FRONTIER rows in crawldb (a scan for work other workers found).
    found_hosts: Callable[[], None]
    # Held addresses that could be handed over now (no request out, pages all written).
    movable: Callable[[list[str]], list[str]]
    # This worker's figures, written to crawldb with each heartbeat.
    report: Callable[[], leases.WorkerReport] = leases.WorkerReport
    # How much each held address has to do here (a request out counts most): the least
    # loaded are handed over first, so the busiest address keeps its worker.
    load: Callable[[list[str]], dict[str, int]] = lambda ips: {}


@dataclass
class _State:
    held: dict[str, float] = field(default_factory=dict)  # ip -> expiry (monotonic)
    wanted: set[str] = field(default_factory=set)
    live_elsewhere: int = 0
    # This worker's share: addresses with work (held by anyone, or wanted here) over the
    # live workers, rounded up. It takes no more, and hands surplus to those who ask.
    share: int = 1_000_000
    wanted_elsewhere: set[str] = field(default_factory=set)


class LeaseKeeper:
    def __init__(
        self,
        engine: Engine | None,
        callbacks: LeaseCallbacks,
        ttl: float,
        scan_interval: float,
        worker: str | None = None,
    ) -> None:
        self.engine = engine  # None: SQLite, everything granted at once
        self.cb = callbacks
        self.ttl = ttl
        self.scan_interval = scan_interval
        self.worker = worker or leases.worker_id()
        self.state = _State()
        self._loop: task.LoopingCall | None = None
        self._expiry: task.LoopingCall | None = None
        self._busy = False
        self._last_scan = 0.0
        # Stop using a lease this long before it runs out unless renewed: a renewal late
        # because crawldb is slow must not let two workers serve one address.
        self.margin = ttl / 3
        # No other worker seen yet: while crawldb is away, this one goes on alone rather
        # than stop (a worker cannot start while crawldb is away, so none can join).
        self.alone = True
        self._moving: set[str] = set()
        # A round asked for while one was out: run it when that one is done.
        self._again = False
        self._soon: Any = None
        self.notices: LeaseNotices | None = None

    @property
    def shared(self) -> bool:
        return self.engine is not None

    # -- the scheduler asks -----------------------------------------------------------------
    def want(self, ip: str) -> None:
        if ip in self.state.held or ip in self.state.wanted:
            return
        if not self.shared:
            self.state.held[ip] = float("inf")
            self.cb.granted(ip, None, False)
            return
        self.state.wanted.add(ip)
        self.tick()  # now rather than at the next round

    def holds(self, ip: str) -> bool:
        return ip in self.state.held

    def waiting(self) -> bool:
        """Whether the crawl must go on for what others hold or we wait for."""
        return bool(self.state.wanted) or self.state.live_elsewhere > 0

    def start(self) -> None:
        if self.shared:
            self._loop = task.LoopingCall(self.tick)
            self._loop.start(self.ttl / 3, now=False)
            # Expiry on the local clock, often, whatever a round is doing: a round hung on a
            # partitioned crawldb must not keep an address served past its lease.
            self._expiry = task.LoopingCall(self.expire)
            self._expiry.start(min(1.0, self.margin / 4), now=False)
            if self.engine is not None and self.engine.dialect.name == "postgresql":
                self.notices = LeaseNotices(self.engine, self._notice)
                self.notices.start()

    def stop(self) -> None:
        """Give every lease back (the crawl's writes are done by now)."""
        for loop in (self._loop, self._expiry):
            if loop is not None and loop.running:
                loop.stop()
        if self._soon is not None and self._soon.active():
            self._soon.cancel()
        if self.notices is not None:
            self.notices.stop()
        if not self.shared:
            return
        held = list(self.state.held)
        try:
            with self.engine.begin() as conn:  # type: ignore[union-attr]
                offset = leases.db_now(conn) - time.time()
                leases.release(conn, self.worker, self._to_db(self.cb.arrivals(held), offset))
                leases.goodbye(conn, self.worker, self.cb.report())
        except Exception as e:
            logger.warning("giving back %d address leases failed (%s); they run out", len(held), e)
        self.state.held.clear()

    # -- one round ---------------------------------------------------------------------------
    def expire(self) -> None:
        """Drop every lease that may run out within the margin unless a renewal that
        reached crawldb says otherwise; taken up again only through a round that did."""
        now = time.monotonic()
        for ip, expiry in list(self.state.held.items()):
            if now > expiry - self.margin:
                self._lose(ip, "not renewed in time")

    def _notice(self, kind: str, ip: str) -> None:
        """Another worker asked for an address held here, or gave back one wanted here:
        a round now, not at the next period."""
        if kind == leases.WANT and ip in self.state.held:
            self.state.wanted_elsewhere.add(ip)
            self.soon()
        elif kind == leases.FREE and ip in self.state.wanted:
            self.soon()

    def soon(self, delay: float = 0.0) -> None:
        """A round in ``delay`` seconds (one pending at a time)."""
        if not self.shared or (self._soon is not None and self._soon.active()):
            return
        from twisted.internet import reactor

        self._soon = cast(Any, reactor).callLater(delay, self.tick)

    def tick(self) -> None:
        if not self.shared:
            return
        # Before anything else, and also while a round is still out.
        self.expire()
        if self._busy:
            self._again = True
            return
        now = time.monotonic()
        held = list(self.state.held)
        idle = set(self.cb.idle(held))
        # Addresses beyond this worker's share that others ask for are handed over once
        # ``movable`` says so (it stops their requests and waits for their writes first).
        moving = to_hand_over(
            held,
            idle,
            self._moving,
            self.state.share,
            self.state.wanted_elsewhere,
            self.cb.load(held) if self.state.wanted_elsewhere else {},
        )
        handed = set(self.cb.movable(moving)) if moving else set()
        self._moving = set(moving) - handed
        for ip in handed:
            logger.info("handing %s over to a worker that asks for it", ip)
            self.state.wanted.add(ip)  # its work is still there: later, maybe
        idle |= handed
        keep = [ip for ip in held if ip not in idle]
        plan = _Round(
            renew=self.cb.arrivals(keep),
            release=self.cb.arrivals(sorted(idle)),
            acquire=sorted(self.state.wanted),
            report=self.cb.report(),
        )
        for ip in idle:
            del self.state.held[ip]
            self.cb.lost(ip)  # parked: wanted again as soon as work for it turns up
        scan = now - self._last_scan >= self.scan_interval
        if scan:
            self._last_scan = now
        self._busy = True
        d = deferToThread(self._round, plan)
        d.addCallbacks(self._done, self._failed, callbackArgs=(scan,))

    def _round(self, plan: _Round) -> _Outcome:
        assert self.engine is not None
        sent = time.monotonic()
        out = _Outcome()
        with self.engine.begin() as conn:
            offset = leases.db_now(conn) - time.time()
            workers = max(1, leases.heartbeat(conn, self.worker, self.ttl, plan.report))
            out.renewed = leases.renew(conn, self.worker, self._to_db(plan.renew, offset), self.ttl)
            leases.release(conn, self.worker, self._to_db(plan.release, offset))
            busy = leases.live_leases(conn)
        # An address this worker waits for that another holds is counted once.
        out.share = share_of(len(busy | set(plan.acquire)), workers)
        # A lease taken locally while crawldb was away has no row yet: take it now.
        lost = [ip for ip in plan.renew if ip not in out.renewed]
        out.planned = set(lost) | set(plan.acquire)
        room = out.share - len(out.renewed)
        for ip in lost + plan.acquire:
            if room <= 0 and ip not in lost:
                continue  # its share is full: leave the address to a worker with room
            out.tried.add(ip)
            with self.engine.begin() as conn:
                grant = leases.acquire(conn, ip, self.worker, self.ttl)
            if grant is not None:
                out.granted[ip] = grant
                room -= 1
        with self.engine.connect() as conn:
            out.live_elsewhere = leases.live_elsewhere(conn, self.worker)
            out.wanted_elsewhere = leases.wanted_by_others(conn, self.worker, self.ttl)
        out.offset, out.sent = offset, sent
        return out

    def _done(self, out: _Outcome, scan: bool) -> None:
        self._busy = False
        if self._again or self._moving:
            # Asked for meanwhile, or a hand-over under way: its next step as soon as its
            # requests and writes allow, not a whole period later.
            self._again = False
            self.soon(0.0 if not self._moving else HAND_OVER_POLL)
        # Expiry counted from when the round began: the database may have set it later,
        # never earlier.
        for ip in list(self.state.held):
            if ip in out.renewed:
                self.state.held[ip] = out.sent + self.ttl
        for ip in [ip for ip in self.state.held if ip not in out.renewed and ip not in out.granted]:
            self.alone = False
            self._lose(ip, "taken by another worker")
        if out.tried - set(out.granted) or out.live_elsewhere:
            self.alone = False
        for ip, grant in out.granted.items():
            self.state.wanted.discard(ip)
            if ip in self.state.held:  # held locally through an outage; on record now
                self.state.held[ip] = out.sent + self.ttl
                continue
            self.state.held[ip] = out.sent + self.ttl
            arrival = None
            if grant.last_arrival is not None:
                # Database clock -> this process's monotonic clock.
                arrival = time.monotonic() - (time.time() + out.offset - grant.last_arrival)
            self.cb.granted(ip, arrival, grant.handed_over)
        self.state.live_elsewhere = out.live_elsewhere
        newly_asked = out.wanted_elsewhere - self.state.wanted_elsewhere
        share_fell = out.share < self.state.share
        self.state.share = out.share
        self.state.wanted_elsewhere = out.wanted_elsewhere
        if (newly_asked or share_fell) and self._above_share():
            # A worker joined or asked: start handing over now, not a period later. Only on
            # a change, so a worker that keeps its surplus (all busy) does not spin.
            self.soon()
        if scan:
            self.cb.found_hosts()
        if self.state.wanted - out.planned:
            # Addresses that came up during the round: ask now, not a whole period later.
            from twisted.internet import reactor

            cast(Any, reactor).callLater(0, self.tick)

    def _above_share(self) -> bool:
        held = set(self.state.held)
        return len(held) > self.state.share and bool(held & self.state.wanted_elsewhere)

    def _failed(self, failure: Failure) -> None:
        self._busy = False
        self._again = False
        first = (failure.getErrorMessage().strip().splitlines() or ["no message"])[0][:300]
        logger.warning("address leases: crawldb did not answer (%s)", first)
        if not self.alone:
            return  # others may serve these addresses: wait for crawldb
        until = time.monotonic() + self.ttl
        for ip in self.state.held:
            self.state.held[ip] = until
        for ip in sorted(self.state.wanted):
            logger.warning("crawldb is away and no other worker was seen: serving %s alone", ip)
            self.state.wanted.discard(ip)
            self.state.held[ip] = until
            self.cb.granted(ip, None, False)

    def _lose(self, ip: str, why: str) -> None:
        self.state.held.pop(ip, None)
        logger.info("lease on %s lost (%s); its hosts wait", ip, why)
        self.cb.lost(ip)
        self.state.wanted.add(ip)

    @staticmethod
    def _to_db(arrivals: dict[str, float | None], offset: float = 0.0) -> dict[str, float | None]:
        """Monotonic arrivals -> the database clock (``offset``: database minus wall)."""
        wall = time.time() - time.monotonic() + offset
        return {ip: None if a is None else a + wall for ip, a in arrivals.items()}


def share_of(with_work: int, workers: int) -> int:
    """How many addresses one worker should serve: those with work (leased by anyone, or
    waited for) over the live workers, rounded up so that together they cover all."""
    return max(1, -(-with_work // max(1, workers)))


def to_hand_over(
    held: list[str],
    idle: set[str],
    moving: set[str],
    share: int,
    wanted_elsewhere: set[str],
    load: dict[str, int] | None = None,
) -> list[str]:
    """The held addresses to hand over: those already on their way, plus as many that
    other workers ask for as this worker holds beyond its share (idle ones go back anyway,
    so they do not count), the least loaded first: moving an address costs it a pause, so
    the busiest one stays where it is while a quieter one would do."""
    going = [ip for ip in held if ip in moving and ip not in idle]
    surplus = len(held) - len(idle) - share - len(going)
    if surplus > 0:
        asked = [ip for ip in held if ip in wanted_elsewhere and ip not in idle and ip not in going]
        if load:
            asked.sort(key=lambda ip: load.get(ip, 0))  # stable: held order among equals
        going += asked[:surplus]
    return going


@dataclass
class _Round:
    renew: dict[str, float | None]
    release: dict[str, float | None]
    acquire: list[str]
    report: leases.WorkerReport


@dataclass
class _Outcome:
    renewed: dict[str, float] = field(default_factory=dict)
    granted: dict[str, leases.Grant] = field(default_factory=dict)
    live_elsewhere: int = 0
    offset: float = 0.0
    sent: float = 0.0
    tried: set[str] = field(default_factory=set)
    planned: set[str] = field(default_factory=set)
    share: int = 1
    wanted_elsewhere: set[str] = field(default_factory=set)
