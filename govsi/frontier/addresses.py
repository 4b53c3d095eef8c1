"""The scheduler's part in sharing a crawl between workers: it serves an address's hosts
only while it holds the address's lease (``govsi.sharing.keeper``).

It lives in the frontier, beside the scheduler it serves: ``govsi.sharing`` keeps the
leases (SQL, notices, the keeper's rounds) and knows nothing of the frontier.

``AddressSharing`` knows which hosts are on which address, asks for a lease when a host
resolves or gets work, puts a granted address's hosts into the frontier's rotation (after
dropping what another worker already fetched there), parks them when the lease is lost,
and answers the keeper's two questions: which held addresses are idle, and which can be
handed over to a worker that asks for them.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Mapping
from typing import Protocol

from scrapy.statscollectors import StatsCollector
from twisted.internet.threads import deferToThread
from twisted.python.failure import Failure

from govsi.frontier.entries import Entry, HostInfo, page_url
from govsi.frontier.queue import Frontier
from govsi.sharing.keeper import LeaseCallbacks, LeaseKeeper
from govsi.sharing.leases import WorkerReport
from govsi.store.extension import CrawlStore, pages_fetched
from govsi.store.reader import StoredRobots
from govsi.web.urls import fingerprint

logger = logging.getLogger(__name__)

# The load of an address with a request out or rows in crawldb: above any queue's length.
BUSIEST = 10**9


def _revisit(entry: object) -> bool:
    return isinstance(entry, Entry) and entry.revisit is not None


class Served(Protocol):
    """What ``AddressSharing`` needs of the scheduler whose hosts it serves
    (``FrontierScheduler`` implements it; a test, a small fake)."""

    @property
    def hosts(self) -> Mapping[str, HostInfo]:
        """The scheduler's hosts, read only: their address and whether they have work."""
        ...

    def mark_released(self, fingerprints: Iterable[int]) -> None:
        """Pages another worker fetched: never released here."""

    def wake(self) -> None:
        """Work became available: let the engine ask for it."""

    def scan_frontier(self) -> None:
        """Look for hosts with work in crawldb (a worker left, or addresses were freed)."""

    def robots_read(self, stored: dict[str, StoredRobots]) -> None:
        """robots.txt another worker fetched for hosts taken over, read from crawldb."""


def robots_key(host: str) -> str:
    """What a robots.txt request of ``host`` is tracked by until its outcome is in the store
    (``page_out`` / ``settled``): a worker taking the address over reads it from crawldb
    instead of fetching it again."""
    return f"robots.txt {host}"


class AddressSharing:
    def __init__(
        self,
        *,
        frontier: Frontier,
        store: CrawlStore,
        served: Served,
        stats: StatsCollector,
        ttl: float,
        scan_interval: float,
        shared: bool,
        settle_within: float = 600.0,
        robots_max_age: float = 24 * 3600.0,
    ) -> None:
        self.frontier = frontier
        self.store = store
        self.served = served
        self.hosts = served.hosts
        self.stats = stats
        self.robots_max_age = robots_max_age
        self.job: str | None = None
        self._started = False
        # Hosts by address: a lease is on an address, the frontier schedules hosts.
        self.on_ip: dict[str, set[str]] = {}
        # Addresses being handed over: None while a request of theirs is unsettled, then
        # the store's item count once none is (written by then, the address may go).
        self._handing: dict[str, int | None] = {}
        # Pages and images released whose outcome is not in the store yet: a response can
        # still be in the spider after it left the downloader (or wait for its rendered
        # version), and an address given away then would let the next holder fetch it
        # again. url -> (ip, released at); forgotten after ``settle_within`` seconds.
        self._unsettled: dict[str, tuple[str, float]] = {}
        self.settle_within = settle_within
        self._released_count = 0
        # Addresses another worker has served: hosts taken up on them first learn from
        # crawldb what was fetched there.
        self._served_elsewhere: set[str] = set()
        self.leases = LeaseKeeper(
            store.engine if shared else None,
            LeaseCallbacks(
                granted=self._granted,
                lost=self._lost,
                arrivals=lambda ips: {ip: frontier.last_arrival(ip) for ip in ips},
                idle=self._idle,
                found_hosts=served.scan_frontier,
                movable=self._movable,
                report=self._report,
                load=self._load,
            ),
            ttl=ttl,
            scan_interval=scan_interval,
        )

    @property
    def worker(self) -> str:
        """This process's name among the crawl's workers (leases, revisit claims)."""
        return self.leases.worker

    # -- the scheduler tells ----------------------------------------------------------------
    def start(self, job: str | None = None) -> None:
        """The crawl opens (``job``: scrapyd's job id, reported with each heartbeat)."""
        self.job = job
        self._started = True
        self.leases.start()

    def stop(self) -> None:
        """The crawl's writes are in: give every lease back (nothing to do unless started)."""
        if self._started:
            self.leases.stop()

    def resolved(self, host: str, ip: str) -> None:
        self.on_ip.setdefault(ip, set()).add(host)
        if self.leases.holds(ip):
            self._take(ip, [host], None)
        else:
            self.leases.want(ip)  # served once granted

    def work_for(self, ip: str | None) -> None:
        """A host on ``ip`` has work again (an address given back idle is asked for anew)."""
        if ip is not None and not self.leases.holds(ip):
            self.leases.want(ip)

    def waiting(self) -> bool:
        return self.leases.waiting()

    def page_out(self, url: str, ip: str | None) -> None:
        """A page or image request for ``url`` (or a robots.txt request, ``robots_key``)
        left the queue."""
        if ip is None:
            return
        self._unsettled[url] = (ip, time.monotonic())
        self._released_count += 1
        if self._released_count % 1000 == 0:
            # Without other workers nobody asks about idle addresses: forget stale
            # entries here so that a request that never had an outcome is not kept forever.
            self._unsettled_ips()

    def settled(self, url: str) -> None:
        """Its outcome is in the store, or it is queued again (a retry, a rendering)."""
        self._unsettled.pop(url, None)

    def _unsettled_ips(self) -> set[str]:
        """Addresses with a released page or image whose outcome is not in the store yet;
        entries older than ``settle_within`` are forgotten, with a warning."""
        now, ips = time.monotonic(), set()
        for url, (ip, at) in list(self._unsettled.items()):
            if now - at > self.settle_within:
                logger.warning("%s: no outcome %.0f s after its request left", url, now - at)
                del self._unsettled[url]
            else:
                ips.add(ip)
        return ips

    def held(self) -> tuple[int, int]:
        """Addresses this worker holds a lease on, and the hosts on them."""
        ips = [ip for ip in self.on_ip if self.leases.holds(ip)]
        return len(ips), sum(len(self.on_ip[ip]) for ip in ips)

    def _report(self) -> WorkerReport:
        stats = self.stats.get_stats()
        addresses, hosts = self.held()
        self.stats.set_value("govsi/leases/addresses_held", addresses)
        self.stats.max_value("govsi/leases/addresses_held_max", addresses)
        self.stats.set_value("govsi/leases/hosts_held", hosts)
        return WorkerReport(
            job=self.job,
            pages=pages_fetched(stats),
            fetch_errors=int(stats.get("govsi/pages/error", 0)),
            log_errors=int(stats.get("log_count/ERROR", 0)),
            addresses=addresses,
            hosts=hosts,
        )

    # -- the lease keeper tells -------------------------------------------------------------
    def _granted(self, ip: str, last_arrival: float | None, handed_over: bool) -> None:
        self.stats.inc_value("govsi/leases/granted")
        self._handing.pop(ip, None)
        hosts = list(self.on_ip.get(ip, ()))
        if handed_over:
            self._served_elsewhere.add(ip)
            self._take(ip, hosts, last_arrival)
        else:
            # Back from this worker itself: nothing was fetched there meanwhile.
            self._serve(ip, hosts, last_arrival)

    def _take(self, ip: str, hosts: list[str], last_arrival: float | None) -> None:
        if ip not in self._served_elsewhere:
            # Only this worker ever served the address: its own records are complete.
            self._serve(ip, hosts, last_arrival)
            return
        # Another worker may have served these hosts: what it fetched there is neither
        # released from what is queued here nor admitted later (the lease is ours now,
        # so crawldb's record of these hosts is complete).
        d = deferToThread(self._read_served, hosts)
        d.addErrback(self._read_failed)
        d.addCallback(self._pruned, ip, hosts, last_arrival)

    @staticmethod
    def _read_failed(failure: Failure) -> tuple[set[str], dict[str, StoredRobots]]:
        logger.warning("reading what was fetched failed: %s", failure.value)
        return set(), {}

    def _read_served(self, hosts: list[str]) -> tuple[set[str], dict[str, StoredRobots]]:
        return (
            self.store.fetched_on_hosts(hosts),
            self.store.robots_of_hosts(hosts, self.robots_max_age),
        )

    def _pruned(
        self,
        served: tuple[set[str], dict[str, StoredRobots]],
        ip: str,
        hosts: list[str],
        last_arrival: float | None,
    ) -> None:
        if not self.leases.holds(ip):
            return  # lost again meanwhile; the next grant checks again
        done, robots = served
        if robots:
            self.served.robots_read(robots)
        for host in hosts:
            # A revisit's URL is stored by definition: its claim says it is ours to send.
            n = self.frontier.discard(host, lambda e: page_url(e) in done and not _revisit(e))
            self.stats.inc_value("govsi/leases/fetched_elsewhere", n)
        self.served.mark_released(fingerprint(url) for url in done)
        self._serve(ip, hosts, last_arrival)

    def _serve(self, ip: str, hosts: list[str], last_arrival: float | None) -> None:
        for host in hosts:
            self.frontier.set_ip(host, ip)
            if last_arrival is not None:
                self.frontier.set_last_arrival(host, last_arrival)
        self.served.wake()

    def _lost(self, ip: str) -> None:
        for host in self.on_ip.get(ip, ()):
            self.frontier.park(host)

    def _has_work(self, host: str) -> bool:
        # Parked hosts are out of the frontier's address groups: ask each host.
        queued = any(True for _ in self.frontier.entries(host))
        return queued or self.hosts[host].has_work()

    def _idle(self, ips: list[str]) -> list[str]:
        if self.store.items_written < self.store.items_added:
            return []  # pages fetched here are not all in crawldb yet
        unsettled = self._unsettled_ips()
        return [
            ip
            for ip in ips
            if ip not in self._handing
            and self.frontier.idle(ip)
            and ip not in unsettled
            and not any(self._has_work(h) for h in self.on_ip.get(ip, ()))
        ]

    def _load(self, ips: list[str]) -> dict[str, int]:
        """Queued requests per address; one with a request out now or crawldb rows still
        to read counts as the busiest."""
        busy = {self.hosts[h].ip for h in self.frontier.busy_hosts()}
        load = {}
        for ip in ips:
            hosts = self.on_ip.get(ip, ())
            queued = sum(self.frontier.queued(h) for h in hosts)
            more = ip in busy or any(self.hosts[h].has_work() for h in hosts)
            load[ip] = queued + (BUSIEST if more else 0)
        return load

    def _retrying(self, ip: str) -> bool:
        # A retry queued here would be fetched again by the next holder.
        return any(
            not isinstance(e, Entry) and page_url(e) is not None
            for h in self.on_ip.get(ip, ())
            for e in self.frontier.entries(h)
        )

    def _movable(self, ips: list[str]) -> list[str]:
        """Hand-over in steps: stop sending requests for the address; once none is out or
        unsettled, write what was fetched; once that is in crawldb, it may go."""
        # A request out, or a response whose outcome is not stored yet.
        busy = {self.hosts[h].ip for h in self.frontier.busy_hosts()} | self._unsettled_ips()
        ready = []
        for ip in ips:
            if ip not in self._handing:
                if self._retrying(ip):
                    continue
                self._handing[ip] = None
                self._lost(ip)
            elif self._retrying(ip):
                # A retry came in after its requests stopped: serve it again, hand over later.
                del self._handing[ip]
                self._serve(ip, list(self.on_ip.get(ip, ())), None)
                continue
            mark = self._handing[ip]
            if ip in busy:
                self._handing[ip] = None
            elif mark is None:
                self._handing[ip] = self.store.items_added
                self.store.flush()
            elif self.store.items_written >= mark:
                del self._handing[ip]
                ready.append(ip)
        return ready
