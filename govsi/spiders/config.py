"""What the govsi spider reads from settings, as plain values: ``GovsiSpider.from_crawler``
reads them once and builds its parts from them; a test builds a part's values directly.
``Count`` is how the parts count what they do in the crawl's stats."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from scrapy.settings import BaseSettings

from govsi.spiders.feedpolicy import Backoff
from govsi.store.config import DuplicateConfig, StoreConfig
from govsi.text.limits import TextLimits
from govsi.web.scope import Scope
from govsi.workers.pool import worker_processes

__all__ = ["Count", "FeedPolls", "ReadLimits", "SitemapLimits", "SpiderConfig"]


class Count(Protocol):
    """Adds ``count`` (1 unless given) to the crawl's stat ``key`` (``inc_value``)."""

    def __call__(self, key: str, count: int = 1, /) -> None: ...


@dataclass(frozen=True)
class ReadLimits:
    """How an HTML page is read (``govsi.spiders.pages``)."""

    max_links: int  # MAX_LINKS_PER_PAGE (0 = no limit)
    max_tags: int  # MAX_PARSE_TAGS (0 = no limit)
    worker_min_chars: int  # WORKER_MIN_PAGE_CHARS: from there in the worker (0 = never)
    text_chars: int = 0  # TEXT_MAX_CHARS when TEXT_EXTRACTION, else 0: no text kept


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
    reading: ReadLimits
    sitemaps: SitemapLimits
    trap_max_repeats: int  # TRAP_MAX_REPEATED_SEGMENTS
    trap_max_query_variants: int  # TRAP_MAX_QUERY_VARIANTS
    trap_max_query_chain: int  # TRAP_MAX_QUERY_CHAIN
    render_samples: int  # RENDER_SAMPLE_PAGES
    render_resample_every: int  # RENDER_RESAMPLE_EVERY
    duplicates: DuplicateConfig  # DUPLICATE_DETECTION, NEAR_DUPLICATE_THRESHOLD, ...
    store_documents: bool  # STORE_BINARY_DATA: a document's bytes go on its record
    worker_processes: int  # WORKER_PROCESSES, as a count (``worker_processes``)
    worker_job_timeout: float  # WORKER_JOB_TIMEOUT (0 = no bound)
    worker_memory_limit: int  # WORKER_MEMORY_LIMIT, MB (0 = no bound)
    # TEXT_EXTRACTION's bounds on one document (None: no text kept); ``reading.text_chars``
    # for HTML pages.
    document_text: TextLimits | None = None
    # FEED_FOLLOW, FEED_POLL_INTERVAL, SITEMAP_POLL_INTERVAL (and whether REVISIT is on)
    feeds: FeedPolls = FeedPolls(True, 3600.0, 7200.0)

    @classmethod
    def from_settings(cls, s: BaseSettings) -> SpiderConfig:
        # What crawldb keeps, as the store reads it.
        kept = StoreConfig.from_settings(s)
        text = s.getbool("TEXT_EXTRACTION")
        return cls(
            scope=Scope.from_settings(s),
            seed_urls=tuple(s.getlist("SEED_URLS")),
            max_size=s.getint("DOWNLOAD_MAXSIZE"),
            reading=ReadLimits(
                max_links=s.getint("MAX_LINKS_PER_PAGE"),
                max_tags=s.getint("MAX_PARSE_TAGS"),
                worker_min_chars=s.getint("WORKER_MIN_PAGE_CHARS"),
                text_chars=s.getint("TEXT_MAX_CHARS") if text else 0,
            ),
            sitemaps=SitemapLimits(
                max_urls=s.getint("SITEMAP_MAX_URLS_PER_HOST"),
                max_files=s.getint("SITEMAP_MAX_FILES_PER_HOST"),
                # As the store reads it: the writer holds the same cap across runs.
                store_max=kept.sitemap_store_max,
            ),
            trap_max_repeats=s.getint("TRAP_MAX_REPEATED_SEGMENTS"),
            trap_max_query_variants=s.getint("TRAP_MAX_QUERY_VARIANTS"),
            trap_max_query_chain=s.getint("TRAP_MAX_QUERY_CHAIN"),
            render_samples=s.getint("RENDER_SAMPLE_PAGES"),
            render_resample_every=s.getint("RENDER_RESAMPLE_EVERY"),
            duplicates=DuplicateConfig.from_settings(s),
            store_documents=kept.store_binary_data,
            worker_processes=worker_processes(s.getint("WORKER_PROCESSES")),
            worker_job_timeout=s.getfloat("WORKER_JOB_TIMEOUT"),
            worker_memory_limit=s.getint("WORKER_MEMORY_LIMIT"),
            document_text=text_limits(s) if text else None,
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


def text_limits(s: BaseSettings) -> TextLimits:
    """TEXT_MAX_CHARS and the DOCUMENT_TEXT_* bounds on reading one document."""
    return TextLimits(
        max_chars=s.getint("TEXT_MAX_CHARS"),
        max_pages=s.getint("DOCUMENT_TEXT_MAX_PAGES"),
        max_unpacked_bytes=s.getint("DOCUMENT_TEXT_MAX_UNPACKED_BYTES"),
        max_seconds=s.getfloat("DOCUMENT_TEXT_MAX_SECONDS"),
    )
