"""The scheduler's host set-up: a host's one address (resolved once, pinned in crawldb,
checked by the address guard) and its robots.txt (sent first, read, retried, or read from
crawldb when another worker fetched it), and giving a host up with the reason, a spent
budget's among them (``govsi.frontier.budgets``).

A mixin of ``FrontierScheduler``: it declares below what it uses of the scheduler.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from scrapy import Request
from twisted.internet.threads import deferToThread
from twisted.python.failure import Failure

from govsi.frontier import budgets
from govsi.frontier.budgets import Budgets
from govsi.frontier.entries import Entry, HostInfo
from govsi.frontier.queue import Frontier
from govsi.items import SiteInfo
from govsi.net.guard import AddressGuard
from govsi.requestmeta import KIND_ROBOTS, META_KIND, RequestFactory
from govsi.robots.fetching import RobotsFetcher, RobotsOutcome, stored_outcome
from govsi.sharing.addresses import AddressSharing
from govsi.store.extension import CrawlStore
from govsi.store.reader import StoredRobots

logger = logging.getLogger("govsi.frontier.scheduler")

# robots.txt goes before anything else of its host (see the scheduler's depths).
DEPTH_ROBOTS = -3


def _is_robots_request(entry: Any) -> bool:
    return isinstance(entry, Request) and entry.meta.get(META_KIND) == KIND_ROBOTS


def _reactor() -> Any:
    # Imported when used: importing the reactor at module level installs the default one
    # before Scrapy installs the one its settings ask for.
    from twisted.internet import reactor

    return reactor


class HostSetup:
    hosts: dict[str, HostInfo]
    frontier: Frontier
    store: CrawlStore
    sharing: AddressSharing
    guard: AddressGuard | None
    robots: RobotsFetcher
    requests: RequestFactory
    stats: Any
    budgets: Budgets
    token: str
    max_crawl_delay: float
    follow_sitemaps: bool
    robots_retries: int
    robots_retry_delay: float

    wake: Callable[[], None]
    enqueue_request: Callable[[Request], bool]
    _not_fetched: Callable[[Entry, str, str], None]

    def _resolve(self, host: str) -> None:
        def resolved(ip: str) -> None:
            # One address per host for the whole crawl: with round-robin DNS two workers
            # would otherwise lease two addresses and crawl one host at once.
            d = deferToThread(self.store.pin_address, host, ip)
            d.addCallbacks(pinned, unrecorded, errbackArgs=(ip,))

        def unrecorded(failure: Failure, ip: str) -> None:
            logger.warning("%s: its address could not be recorded in crawldb (%s); using %s",
                           host, failure.getErrorMessage(), ip)  # fmt: skip
            pinned(ip)

        def pinned(ip: str) -> None:
            if self.guard is not None:
                if not self.guard.admit(host, ip):
                    self._give_up(host, str(self.guard.reason(host)))
                    self.frontier.set_ip(host, f"unresolved:{host}")
                    self.wake()
                    return
                self.guard.pin(host, ip)
            self.hosts[host].ip = ip
            self.sharing.resolved(host, ip)  # scheduled once its address's lease is held

        def failed(failure: Failure) -> None:
            message = failure.getErrorMessage()
            refused = self.guard.reason(host) if self.guard is not None else None
            if refused is not None:
                reason = refused  # logged by the guard, once
            else:
                reason = (message if "DNS" in message else f"DNS lookup failed: {message}")[:300]
                logger.warning("%s: %s; its pages stay in the frontier", host, reason)
            self._give_up(host, reason)
            # Its own group, so that its entries are released (and recorded) at once.
            self.frontier.set_ip(host, f"unresolved:{host}")
            self.wake()

        # Through the guard, with its reason kept (refused, or DNS's own: not answered
        # within DNS_TIMEOUT, no such name).
        lookup = self.guard.lookup(host) if self.guard is not None else _reactor().resolve(host)
        lookup.addCallbacks(resolved, failed)

    def _send_robots(self, host: str) -> None:
        info = self.hosts[host]
        info.robots_retry = None
        self.frontier.push(host, DEPTH_ROBOTS, self.robots.request(host, info.robots_url), False)
        self.wake()

    def robots_read(self, stored: dict[str, StoredRobots]) -> None:
        """robots.txt of hosts taken over from another worker, as it fetched them: taken
        instead of the request queued here, so the crawl asks each host once. Its sitemaps
        are that worker's to read (it queued them when it fetched robots.txt)."""
        for host, robots in stored.items():
            info = self.hosts.get(host)
            if info is None or info.rules is not None or info.robots_retry is not None:
                continue  # rules of our own, or a retry of a failure seen here
            queued = self.frontier.discard(host, _is_robots_request)
            if not queued:
                continue  # in flight: its own outcome comes
            self.stats.inc_value("govsi/robots/from_crawldb")
            outcome = stored_outcome(host, robots.status, robots.content, info.robots_url)
            self._robots_outcome(outcome, sitemaps=False, age=robots.age)

    def _robots_outcome(
        self, outcome: RobotsOutcome, sitemaps: bool = True, age: float = 0.0
    ) -> None:
        host, info = outcome.host, self.hosts[outcome.host]
        if outcome.error is None:
            info.rules, info.robots_failures = outcome.rules, 0
            info.rules_at = time.monotonic() - age
            info.used_rules = 0
            delay = outcome.rules.crawl_delay(self.token) or 0.0
            if self.max_crawl_delay > 0 and delay > self.max_crawl_delay:
                # Never faster than the site asked; a delay this long would keep the crawl
                # from ever ending, so the host waits for a run that allows it.
                self.stats.inc_value("govsi/robots/crawl_delay_too_long")
                cap = self.max_crawl_delay
                reason = f"Crawl-delay {delay:g} s is above MAX_CRAWL_DELAY ({cap:g} s)"
                logger.warning("%s: %s; its pages stay in the frontier", host, reason)
                self.store.add(SiteInfo(host, info.ip, delay))
                self._give_up(host, reason)
                self.wake()
                return
            self.frontier.set_delay(host, delay)
            self.store.add(SiteInfo(host, info.ip, self.frontier.host(host).delay))
            self.frontier.open_gate(host)
            if self.follow_sitemaps and sitemaps:
                for url in outcome.rules.sitemaps:
                    request = self.requests.sitemap_request(url, host)
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
        self.wake()

    def _give_up(
        self, host: str, reason: str, stat: str = "govsi/frontier/host_unavailable"
    ) -> None:
        """Nothing of the host is fetched in this run; its queued pages say why, and are
        counted under ``stat``."""
        info = self.hosts[host]
        info.unavailable = reason
        info.unavailable_stat = stat
        self.frontier.open_gate(host)  # entries flow out to _admit, which records them

    # -- budgets ----------------------------------------------------------------------------
    def _budget_reached(self, name: str, host: str) -> None:
        """Log budget ``name`` reached, once per host (once per run for MAX_HOSTS)."""
        if not self.budgets.first_time(name, "" if name == budgets.HOSTS else host):
            return
        self.stats.inc_value(f"govsi/budget/{name}/hosts")
        what = "hosts beyond it" if name == budgets.HOSTS else "the rest of its pages"
        logger.warning("%s: %s; %s stay in the frontier for a later run",
                       host, self.budgets.reason(name), what)  # fmt: skip

    def _over_budget(self, host: str, name: str, entry: Entry) -> None:
        """``entry`` of ``host`` is beyond budget ``name``: not fetched. A spent page or
        byte budget ends the host's run (its rows stay FRONTIER for a later run); a spent
        image budget refuses its images only (their rows stay owed)."""
        if self.hosts[host].unavailable is None:
            self._budget_reached(name, host)
            if name != budgets.IMAGES_PER_HOST:
                self._give_up(host, self.budgets.reason(name), f"govsi/budget/{name}")
        self._not_fetched(entry, self.budgets.reason(name), f"govsi/budget/{name}")

    def _host_over_budget(self, host: str) -> None:
        """A host beyond MAX_HOSTS: never contacted, its pages kept with the reason."""
        self._budget_reached(budgets.HOSTS, host)
        self._give_up(host, self.budgets.reason(budgets.HOSTS), "govsi/budget/hosts")
        self.frontier.set_ip(host, f"unresolved:{host}")

    def _body_received(self, host: str, nbytes: int) -> None:
        if self.budgets.received(host, nbytes) and self.hosts[host].unavailable is None:
            self._budget_reached(budgets.BYTES_PER_HOST, host)
            stat = f"govsi/budget/{budgets.BYTES_PER_HOST}"
            self._give_up(host, self.budgets.reason(budgets.BYTES_PER_HOST), stat)
            self.wake()
