"""What the scheduler keeps per queued page and per host (``govsi.frontier.scheduler`` and
its parts)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

from scrapy import Request
from scrapy.statscollectors import StatsCollector
from twisted.internet.base import DelayedCall

from govsi.frontier.queue import Frontier
from govsi.items import Revisit
from govsi.requestmeta import KIND_IMAGE, KIND_PAGE, META_KIND, META_URL, Kind
from govsi.robots.rules import RobotsRules
from govsi.store.extension import CrawlStore


class Entry(NamedTuple):
    """A page or image waiting in memory: far lighter than the Request built on release."""

    kind: Kind  # KIND_PAGE or KIND_IMAGE
    url: str
    depth: int
    # A revisit of a stored page or image: what its stored copy is checked by.
    revisit: Revisit | None = None


def page_url(entry: Entry | Request) -> str | None:
    """The page or image URL of a queued entry or request (None for robots.txt, sitemaps)."""
    if isinstance(entry, Entry):
        return entry.url
    if entry.meta.get(META_KIND) in (KIND_PAGE, KIND_IMAGE):
        url: str | None = entry.meta.get(META_URL)
        return url
    return None


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
    robots_retry: DelayedCall | None = None
    # Set when the host will not be crawled in this run; its pages stay FRONTIER with it.
    unavailable: str | None = None
    # The stat its refused pages and images are counted under.
    unavailable_stat: str = "govsi/frontier/host_unavailable"
    ip: str | None = None
    # FRONTIER rows in crawldb that are not in memory; read them from ``cursor`` on.
    backlog: bool = False
    cursor: tuple[int, int] = (-1, 0)
    refilling: bool = False
    refill_after: float = 0.0
    # A refused entry's row is in crawldb once the store has written this many items.
    backlog_written_at: int = 0
    # FRONTIER rows crawldb had for it when a refill last found nothing new to fetch:
    # another worker's rows change the count (see Refills._scanned).
    dry_count: int = -1
    # Revisits: the host had due rows when it was set up (its robots.txt is then always
    # fetched in this run), and crawldb may still hold due rows of it.
    revisiting: bool = False
    revisits_left: bool = False

    def has_work(self) -> bool:
        """Work beyond what the frontier holds in memory: rows in crawldb, robots.txt due."""
        return self.backlog or self.refilling or self.revisits_left or self.robots_retry is not None


@dataclass(frozen=True)
class QueueCallbacks:
    """What a part that queues work read from crawldb (``Refills``: FRONTIER rows,
    ``Revisits``: due rows) tells the scheduler."""

    # Entries were pushed, or hosts taken up: let the engine ask.
    wake: Callable[[], None]
    # (host, a URL of it): a host with rows in crawldb, set up if it is new.
    add_host: Callable[[str, str], HostInfo]
    # The host on this address has work again (its lease is asked for if not held).
    work_for: Callable[[str | None], None]


@dataclass(frozen=True)
class Workbench:
    """What the scheduler and each part it holds work on: the hosts' records (each part
    writes its own fields), the frontier, the crawl's store and its stats."""

    hosts: dict[str, HostInfo]
    frontier: Frontier
    store: CrawlStore
    stats: StatsCollector
