"""The scheduler's host set-up: a host's one address (resolved once, pinned in crawldb,
checked by the address guard) and its robots.txt (sent first, read, retried, or read from
crawldb when another worker fetched it), the host's part of the last check before a page
leaves (robots.txt's rules, budgets per host: ``govsi.frontier.budgets``), and giving a
host up with the reason.

``HostSetup`` is a part the scheduler holds: it writes the set-up fields of the hosts'
``HostInfo`` records it is given, and tells the scheduler what it learns through
``SetupCallbacks``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from scrapy import Request
from twisted.internet.threads import deferToThread
from twisted.python.failure import Failure

from govsi.frontier import budgets
from govsi.frontier.budgets import Budgets
from govsi.frontier.config import SchedulerConfig
from govsi.frontier.entries import Entry, HostInfo, Workbench
from govsi.frontier.waking import running_reactor
from govsi.items import SiteInfo
from govsi.net.guard import AddressGuard
from govsi.requestmeta import KIND_IMAGE, KIND_ROBOTS, META_KIND
from govsi.robots.fetching import RobotsFetcher, RobotsOutcome, robots_url_for, stored_outcome
from govsi.robots.rules import Refusal
from govsi.store.reader import StoredRobots
from govsi.web.urls import in_scope

logger = logging.getLogger(__name__)

# robots.txt goes before anything else of its host (see the scheduler's depths).
DEPTH_ROBOTS = -3

# A page robots.txt keeps us from: the reason its FRONTIER row keeps, and the stat. A check
# refused unchecked (govsi.robots.matching's bounds) fails closed, with its own reason.
ROBOTS_REFUSALS: dict[Refusal, tuple[str, str]] = {
    "forbidden": ("forbidden by robots.txt", "govsi/robots/forbidden"),
    "path_too_long": (
        "robots.txt: path too long to check, refused (fail closed)",
        "govsi/robots/refused/path_too_long",
    ),
    "check_too_costly": (
        "robots.txt: rules too costly to check for this path, refused (fail closed)",
        "govsi/robots/refused/check_too_costly",
    ),
}


def _is_robots_request(entry: Any) -> bool:
    return isinstance(entry, Request) and entry.meta.get(META_KIND) == KIND_ROBOTS


@dataclass(frozen=True)
class SetupCallbacks:
    """What host set-up tells the scheduler."""

    # Something may be ready to go now: let the engine ask.
    wake: Callable[[], None]
    # (host, ip): the host's address is known and admitted; serve it under that address.
    resolved: Callable[[str, str], None]
    # (host, sitemap URLs) robots.txt lists, to queue (SITEMAP_FOLLOW).
    sitemaps: Callable[[str, list[str]], None]
    # (entry, reason, stat): a queued page or image is not fetched; record it.
    not_fetched: Callable[[Entry, str, str], None]
    # (host): its robots.txt request has an outcome that stores nothing (an error).
    robots_settled: Callable[[str], None]


class HostSetup:
    def __init__(
        self,
        config: SchedulerConfig,
        bench: Workbench,
        *,
        guard: AddressGuard | None,
        callbacks: SetupCallbacks,
    ) -> None:
        self.config = config
        self.hosts, self.frontier = bench.hosts, bench.frontier
        self.store, self.stats = bench.store, bench.stats
        self.guard = guard
        self.cb = callbacks
        # When this run began (robots.txt a revisited host's pages obey is this run's).
        self.opened = time.monotonic()
        suffixes = list(config.scope.suffixes)
        self.robots = RobotsFetcher(self._robots_outcome, lambda url: in_scope(url, suffixes))
        self.budgets = Budgets(
            pages_per_host=config.max_pages_per_host,
            images_per_host=config.max_images_per_host,
            bytes_per_host=config.max_bytes_per_host,
            hosts=config.max_hosts,
        )

    def host(self, host: str, sample_url: str) -> HostInfo:
        """``host``'s record; the first time it is seen, its set-up starts (within
        MAX_HOSTS): its address is looked up and its robots.txt queued first."""
        info = self.hosts.get(host)
        if info is not None:
            return info
        info = self.hosts[host] = HostInfo(robots_url=robots_url_for(sample_url))
        if not self.budgets.new_host():
            self._host_over_budget(host)
            return info
        self._resolve(host)
        if self.config.obey_robots:
            self.send_robots(host)
        else:
            self.frontier.open_gate(host)
        return info

    def close(self) -> None:
        """Cancel the robots.txt retries still due."""
        for info in self.hosts.values():
            if info.robots_retry is not None and info.robots_retry.active():
                info.robots_retry.cancel()

    # -- the address ------------------------------------------------------------------------
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
                    self.cb.wake()
                    return
                self.guard.pin(host, ip)
            self.hosts[host].ip = ip
            self.cb.resolved(host, ip)  # scheduled once its address's lease is held

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
            self.cb.wake()

        # Through the guard, with its reason kept (refused, or DNS's own: not answered
        # within DNS_TIMEOUT, no such name).
        lookup = (
            self.guard.lookup(host) if self.guard is not None else running_reactor().resolve(host)
        )
        lookup.addCallbacks(resolved, failed)

    # -- robots.txt -------------------------------------------------------------------------
    def send_robots(self, host: str) -> None:
        """Queue ``host``'s robots.txt request, ahead of all its other entries."""
        info = self.hosts[host]
        info.robots_retry = None
        self.frontier.push(host, DEPTH_ROBOTS, self.robots.request(host, info.robots_url), False)
        self.cb.wake()

    def robots_read(self, stored: dict[str, StoredRobots]) -> None:
        """robots.txt of hosts taken over from another worker, as it fetched them: taken
        instead of the request queued here, so the crawl asks each host once. Its sitemaps
        are that worker's to read (it queued them when it fetched robots.txt). Not for a
        host with revisits, unless fetched in this run: they obey robots.txt as it reads
        now, and its sitemaps are read again before them."""
        for host, robots in stored.items():
            info = self.hosts.get(host)
            if info is None or info.rules is not None or info.robots_retry is not None:
                continue  # rules of our own, or a retry of a failure seen here
            if info.revisiting and robots.age > time.monotonic() - self.opened:
                continue  # revisits obey robots.txt as it reads now: fetched in this run
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
        if outcome.error is not None:
            self.cb.robots_settled(host)  # no record will come: nothing to wait for
        if outcome.error is None:
            info.rules, info.robots_failures = outcome.rules, 0
            info.rules_at = time.monotonic() - age
            info.used_rules = 0
            delay = outcome.rules.crawl_delay(self.config.scope.robots_token) or 0.0
            longest = self.config.max_crawl_delay
            if longest > 0 and delay > longest:
                # Never faster than the site asked; a delay this long would keep the crawl
                # from ever ending, so the host waits for a run that allows it.
                self.stats.inc_value("govsi/robots/crawl_delay_too_long")
                reason = f"Crawl-delay {delay:g} s is above MAX_CRAWL_DELAY ({longest:g} s)"
                logger.warning("%s: %s; its pages stay in the frontier", host, reason)
                self.store.add(SiteInfo(host, info.ip, delay))
                self._give_up(host, reason)
                self.cb.wake()
                return
            self.frontier.set_delay(host, delay)
            self.store.add(SiteInfo(host, info.ip, self.frontier.host(host).delay))
            self.frontier.open_gate(host)
            if self.config.follow_sitemaps and sitemaps:
                self.cb.sitemaps(host, list(outcome.rules.sitemaps))
        else:
            info.robots_failures += 1
            self.stats.inc_value("govsi/robots/unavailable")
            if info.robots_failures <= self.config.robots_retries:
                # RFC 9309 §2.3.1.4: crawl nothing of the host meanwhile, and try again.
                self.frontier.close_gate(host)
                wait = self.config.robots_retry_delay * 2 ** (info.robots_failures - 1)
                logger.info("robots.txt of %s: %s; retrying in %.0f s", host, outcome.error, wait)
                info.robots_retry = running_reactor().callLater(wait, self.send_robots, host)
            else:
                self._give_up(host, f"robots.txt unavailable ({outcome.error})")
        self.cb.wake()

    # -- the last check ---------------------------------------------------------------------
    def allows(self, host: str, url: str) -> bool:
        """robots.txt as known now allows ``url`` (a feed's request: no budget spent)."""
        info = self.hosts[host]
        if not self.config.obey_robots or info.rules is None:
            return True
        return info.rules.refusal(url, self.config.scope.robots_token) is None

    def admit(self, host: str, entry: Entry) -> bool:
        """The host's part of the last check before ``entry`` leaves: not given up on,
        allowed by robots.txt (fetched again first when older than ROBOTSTXT_MAX_AGE),
        within the budgets. An entry refused for good is recorded as not fetched."""
        info = self.hosts[host]
        if info.unavailable is not None:
            self.cb.not_fetched(entry, info.unavailable, info.unavailable_stat)
            return False
        if self.config.obey_robots and info.rules is not None:
            if info.used_rules and time.monotonic() - info.rules_at > self.config.robots_max_age:
                # Rules older than ROBOTSTXT_MAX_AGE: fetch them again before going on.
                self.frontier.close_gate(host)
                self.frontier.push(host, entry.depth, entry, spillable=False)
                self.send_robots(host)
                return False
            refusal = info.rules.refusal(entry.url, self.config.scope.robots_token)
            if refusal is not None:
                self.cb.not_fetched(entry, *ROBOTS_REFUSALS[refusal])
                return False
        spent = self.budgets.release(host, entry.kind == KIND_IMAGE)
        if spent is not None:
            self._over_budget(host, spent, entry)
            return False
        info.used_rules += 1
        return True

    def _give_up(
        self, host: str, reason: str, stat: str = "govsi/frontier/host_unavailable"
    ) -> None:
        """Nothing of the host is fetched in this run; its queued pages say why, and are
        counted under ``stat``."""
        info = self.hosts[host]
        info.unavailable = reason
        info.unavailable_stat = stat
        self.frontier.open_gate(host)  # entries flow out to admit, which records them

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
        self.cb.not_fetched(entry, self.budgets.reason(name), f"govsi/budget/{name}")

    def _host_over_budget(self, host: str) -> None:
        """A host beyond MAX_HOSTS: never contacted, its pages kept with the reason."""
        self._budget_reached(budgets.HOSTS, host)
        self._give_up(host, self.budgets.reason(budgets.HOSTS), "govsi/budget/hosts")
        self.frontier.set_ip(host, f"unresolved:{host}")

    def body_received(self, host: str, nbytes: int) -> None:
        """``nbytes`` of a response body came from ``host`` (MAX_BYTES_PER_HOST)."""
        if self.budgets.received(host, nbytes) and self.hosts[host].unavailable is None:
            self._budget_reached(budgets.BYTES_PER_HOST, host)
            stat = f"govsi/budget/{budgets.BYTES_PER_HOST}"
            self._give_up(host, self.budgets.reason(budgets.BYTES_PER_HOST), stat)
            self.cb.wake()
