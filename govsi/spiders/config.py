"""What the govsi spider reads from settings, as plain values: ``GovsiSpider.from_crawler``
reads them once and builds its parts from them; a test builds a part's values directly.
Parts with settings of their own read them themselves (``ReadLimits``, ``text_limits``,
``Rendering.from_crawler``, ``DuplicateConfig``). ``Count`` (``govsi.stats``) is how the
parts count what they do in the crawl's stats."""

from __future__ import annotations

from dataclasses import dataclass

from scrapy.settings import BaseSettings

from govsi.spiders.feedpolicy import Backoff
from govsi.stats import Count
from govsi.store.config import StoreConfig
from govsi.web.scope import Scope
from govsi.workers.pool import worker_processes

__all__ = ["Count", "FeedPolls", "SitemapLimits", "SpiderConfig"]


@dataclass(frozen=True)
class SitemapLimits:
    """Each site's sitemap budget (``govsi.spiders.sitemapping``)."""

    max_urls: int  # SITEMAP_MAX_URLS_PER_HOST
    max_files: int  # SITEMAP_MAX_FILES_PER_HOST
    store_max: int  # SITEMAP_STORE_MAX_BYTES (0 = no limit)


# settings.py's FEED_BACKOFF_MAX, FEED_GONE_AFTER, FEED_FORGET_AFTER, for a FeedPolls built
# without settings (tests).
DEFAULT_BACKOFF = Backoff(24 * 3600.0, 3, 60 * 24 * 3600.0)


@dataclass(frozen=True)
class FeedPolls:
    """How feeds and sitemaps are polled (``govsi.spiders.feeding``)."""

    follow: bool  # FEED_FOLLOW: feeds pages declare are read
    feed_interval: float  # FEED_POLL_INTERVAL, seconds
    sitemap_interval: float  # SITEMAP_POLL_INTERVAL, seconds
    # REVISIT is not off: stored feeds and sitemaps are polled again when due.
    repoll: bool = True
    # FEED_BACKOFF_MAX, FEED_GONE_AFTER, FEED_FORGET_AFTER (seconds)
    backoff: Backoff = DEFAULT_BACKOFF


@dataclass(frozen=True)
class SpiderConfig:
    # ALLOWED_DOMAIN_SUFFIXES, MAX_URL_LENGTH, DEPTH_LIMIT, ROBOTSTXT_USER_AGENT
    scope: Scope
    seed_urls: tuple[str, ...]  # SEED_URLS (the spider's ``seeds`` argument wins)
    max_size: int  # DOWNLOAD_MAXSIZE
    sitemaps: SitemapLimits
    trap_max_repeats: int  # TRAP_MAX_REPEATED_SEGMENTS
    trap_max_query_variants: int  # TRAP_MAX_QUERY_VARIANTS
    trap_max_query_chain: int  # TRAP_MAX_QUERY_CHAIN
    store_documents: bool  # STORE_BINARY_DATA: a document's bytes go on its record
    worker_processes: int  # WORKER_PROCESSES, as a count (``worker_processes``)
    worker_job_timeout: float  # WORKER_JOB_TIMEOUT (0 = no bound)
    worker_memory_limit: int  # WORKER_MEMORY_LIMIT, MB (0 = no bound)
    # FEED_FOLLOW, FEED_POLL_INTERVAL, SITEMAP_POLL_INTERVAL (and whether REVISIT is on)
    feeds: FeedPolls = FeedPolls(True, 3600.0, 7200.0)

    @classmethod
    def from_settings(cls, s: BaseSettings) -> SpiderConfig:
        # What crawldb keeps, as the store reads it.
        kept = StoreConfig.from_settings(s)
        return cls(
            scope=Scope.from_settings(s),
            seed_urls=tuple(s.getlist("SEED_URLS")),
            max_size=s.getint("DOWNLOAD_MAXSIZE"),
            sitemaps=SitemapLimits(
                max_urls=s.getint("SITEMAP_MAX_URLS_PER_HOST"),
                max_files=s.getint("SITEMAP_MAX_FILES_PER_HOST"),
                # As the store reads it: the writer holds the same cap across runs.
                store_max=kept.sitemap_store_max,
            ),
            trap_max_repeats=s.getint("TRAP_MAX_REPEATED_SEGMENTS"),
            trap_max_query_variants=s.getint("TRAP_MAX_QUERY_VARIANTS"),
            trap_max_query_chain=s.getint("TRAP_MAX_QUERY_CHAIN"),
            store_documents=kept.store_binary_data,
            worker_processes=worker_processes(s.getint("WORKER_PROCESSES")),
            worker_job_timeout=s.getfloat("WORKER_JOB_TIMEOUT"),
            worker_memory_limit=s.getint("WORKER_MEMORY_LIMIT"),
            feeds=FeedPolls(
                follow=s.getbool("FEED_FOLLOW"),
                feed_interval=s.getfloat("FEED_POLL_INTERVAL"),
                sitemap_interval=s.getfloat("SITEMAP_POLL_INTERVAL"),
                repoll=str(s.get("REVISIT", "due")).strip().lower() != "off",
                backoff=Backoff(
                    most=s.getfloat("FEED_BACKOFF_MAX"),
                    gone_after=s.getint("FEED_GONE_AFTER"),
                    park=s.getfloat("FEED_FORGET_AFTER"),
                ),
            ),
        )
