"""The Scrapy scheduler around ``govsi.frontier``: crawldb's FRONTIER rows are the queue,
memory holds a bounded window of it, and a request leaves only when its host and its
IP address may be asked again.

What it adds to the frontier's decisions is the crawl's I/O: resolving each host's
address, sending its robots.txt first (``govsi.robotstxt``), refilling a host's window
from crawldb, recording pages it will not fetch, hearing when a request reached the
server (``headers_received``) and left the downloader, and waking Scrapy's engine when the
next host becomes ready (the engine otherwise asks only when a download ends, or every
5 seconds).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any, NamedTuple

from scrapy import Request, Spider, signals
from scrapy.core.scheduler import BaseScheduler
from scrapy.crawler import Crawler
from scrapy.dupefilters import BaseDupeFilter
from scrapy.http import Headers
from scrapy.utils.misc import build_from_crawler, load_object
from twisted.internet import task
from twisted.internet.interfaces import IDelayedCall
from twisted.internet.threads import deferToThread
from twisted.python.failure import Failure

from govsi.db import is_sqlite
from govsi.extensions import CrawlStore
from govsi.frontier import Frontier, HostState
from govsi.items import FetchedPage, SiteInfo
from govsi.leasekeeper import LeaseCallbacks, LeaseKeeper
from govsi.robots import RobotsRules
from govsi.robotstxt import KIND_ROBOTS, RobotsFetcher, RobotsOutcome, robots_url_for
from govsi.urls import fingerprint, host_of

logger = logging.getLogger(__name__)

KIND_PAGE, KIND_IMAGE = "page", "image"
# Robots.txt before sitemaps before any page of a host.
DEPTH_ROBOTS, DEPTH_SITEMAP = -2, -1
# A refill that could not tell whether more rows are on their way waits this long.
REFILL_RETRY = 0.5


def _reactor() -> Any:
    # Imported when used: importing the reactor at module level installs the default one
    # before Scrapy installs the one its settings ask for.
    from twisted.internet import reactor

    return reactor


def _page_url(entry: Any) -> str | None:
    """The page or image URL of a queued entry or request (None for robots.txt, sitemaps)."""
    if isinstance(entry, Entry):
        return entry.url
    if entry.meta.get("govsi_kind") in (KIND_PAGE, KIND_IMAGE):
        return entry.meta.get("govsi_url")
    return None


class Entry(NamedTuple):
    """A page or image waiting in memory: far lighter than the Request built on release."""

    kind: str
    url: str
    depth: int


@dataclass
class HostInfo:
    """The scheduler's side of a host: robots.txt, and its queue's part in crawldb."""

    robots_url: str
    rules: RobotsRules | None = None
    rules_at: float = 0.0
    # Pages released on the current rules: an expired robots.txt is fetched again only
    # after at least one, so a host slower than ROBOTSTXT_MAX_AGE still makes progress.
    used_rules: int = 0
    robots_failures: int = 0
    robots_retry: IDelayedCall | None = None
    # Set when the host will not be crawled in this run; its pages stay FRONTIER with it.
    unavailable: str | None = None
    ip: str | None = None
    # FRONTIER rows in crawldb that are not in memory; read them from ``cursor`` on.
    backlog: bool = False
    cursor: tuple[int, int] = (-1, 0)
    refilling: bool = False
    refill_after: float = 0.0
    # A refused entry's row is in crawldb once the store has written this many items.
    backlog_written_at: int = 0
    # FRONTIER rows crawldb had for it when a refill last found nothing new to fetch:
    # another worker's rows change the count (see _found_hosts).
    dry_count: int = -1


class FrontierScheduler(BaseScheduler):
    def __init__(self, crawler: Crawler, dupefilter: BaseDupeFilter) -> None:
        s = crawler.settings
        self.crawler = crawler
        self.stats = crawler.stats
        self.df = dupefilter
        delay = s.getfloat("DEFAULT_CRAWL_DELAY")
        self.frontier = Frontier(delay, ip_delay=delay, window=s.getint("FRONTIER_WINDOW"))
        self.obey = s.getbool("ROBOTSTXT_OBEY")
        self.token = s.get("ROBOTSTXT_USER_AGENT")
        self.robots_max_age = s.getfloat("ROBOTSTXT_MAX_AGE")
        self.robots_retries = s.getint("ROBOTSTXT_RETRY_TIMES")
        self.robots_retry_delay = s.getfloat("ROBOTSTXT_RETRY_DELAY")
        self.depth_limit = s.getint("DEPTH_LIMIT")
        self.follow_sitemaps = s.getbool("SITEMAP_FOLLOW")
        self.refill_size = s.getint("FRONTIER_REFILL_SIZE")
        self.progress_interval = s.getfloat("PROGRESS_INTERVAL")
        self.robots = RobotsFetcher(self._robots_outcome)
        self.hosts: dict[str, HostInfo] = {}
        # Every page or image released in this run, so that none is released twice while
        # its row in crawldb still says FRONTIER (writes lag behind).
        self.released: set[int] = set()
        # Hosts with FRONTIER rows in crawldb that memory does not hold (HostInfo.backlog).
        self._backlogged: set[str] = set()
        self._wake_call: IDelayedCall | None = None
        self._wake_at = 0.0
        self._progress: task.LoopingCall | None = None
        self._watchdog: task.LoopingCall | None = None
        # No single attempt can take longer (DNS and connection included in the timeout).
        self.stuck_after = s.getfloat("DOWNLOAD_TIMEOUT") + 60.0
        self._progress_last = (time.monotonic(), 0)
        self.lease_ttl = s.getfloat("LEASE_TTL")
        self.lease_scan = s.getfloat("LEASE_SCAN_INTERVAL")
        # Hosts by address: a lease is on an address, the frontier schedules hosts.
        self._on_ip: dict[str, set[str]] = {}
        # Addresses being handed over: the store's item count when their requests stopped.
        self._handing: dict[str, int] = {}
        # Addresses another worker has served: hosts taken up on them first learn from
        # crawldb what was fetched there.
        self._served_elsewhere: set[str] = set()
        crawler.signals.connect(self._headers_received, signal=signals.headers_received)
        crawler.signals.connect(self._left_downloader, signal=signals.request_left_downloader)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> FrontierScheduler:
        dupefilter = build_from_crawler(load_object(crawler.settings["DUPEFILTER_CLASS"]), crawler)
        return cls(crawler, dupefilter)

    # -- life cycle -------------------------------------------------------------------------
    def open(self, spider: Spider) -> None:
        self.spider = spider
        store = self.crawler.get_extension(CrawlStore)
        if store is None:
            raise RuntimeError("the frontier needs the govsi.extensions.CrawlStore extension")
        self.store = store
        self.leases = LeaseKeeper(
            None if is_sqlite(store.url) else store.engine,
            LeaseCallbacks(
                granted=self._lease_granted,
                lost=self._lease_lost,
                arrivals=lambda ips: {ip: self.frontier.last_arrival(ip) for ip in ips},
                idle=self._idle_addresses,
                found_hosts=self._scan_frontier,
                movable=self._movable_addresses,
            ),
            ttl=self.lease_ttl,
            scan_interval=self.lease_scan,
        )
        self.leases.start()
        # Leases go back once this run's last writes are in (after spider_closed).
        self.crawler.signals.connect(self.leases.stop, signal=signals.engine_stopped)
        self.df.open()
        # A continuing crawl: every host with FRONTIER rows has work in crawldb.
        for host, sample_url in store.frontier_hosts(self.depth_limit):
            self._host(host, sample_url)
            self._set_backlog(host, True)
        if self.progress_interval > 0:
            self._progress = task.LoopingCall(self._log_progress)
            self._progress.start(self.progress_interval, now=False)
        self._watchdog = task.LoopingCall(self._free_stuck)
        self._watchdog.start(10.0, now=False)
        # The browser's own requests (RENDER_JS) ask the same robots.txt and delays.
        gate = self.crawler.settings.get("PLAYWRIGHT_ABORT_REQUEST")
        if callable(getattr(gate, "bind", None)):
            gate.bind(self.browser_policy)

    def browser_policy(self, url: str) -> float | None:
        """For a request a rendered page's script makes: None if it must not be made (a
        host whose robots.txt is not known, or forbids it), else the host's delay."""
        host = host_of(url)
        info = self.hosts.get(host)
        if info is None or info.unavailable is not None:
            return None
        if self.obey and (info.rules is None or not info.rules.allowed(url, self.token)):
            return None
        return self.frontier.delay_of(host)

    def close(self, reason: str) -> None:
        for call in [self._wake_call] + [h.robots_retry for h in self.hosts.values()]:
            if call is not None and call.active():
                call.cancel()
        for loop in (self._progress, self._watchdog):
            if loop is not None and loop.running:
                loop.stop()
        self.df.close(reason)

    def has_pending_requests(self) -> bool:
        if len(self.frontier) or self.leases.waiting():
            return True
        return any(
            (h.backlog and not h.unavailable) or h.refilling or h.robots_retry is not None
            for h in self.hosts.values()
        )

    def __len__(self) -> int:
        return len(self.frontier)

    # -- in ---------------------------------------------------------------------------------
    def enqueue_request(self, request: Request) -> bool:
        if not request.dont_filter and self.df.request_seen(request):
            self.df.log(request, self.spider)
            return False
        meta = request.meta
        kind = meta.get("govsi_kind")
        host = meta.get("govsi_host") or host_of(request.url)
        self._host(host, request.url)
        if kind in (KIND_PAGE, KIND_IMAGE) and not request.dont_filter:
            entry = Entry(kind, meta.get("govsi_url", request.url), meta.get("depth", 0))
            if not self.frontier.push(host, entry.depth, entry, spillable=kind == KIND_PAGE):
                self._spilled(host, entry.depth)
        elif kind == KIND_ROBOTS:
            self.frontier.push(host, DEPTH_ROBOTS, request, spillable=False)
        else:
            # Sitemaps, and deliberate repeats (dont_filter: Scrapy's retries), are kept
            # whole: their meta (a retry count) must survive, and they may repeat a URL.
            depth = DEPTH_SITEMAP if kind == "sitemap" else meta.get("depth", 0)
            self.frontier.push(host, depth, request, spillable=False)
        info = self.hosts[host]
        if info.ip is not None and not self.leases.holds(info.ip):
            self.leases.want(info.ip)  # given back while idle; work for it again
        self.stats.inc_value("scheduler/enqueued")
        return True

    def _host(self, host: str, sample_url: str) -> HostInfo:
        info = self.hosts.get(host)
        if info is not None:
            return info
        info = self.hosts[host] = HostInfo(robots_url=robots_url_for(sample_url))
        self._resolve(host)
        if self.obey:
            self._send_robots(host)
        else:
            self.frontier.open_gate(host)
        return info

    def _spilled(self, host: str, depth: int) -> None:
        # The entry's FRONTIER row is (or will be) in crawldb: read it back later.
        info = self.hosts[host]
        self._set_backlog(host, True)
        info.backlog_written_at = self.store.items_added
        if depth < info.cursor[0]:
            info.cursor = (-1, 0)
        self.stats.inc_value("govsi/frontier/spilled")

    # -- out --------------------------------------------------------------------------------
    def next_request(self) -> Request | None:
        now = time.monotonic()
        popped = self.frontier.pop(now, self._admit)
        if popped is None:
            self._start_refills(now)
            self._schedule_wake()
            return None
        state, entry = popped
        if isinstance(entry, Entry):
            request = self.spider.request_for(entry.kind, entry.url, entry.depth)
            self.released.add(fingerprint(entry.url))
        else:
            request = entry
        request.meta["govsi_host"] = state.name
        # A retry is a copy of a request that went out before, marks and all.
        request.meta.pop("govsi_arrived", None)
        request.meta.pop("govsi_finished", None)
        self.stats.inc_value("scheduler/dequeued")
        info = self.hosts[state.name]
        if info.backlog and not info.unavailable and len(state.queue) < self.refill_size // 4:
            self._refill(state.name, now)
        return request

    def _admit(self, state: HostState, entry: Any) -> bool:
        """The last check before a request leaves; a refusal costs the host no delay."""
        info = self.hosts[state.name]
        if not isinstance(entry, Entry):
            # robots.txt, sitemaps: not sent for a host given up on.
            return info.unavailable is None or entry.meta.get("govsi_kind") != KIND_ROBOTS
        if fingerprint(entry.url) in self.released:
            return False
        if info.unavailable is not None:
            self._not_fetched(entry, info.unavailable, "govsi/frontier/host_unavailable")
            return False
        if self.obey and info.rules is not None:
            if info.used_rules and time.monotonic() - info.rules_at > self.robots_max_age:
                # Rules older than ROBOTSTXT_MAX_AGE: fetch them again before going on.
                self.frontier.close_gate(state.name)
                self.frontier.push(state.name, entry.depth, entry, spillable=False)
                self._send_robots(state.name)
                return False
            if not info.rules.allowed(entry.url, self.token):
                self._not_fetched(entry, "forbidden by robots.txt", "govsi/robots/forbidden")
                return False
        info.used_rules += 1
        return True

    def _not_fetched(self, entry: Entry, reason: str, stat: str) -> None:
        self.stats.inc_value(stat)
        self.released.add(fingerprint(entry.url))  # its row stays FRONTIER: not again
        if entry.kind == KIND_PAGE:
            self.store.add(
                FetchedPage(entry.url, entry.depth, "FRONTIER", None, fetch_error=reason)
            )

    # -- requests reaching the server -------------------------------------------------------
    def _headers_received(
        self, headers: Headers, body_length: int, request: Request, spider: Spider
    ) -> None:
        # The server has answered, so the request reached it by now. scrapy-playwright sends
        # no such signal, so a rendered page counts from when it leaves the downloader: after
        # its scripts' own requests, as it must.
        request.meta.setdefault("govsi_arrived", time.monotonic())

    def _left_downloader(self, request: Request, spider: Spider) -> None:
        host = request.meta.get("govsi_host")
        if host is None or request.meta.get("govsi_finished"):
            return
        request.meta["govsi_finished"] = True
        self.frontier.finished(host, request.meta.get("govsi_arrived", time.monotonic()))
        self._schedule_wake()

    def _free_stuck(self) -> None:
        # A request whose end we never heard of would hold its address for ever.
        now = time.monotonic()
        for host in self.frontier.busy_longer_than(self.stuck_after, now):
            logger.error(
                "%s: no word of its request for %.0f s; freeing it", host, self.stuck_after
            )
            self.stats.inc_value("govsi/frontier/stuck")
            self.frontier.finished(host, now)
        self._schedule_wake()

    # -- waking the engine ------------------------------------------------------------------
    def _schedule_wake(self) -> None:
        when = self.frontier.next_ready_time()
        if when is None:
            return
        if self._wake_call is not None and self._wake_call.active():
            if self._wake_at <= when:
                return
            self._wake_call.cancel()
        self._wake_at = when
        self._wake_call = _reactor().callLater(max(0.0, when - time.monotonic()), self._wake)

    def _wake(self) -> None:
        # Scrapy offers no public way for a scheduler to say "I have work now"; this is
        # what the engine's own crawl() and heartbeat call. Without it a host ready in
        # 0.3 s would wait for the next download to end or the 5 s heartbeat.
        slot = getattr(self.crawler.engine, "_slot", None)
        if slot is not None:
            slot.nextcall.schedule()

    # -- hosts: address and robots.txt ------------------------------------------------------
    def _resolve(self, host: str) -> None:
        def resolved(ip: str) -> None:
            self.hosts[host].ip = ip
            self._on_ip.setdefault(ip, set()).add(host)
            if self.leases.holds(ip):
                self._take(ip, [host], None)
            else:
                self.leases.want(ip)  # scheduled once granted (_lease_granted)

        def failed(failure: Failure) -> None:
            message = failure.getErrorMessage()
            reason = (message if "DNS" in message else f"DNS lookup failed: {message}")[:300]
            logger.warning("%s: %s; its pages stay in the frontier", host, reason)
            self._give_up(host, reason)
            # Its own group, so that its entries are released (and recorded) at once.
            self.frontier.set_ip(host, f"unresolved:{host}")
            self._wake()

        _reactor().resolve(host).addCallbacks(resolved, failed)

    def _send_robots(self, host: str) -> None:
        info = self.hosts[host]
        info.robots_retry = None
        self.frontier.push(host, DEPTH_ROBOTS, self.robots.request(host, info.robots_url), False)
        self._wake()

    def _robots_outcome(self, outcome: RobotsOutcome) -> None:
        host, info = outcome.host, self.hosts[outcome.host]
        if outcome.error is None:
            info.rules, info.rules_at, info.robots_failures = outcome.rules, time.monotonic(), 0
            info.used_rules = 0
            self.frontier.set_delay(host, outcome.rules.crawl_delay(self.token) or 0.0)
            self.store.add(SiteInfo(host, info.ip, self.frontier.host(host).delay))
            self.frontier.open_gate(host)
            if self.follow_sitemaps:
                for url in outcome.rules.sitemaps:
                    request = self.spider.sitemap_request(url, host)
                    if request is not None:
                        self.enqueue_request(request)
        else:
            info.robots_failures += 1
            self.stats.inc_value("govsi/robots/unavailable")
            if info.robots_failures <= self.robots_retries:
                # RFC 9309 §2.3.1.4: crawl nothing of the host meanwhile, and try again.
                self.frontier.close_gate(host)
                wait = self.robots_retry_delay * 2 ** (info.robots_failures - 1)
                logger.info("robots.txt of %s: %s; retrying in %.0f s", host, outcome.error, wait)
                info.robots_retry = _reactor().callLater(wait, self._send_robots, host)
            else:
                self._give_up(host, f"robots.txt unavailable ({outcome.error})")
        self._wake()

    def _give_up(self, host: str, reason: str) -> None:
        """Nothing of the host is fetched in this run; its queued pages say why."""
        info = self.hosts[host]
        info.unavailable = reason
        self.frontier.open_gate(host)  # entries flow out to _admit, which records them

    # -- sharing the crawl: address leases (govsi.leasekeeper) -----------------------------
    def _lease_granted(self, ip: str, last_arrival: float | None, handed_over: bool) -> None:
        self.stats.inc_value("govsi/leases/granted")
        self._handing.pop(ip, None)
        hosts = list(self._on_ip.get(ip, ()))
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
        d = deferToThread(self.store.fetched_on_hosts, hosts)
        d.addErrback(lambda f: logger.warning("reading fetched URLs failed: %s", f.value) or set())
        d.addCallback(self._pruned, ip, hosts, last_arrival)

    def _pruned(
        self, done: set[str], ip: str, hosts: list[str], last_arrival: float | None
    ) -> None:
        if not self.leases.holds(ip):
            return  # lost again meanwhile; the next grant checks again
        for host in hosts:
            n = self.frontier.discard(host, lambda e: _page_url(e) in done)
            self.stats.inc_value("govsi/leases/fetched_elsewhere", n)
        self.released.update(fingerprint(url) for url in done)
        self._serve(ip, hosts, last_arrival)

    def _serve(self, ip: str, hosts: list[str], last_arrival: float | None) -> None:
        for host in hosts:
            self.frontier.set_ip(host, ip)
            if last_arrival is not None:
                self.frontier.set_last_arrival(host, last_arrival)
        self._wake()

    def _lease_lost(self, ip: str) -> None:
        for host in self._on_ip.get(ip, ()):
            self.frontier.park(host)

    def _idle_addresses(self, ips: list[str]) -> list[str]:
        if self.store.items_written < self.store.items_added:
            return []  # pages fetched here are not all in crawldb yet

        def has_work(host: str) -> bool:
            info = self.hosts[host]
            # Parked hosts are out of the frontier's address groups: ask each host.
            queued = any(True for _ in self.frontier.entries(host))
            return queued or info.backlog or info.refilling or info.robots_retry is not None

        return [
            ip
            for ip in ips
            if ip not in self._handing
            and self.frontier.idle(ip)
            and not any(has_work(h) for h in self._on_ip.get(ip, ()))
        ]

    def _movable_addresses(self, ips: list[str]) -> list[str]:
        """Hand-over in two steps: first stop sending requests for the address and write
        what was fetched; once that is in crawldb and no request is out, it may go."""
        busy = {self.hosts[h].ip for h in self.frontier.busy_hosts()}

        def retrying(ip: str) -> bool:
            # A retry queued here would be fetched again by the next holder.
            return any(
                not isinstance(e, Entry) and _page_url(e) is not None
                for h in self._on_ip.get(ip, ())
                for e in self.frontier.entries(h)
            )

        ready = []
        for ip in ips:
            mark = self._handing.get(ip)
            if mark is None:
                if not retrying(ip):
                    self._handing[ip] = self.store.items_added
                    self._lease_lost(ip)
                    self.store.flush()
            elif retrying(ip):
                # A retry came in after its requests stopped: serve it again, hand over later.
                del self._handing[ip]
                self._serve(ip, list(self._on_ip.get(ip, ())), None)
            elif self.store.items_written >= mark and ip not in busy:
                del self._handing[ip]
                ready.append(ip)
        return ready

    def _scan_frontier(self) -> None:
        d = deferToThread(self.store.frontier_hosts, self.depth_limit, True)
        d.addCallbacks(self._scanned, lambda f: logger.warning(
            "listing hosts with work in crawldb failed: %s", f.getErrorMessage()))  # fmt: skip

    def _scanned(self, rows: list[tuple[str, str, int]]) -> None:
        """Hosts with FRONTIER rows: take up those another worker found or left."""
        for host, sample_url, count in rows:
            info = self.hosts.get(host)
            if info is None:
                self._host(host, sample_url)
                self._set_backlog(host, True)
                continue
            if info.unavailable or info.backlog or info.refilling or count == info.dry_count:
                continue
            info.dry_count = count
            info.cursor = (-1, 0)
            self._set_backlog(host, True)
            if info.ip is not None and not self.leases.holds(info.ip):
                self.leases.want(info.ip)
        self._wake()

    # -- refilling from crawldb -------------------------------------------------------------
    def _start_refills(self, now: float) -> None:
        if len(self.frontier) >= self.frontier.window:
            return
        low = self.refill_size // 4
        # Only hosts with rows in crawldb: this runs whenever nothing is ready to go.
        for host in list(self._backlogged):
            info = self.hosts[host]
            if not info.unavailable and len(self.frontier.host(host).queue) < low:
                self._refill(host, now)

    def _set_backlog(self, host: str, backlog: bool) -> None:
        self.hosts[host].backlog = backlog
        if backlog:
            self._backlogged.add(host)
        else:
            self._backlogged.discard(host)

    def _refill(self, host: str, now: float) -> None:
        info = self.hosts[host]
        if info.refilling or now < info.refill_after:
            return
        info.refilling = True
        written = self.store.items_written
        d = deferToThread(
            self.store.frontier_batch, host, info.cursor, self.refill_size, self.depth_limit
        )
        d.addCallbacks(self._refilled, self._refill_failed, (host, written), None, (host,))

    def _refilled(self, rows: list[tuple[str, int, int]], host: str, written: int) -> None:
        info = self.hosts[host]
        info.refilling = False
        for url, depth, row_id in rows:
            if fingerprint(url) not in self.released:
                entry = Entry(KIND_PAGE, url, depth)
                if not self.frontier.push(host, depth, entry):
                    break  # the window is full again; the cursor stays before this row
            info.cursor = (depth, row_id)
        else:
            # Exhausted only if every refused entry's row had been written when we read.
            if len(rows) < self.refill_size:
                if written >= info.backlog_written_at:
                    self._set_backlog(host, False)
                else:
                    info.refill_after = time.monotonic() + REFILL_RETRY
        self.stats.inc_value("govsi/frontier/refills")
        self._wake()

    def _refill_failed(self, failure: Failure, host: str) -> None:
        info = self.hosts[host]
        info.refilling = False
        info.refill_after = time.monotonic() + 5.0
        logger.warning("reading the frontier of %s failed: %s", host, failure.getErrorMessage())

    # -- progress ---------------------------------------------------------------------------
    def _log_progress(self) -> None:
        now = time.monotonic()
        stats = self.stats.get_stats()
        fetched = sum(v for k, v in stats.items() if k.startswith("govsi/pages/"))
        then, before = self._progress_last
        self._progress_last = (now, fetched)
        per_min = (fetched - before) * 60 / max(now - then, 1e-9)
        ready, waiting, in_flight = self.frontier.census(now)
        blocked = sum(1 for h in self.hosts.values() if h.robots_retry is not None)
        slowest, slowest_work = "-", 0.0
        for name, state in self.frontier.hosts.items():
            work = len(state.queue) * state.delay
            if work > slowest_work:
                slowest, slowest_work = name, work
        backlog = sum(1 for h in self.hosts.values() if h.backlog)
        logger.info(
            "progress: %d pages fetched (%.0f/min); frontier %d in memory, %d hosts with more "
            "in crawldb; hosts ready %d, waiting for a delay %d, in flight %d, blocked by "
            "robots.txt errors %d; slowest host %s (%.0f s of delays queued)",
            fetched, per_min, len(self.frontier), backlog, ready, waiting, in_flight, blocked,
            slowest, slowest_work,
        )  # fmt: skip
