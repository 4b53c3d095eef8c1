"""The spider's parts, built from the crawl's settings (each part reads its own) and the
spider's callbacks: the worker pool (its memory bound checked first), which URLs the crawl
takes, rendering, HTML pages and their copies, documents, feeds and sitemaps, the records
of images and failed requests, and what a failed request's reason is."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from scrapy import Request
from scrapy.crawler import Crawler
from twisted.python.failure import Failure

from govsi.frontier.admission import Admission
from govsi.frontier.traps import TrapGuard
from govsi.items import FetchedPage
from govsi.net.failures import failure_reason
from govsi.net.guard import AddressGuard
from govsi.responses.documents import Documents, DocumentTexts, text_limits
from govsi.responses.feeding import FeedPolling
from govsi.responses.feedpolicy import FeedPolls
from govsi.responses.pages import HtmlPages
from govsi.responses.records import Records
from govsi.responses.rendering import Rendering
from govsi.responses.sitemapping import SitemapLimits, Sitemaps
from govsi.stats import Count, counter
from govsi.store.config import StoreConfig
from govsi.web.scope import Scope
from govsi.workers.bound import MemoryBoundRefused, require_bound
from govsi.workers.pool import WorkerPool, worker_processes

__all__ = ["Parts", "build"]

logger = logging.getLogger("govsi.spiders.govsi")  # the spider's lines, as before the split


@dataclass
class Parts:
    """The spider's parts; ``close`` when the crawl ends."""

    worker: WorkerPool
    admission: Admission
    rendering: Rendering
    pages: HtmlPages
    documents: Documents
    feeds: FeedPolling
    sitemaps: Sitemaps
    records: Records

    def close(self) -> None:
        self.worker.close()
        self.pages.copies.close()


def _worker(crawler: Crawler) -> WorkerPool:
    """The pool of worker processes (WORKER_PROCESSES, WORKER_JOB_TIMEOUT), once this system
    has been found to hold them within WORKER_MEMORY_LIMIT."""
    s = crawler.settings
    limit = s.getint("WORKER_MEMORY_LIMIT")
    try:
        require_bound(limit)
    except MemoryBoundRefused as e:
        logger.error("%s", e)  # before anything is fetched
        raise
    processes = worker_processes(s.getint("WORKER_PROCESSES"))
    return WorkerPool(processes, s.getfloat("WORKER_JOB_TIMEOUT"), memory_limit=limit)


def _traps(crawler: Crawler, count: Count) -> TrapGuard:
    s = crawler.settings
    return TrapGuard(
        max_repeats=s.getint("TRAP_MAX_REPEATED_SEGMENTS"),
        max_query_variants=s.getint("TRAP_MAX_QUERY_VARIANTS"),
        on_refusal=lambda reason: count(f"govsi/traps/{reason}"),
        max_query_chain=s.getint("TRAP_MAX_QUERY_CHAIN"),
    )


def build(
    crawler: Crawler,
    component: Any,
    *,
    is_new: Callable[[str], bool],
    page_request: Callable[[str, int], Request],
    follow_now: Callable[[FetchedPage, list[str]], None],
    feeds_found: Callable[[str, list[str]], None],
    record: Callable[[Any], None],
) -> Parts:
    """The spider's parts. ``component``: the spider, on whose crawler's stats they count
    (``counter``); ``is_new(url)``: a page not known to the crawl yet;
    ``page_request(url, depth)``: the spider's request for a page; ``follow_now``,
    ``feeds_found``: ``HtmlPages``'; ``record(item)``: into crawldb."""
    s = crawler.settings
    count = counter(component)
    scope = Scope.from_settings(s)
    # DOWNLOAD_MAXSIZE: the sitemaps' bound, and named when Scrapy cancelled a body past it.
    max_size = s.getint("DOWNLOAD_MAXSIZE")

    def reason(failure: Failure) -> str:
        # The guard is an extension, built after the spider: looked up when a request fails.
        return failure_reason(failure, crawler.get_extension(AddressGuard), max_size)

    worker = _worker(crawler)
    admission = Admission(scope, _traps(crawler, count), count, is_new)
    rendering = Rendering.from_crawler(crawler, scope.suffixes, count)
    pages = HtmlPages.from_settings(
        s,
        scope.robots_token,
        admission=admission,
        rendering=rendering,
        worker=worker,
        count=count,
        follow_now=follow_now,
        feeds_found=feeds_found,
    )
    limits = text_limits(s)
    texts = DocumentTexts(worker, limits, count) if limits else None
    documents = Documents(texts, StoreConfig.from_settings(s).store_binary_data, count)
    feeds = FeedPolling(
        FeedPolls.from_settings(s),
        worker,
        count,
        admit=admission.admit,
        is_new=is_new,
        page_request=page_request,
        failure_reason=reason,
        record=record,
    )
    sitemaps = Sitemaps(
        SitemapLimits.from_settings(s),
        worker,
        count,
        max_size=max_size,
        admit=admission.admit,
        page_request=page_request,
        failure_reason=reason,
        polls=feeds,
    )
    records = Records(count, reason)
    return Parts(worker, admission, rendering, pages, documents, feeds, sitemaps, records)
