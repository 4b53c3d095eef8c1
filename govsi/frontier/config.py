"""What the scheduler reads from settings, as plain values: ``FrontierScheduler.from_crawler``
reads them once, and a test builds a ``SchedulerConfig`` directly."""

from __future__ import annotations

from dataclasses import dataclass

from scrapy.settings import BaseSettings

from govsi.revisit.due import RevisitMode, revisit_mode
from govsi.web.scope import Scope


@dataclass(frozen=True)
class SchedulerConfig:
    crawl_delay: float  # DEFAULT_CRAWL_DELAY: per host and per address
    max_crawl_delay: float  # MAX_CRAWL_DELAY: the longest robots.txt Crawl-delay honoured
    window: int  # FRONTIER_WINDOW: queued requests held in memory
    refill_size: int  # FRONTIER_REFILL_SIZE: FRONTIER rows read back per host at a time
    # ALLOWED_DOMAIN_SUFFIXES, DEPTH_LIMIT, ROBOTSTXT_USER_AGENT (read as the spider reads them)
    scope: Scope
    obey_robots: bool  # ROBOTSTXT_OBEY
    robots_max_age: float  # ROBOTSTXT_MAX_AGE
    robots_retries: int  # ROBOTSTXT_RETRY_TIMES
    robots_retry_delay: float  # ROBOTSTXT_RETRY_DELAY
    follow_sitemaps: bool  # SITEMAP_FOLLOW
    progress_interval: float  # PROGRESS_INTERVAL
    download_timeout: float  # DOWNLOAD_TIMEOUT: bounds how long a request can be out
    lease_ttl: float  # LEASE_TTL
    lease_scan_interval: float  # LEASE_SCAN_INTERVAL
    # Budgets (govsi.frontier.budgets), 0 = no limit.
    max_pages_per_host: int = 0  # MAX_PAGES_PER_HOST
    max_images_per_host: int = 0  # MAX_IMAGES_PER_HOST
    max_bytes_per_host: int = 0  # MAX_BYTES_PER_HOST
    max_hosts: int = 0  # MAX_HOSTS
    # Revisits (govsi.frontier.revisits): which stored pages are due, and the least time
    # between two visits of one (also the bound past which a due revisit is overdue).
    revisit: RevisitMode = "due"  # REVISIT
    revisit_min_interval: float = 24 * 3600.0  # REVISIT_MIN_INTERVAL
    # REVISIT_HUB_MIN_INTERVAL: a hub's shortest interval, which the due rule lets it have.
    revisit_hub_min_interval: float = 3600.0
    # REVISIT_HOST_SHARE: the share of a day's fetches at a host's delay its revisits may
    # take (0: no cap).
    revisit_host_share: float = 0.5

    @classmethod
    def from_settings(cls, s: BaseSettings) -> SchedulerConfig:
        return cls(
            crawl_delay=s.getfloat("DEFAULT_CRAWL_DELAY"),
            max_crawl_delay=s.getfloat("MAX_CRAWL_DELAY"),
            window=s.getint("FRONTIER_WINDOW"),
            refill_size=s.getint("FRONTIER_REFILL_SIZE"),
            scope=Scope.from_settings(s),
            obey_robots=s.getbool("ROBOTSTXT_OBEY"),
            robots_max_age=s.getfloat("ROBOTSTXT_MAX_AGE"),
            robots_retries=s.getint("ROBOTSTXT_RETRY_TIMES"),
            robots_retry_delay=s.getfloat("ROBOTSTXT_RETRY_DELAY"),
            follow_sitemaps=s.getbool("SITEMAP_FOLLOW"),
            progress_interval=s.getfloat("PROGRESS_INTERVAL"),
            download_timeout=s.getfloat("DOWNLOAD_TIMEOUT"),
            lease_ttl=s.getfloat("LEASE_TTL"),
            lease_scan_interval=s.getfloat("LEASE_SCAN_INTERVAL"),
            max_pages_per_host=s.getint("MAX_PAGES_PER_HOST"),
            max_images_per_host=s.getint("MAX_IMAGES_PER_HOST"),
            max_bytes_per_host=s.getint("MAX_BYTES_PER_HOST"),
            max_hosts=s.getint("MAX_HOSTS"),
            revisit=revisit_mode(s.get("REVISIT") or "due"),
            revisit_min_interval=s.getfloat("REVISIT_MIN_INTERVAL"),
            revisit_hub_min_interval=s.getfloat("REVISIT_HUB_MIN_INTERVAL"),
            revisit_host_share=s.getfloat("REVISIT_HOST_SHARE"),
        )
