"""The spider's sitemap part: sitemap requests (from robots.txt and sitemap indexes), the
URLs they list, and what is kept of the documents, within per-site budgets.

Documents are inflated and parsed in the spider's worker process
(``govsi.workers.pool``), never on the reactor thread: a 50 MB sitemap costs seconds of
CPU even within ``govsi.web.sitemaps``' limits, and a thread would hold the GIL the reactor
needs."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from scrapy import Request
from scrapy.http import Response
from scrapy.settings import BaseSettings
from scrapy.utils.defer import maybe_deferred_to_future
from sqlalchemy import Engine
from twisted.python.failure import Failure

from govsi.items import DiscoveredPage, FeedState, SitemapFile
from govsi.requestmeta import (
    KIND_SITEMAP,
    META_FEED,
    META_FEED_HOPS,
    META_FROM_SITEMAP,
    META_KIND,
    META_LASTMOD,
    META_SITE,
    META_URL,
)
from govsi.responses.feeding import FeedPolling
from govsi.responses.pollrecords import Hops
from govsi.stats import Count
from govsi.store.config import StoreConfig
from govsi.web import sitemaps
from govsi.web.urls import host_of
from govsi.workers.pool import WorkerPool

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class SitemapLimits:
    """Each site's sitemap budget (``Sitemaps``)."""

    max_urls: int  # SITEMAP_MAX_URLS_PER_HOST
    max_files: int  # SITEMAP_MAX_FILES_PER_HOST
    store_max: int  # SITEMAP_STORE_MAX_BYTES (0 = no limit)

    @classmethod
    def from_settings(cls, s: BaseSettings) -> SitemapLimits:
        return cls(
            max_urls=s.getint("SITEMAP_MAX_URLS_PER_HOST"),
            max_files=s.getint("SITEMAP_MAX_FILES_PER_HOST"),
            # As the store reads it: the writer holds the same cap across runs.
            store_max=StoreConfig.from_settings(s).sitemap_store_max,
        )


class Sitemaps:
    def __init__(
        self,
        limits: SitemapLimits,
        worker: WorkerPool,
        count: Count,
        *,
        max_size: int,
        admit: Callable[[str], str | None],
        page_request: Callable[[str, int], Request],
        failure_reason: Callable[[Failure], str],
        polls: FeedPolling,
    ) -> None:
        """``max_size``: DOWNLOAD_MAXSIZE; ``admit``: a listed URL's canonical form, or None
        when the crawl does not take it; ``page_request``: the request for a page at a
        depth; ``failure_reason``: what went wrong with a request; ``polls``: each sitemap
        read once per run, conditionally, its poll recorded in crawldb's ``feed`` table."""
        self.limits = limits
        self.worker = worker
        self.count = count
        self.max_size = max_size
        self.admit = admit
        self.page_request = page_request
        self.failure_reason = failure_reason
        self.polls = polls
        # Per site: sitemap files requested, URLs taken, bytes kept in site.sitemap_content.
        self._files: dict[str, int] = {}
        self._urls: dict[str, int] = {}
        self._stored: dict[str, int] = {}

    def due_polls(self, engine: Engine) -> Iterator[Request]:
        """Requests for the feeds and sitemaps whose poll is due now, those this worker
        takes (``FeedPolling.start``)."""
        for row in self.polls.start(engine):
            host = host_of(row.url)
            if row.kind == "sitemap":
                request = self.request(row.url, host)
            else:
                request = self.polls.request(row.url, host, "feed", None)
            if request is not None:
                yield request

    def request(
        self, url: str, site: str, found_on: str | None = None, hops: Hops | None = None
    ) -> Request | None:
        """The request for a sitemap of ``site`` (from its robots.txt, a sitemap index, or
        its row in crawldb when due; at its new URL when it moved), conditional when its row
        has validators; None when it is out of scope, read in this run already, or the
        site's sitemap budget is spent. ``found_on`` names it now (its row's last_seen)."""
        target = self.admit(url)
        if target is not None:
            named, target = target, self.polls.current(target)
            if found_on is not None:
                for sighted in {named, target}:  # both: neither forgotten while it is named
                    self.polls.seen(sighted, "sitemap", found_on)
        if target is None or not self.polls.take(target, site):
            return None
        taken = self._files.get(site, 0)
        if taken >= self.limits.max_files:
            self.count("govsi/sitemaps/files_over_budget")
            return None
        self._files[site] = taken + 1
        return Request(
            target,
            callback=self.parse,
            errback=self.failed,
            dont_filter=True,
            headers=self.polls.headers(target),
            meta={
                META_KIND: KIND_SITEMAP,
                META_URL: target,
                META_SITE: site,
                META_FEED: ("sitemap", found_on),
                META_FEED_HOPS: list(hops or []),
                "dont_retry": True,
                # The protocol allows 50 MB per file, more than a page may be.
                "download_maxsize": max(self.max_size, sitemaps.MAX_BYTES),
            },
        )

    async def parse(self, response: Response) -> list[Any]:
        site: str = response.meta[META_SITE]
        url: str = response.meta[META_URL]
        left = self.limits.max_urls - self._urls.get(site, 0)
        if response.status == 304:
            self.count("govsi/sitemaps/not_modified")
            return self.polls.records.polled(response)
        if 300 <= response.status < 400:
            found_on = response.meta[META_FEED][1]
            return self.polls.redirected(
                response, lambda target, hops: self.request(target, site, found_on, hops)
            )
        if response.status != 200 or left <= 0:
            self.count("govsi/sitemaps/skipped")
            return self.polls.records.polled(response)
        room = self._room(site)
        try:
            read = await maybe_deferred_to_future(
                self.worker.run(sitemaps.read_sitemap, response.body, url, max_urls=left, keep=room)
            )
        except Exception as exc:  # the worker died or could not start: skip this file
            logger.error("sitemap %s: not read, the sitemap worker failed: %r", url, exc)
            self.count("govsi/sitemaps/errors")
            self.count("govsi/sitemaps/worker_failed")
            return self.polls.records.polled(response, error=f"worker: {exc!r}")
        out = list(self._outputs(site, url, read))
        new = sum(isinstance(o, DiscoveredPage) and self.polls.is_new(o.url) for o in out)
        polled = self.polls.records.polled(response, len(read.sitemap.urls), new,
                                           read.sitemap.error)  # fmt: skip
        return [*polled, *out]

    def _outputs(self, site: str, url: str, read: sitemaps.SitemapRead) -> Iterator[Any]:
        found = read.sitemap
        if found.error:
            logger.warning("sitemap %s: %s", url, found.error)
            self.count("govsi/sitemaps/errors")
        if found.stopped is not None:
            logger.warning(
                "sitemap %s: read cut at its limit of %s (%d URLs, %d sitemaps taken)",
                url, found.stopped, len(found.urls), len(found.sitemaps),
            )  # fmt: skip
            self.count(f"govsi/sitemaps/stopped/{found.stopped}")
        self.count("govsi/sitemaps/files")
        yield from self._file(site, url, read.head, read.size)
        for child in found.sitemaps:
            request = self.request(child, site, url)
            if request is not None:
                yield request
        # Read with the budget left when it came; another file of the site may have been
        # taken from it while this one was in the worker.
        listed_urls = found.urls[: max(0, self.limits.max_urls - self._urls.get(site, 0))]
        self._urls[site] = self._urls.get(site, 0) + len(listed_urls)
        # sitemaps.org: a sitemap lists its own host's URLs, and another host's only when
        # that host's robots.txt names it (then ``site`` is that host).
        hosts = {host_of(url), site}
        foreign = 0
        for listed in listed_urls:
            if host_of(listed) not in hosts:
                foreign += 1
                continue
            page = self.admit(listed)
            if page is not None:
                self.count("govsi/sitemaps/urls")
                # One hop below the host's root page, whatever depth the sitemap came at.
                yield DiscoveredPage(url=page, depth=1)
                request = self.page_request(page, 1)
                # Queued after the pages links lead to at that depth (govsi.frontier.queue).
                request.meta[META_FROM_SITEMAP] = True
                # A stored page the site says changed since its last visit is due at once
                # (the scheduler reads it; a new page is queued as any other).
                if (lastmod := found.lastmod.get(listed)) is not None:
                    request.meta[META_LASTMOD] = lastmod
                yield request
        if foreign:
            self.count("govsi/sitemaps/other_host_ignored", foreign)
            logger.info("sitemap %s: %d URLs of other hosts ignored", url, foreign)

    def _room(self, site: str) -> int:
        """Bytes of ``site``'s sitemaps still to keep in site.sitemap_content (0 = no limit:
        a whole document, at most the protocol's size)."""
        if self.limits.store_max <= 0:
            return sitemaps.MAX_BYTES
        return max(0, self.limits.store_max - self._stored.get(site, 0))

    def _file(self, site: str, url: str, head: bytes, size: int) -> Iterator[SitemapFile]:
        # site.sitemap_content keeps what was read, up to SITEMAP_STORE_MAX_BYTES per site
        # (an index may lead to 100 files of 50 MB; a PostgreSQL text holds 1 GB at most).
        # The writer holds the same cap across runs. ``head``: the document's first bytes, at
        # most the room left (read_sitemap's keep).
        room = self._room(site)
        if room <= 0:
            return
        text = head[:room].decode("utf-8", "replace").replace("\x00", "")
        if size > room:
            text += "\n<!-- cut at SITEMAP_STORE_MAX_BYTES -->"
        self._stored[site] = self._stored.get(site, 0) + min(size, room)
        yield SitemapFile(site, url, text)

    def failed(self, failure: Failure) -> list[FeedState]:
        request: Request = failure.request  # type: ignore[attr-defined]
        reason = self.failure_reason(failure)
        logger.warning("sitemap %s: %s", request.url, reason)
        self.count("govsi/sitemaps/errors")
        return [self.polls.records.poll_failed(request, reason)]
