"""The spider's feed part: feeds pages declare, polled once per run at most and only when
due (FEED_POLL_INTERVAL), conditionally from the validators crawldb's ``feed`` table holds;
their entries new to the crawl fetched first; every poll's outcome (a feed's, and a
sitemap's for ``Sitemaps``) recorded as a ``FeedState``.

Feeds are read in the spider's worker process (``govsi.web.feeds.read_feed``), as sitemaps
are. Their requests are sitemap-kind requests (read whole, never stopped after the headers)
marked with ``META_FEED``: the scheduler queues a feed behind its host's robots.txt and checks
robots.txt for it as for a page (``govsi.frontier.scheduler``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta
from typing import Any

from scrapy import Request
from scrapy.http import Response
from scrapy.utils.defer import maybe_deferred_to_future
from sqlalchemy import Engine
from twisted.python.failure import Failure

from govsi.items import DiscoveredPage, FeedKind, FeedState
from govsi.requestmeta import (
    KIND_SITEMAP,
    META_FEED,
    META_FROM_FEED,
    META_KIND,
    META_SITE,
    META_URL,
)
from govsi.revisit.conditional import ETAG_MAX, LAST_MODIFIED_MAX, validator
from govsi.spiders.config import Count, FeedPolls
from govsi.spiders.workers import WorkerPool
from govsi.store.feeds import StoredFeed, claim_polls, stored_feeds
from govsi.store.schema import utcnow
from govsi.web import feeds, sitemaps
from govsi.web.urls import host_of

logger = logging.getLogger(__name__)

__all__ = ["FeedPolling"]


class FeedPolling:
    def __init__(
        self,
        config: FeedPolls,
        worker: WorkerPool,
        count: Count,
        *,
        admit: Callable[[str], str | None],
        is_new: Callable[[str], bool],
        page_request: Callable[[str, int], Request],
        failure_reason: Callable[[Failure], str],
        clock: Callable[[], datetime] = utcnow,
    ) -> None:
        """``admit``: a URL's canonical form, or None when the crawl does not take it;
        ``is_new``: a page not known to the crawl yet; ``page_request``: the request for a
        page at a depth; ``failure_reason``: what went wrong with a request."""
        self.config = config
        self.worker = worker
        self.count = count
        self.admit = admit
        self.is_new = is_new
        self.page_request = page_request
        self.failure_reason = failure_reason
        self.clock = clock
        # crawldb's feed rows as the run started (``open``), and the URLs polled in it.
        self.stored: dict[str, StoredFeed] = {}
        self._taken: set[tuple[str, str]] = set()

    def open(self, stored: dict[str, StoredFeed]) -> None:
        self.stored = stored

    def start(self, engine: Engine) -> list[StoredFeed]:
        """crawldb's feed rows read; the due ones (``due``) this worker has taken
        (``claim_polls``: another worker of the crawl polls the others)."""
        self.open(stored_feeds(engine))
        due = {row.url: row for row in self.due()}
        intervals = {url: self.interval(row.kind) for url, row in due.items()}
        return [due[url] for url in claim_polls(engine, intervals, self.clock())]

    # -- which polls ------------------------------------------------------------------------
    def take(self, url: str, site: str = "") -> bool:
        """True the first time ``url`` is to be polled in this run (then never again); a
        sitemap once per ``site`` naming it (it may list that site's pages)."""
        if (url, site) in self._taken:
            return False
        self._taken.add((url, site))
        return True

    def due(self, now: datetime | None = None) -> list[StoredFeed]:
        """Stored feeds and sitemaps whose next poll has come (none when REVISIT is off, or
        for feeds when FEED_FOLLOW is off); ``claim_polls`` takes them for this worker."""
        if not self.config.repoll:
            return []
        now = now or self.clock()
        return [
            row
            for row in self.stored.values()
            if (row.next_poll is None or row.next_poll <= now)
            and (row.kind == "sitemap" or self.config.follow)
        ]

    def interval(self, kind: FeedKind) -> timedelta:
        """FEED_POLL_INTERVAL or SITEMAP_POLL_INTERVAL, by what is polled."""
        seconds = self.config.sitemap_interval if kind == "sitemap" else self.config.feed_interval
        return timedelta(seconds=max(0.0, seconds))

    def headers(self, url: str) -> dict[str, str]:
        """The stored validators of ``url``, as a conditional request sends them."""
        row = self.stored.get(url)
        headers: dict[str, str] = {}
        if row is not None and row.etag:
            headers["If-None-Match"] = row.etag
        if row is not None and row.last_modified:
            headers["If-Modified-Since"] = row.last_modified
        return headers

    def declared(self, page_url: str, urls: list[str]) -> Iterator[Request]:
        """The requests for the feeds a page declares (canonical already), those stored
        and not due left for a later run."""
        if not self.config.follow:
            return
        now = self.clock()
        for url in urls:
            row = self.stored.get(url)
            if row is not None and row.next_poll is not None and row.next_poll > now:
                continue
            request = self.request(url, host_of(url), "feed", page_url)
            if request is not None:
                yield request

    def request(self, url: str, site: str, kind: FeedKind, found_on: str | None) -> Request | None:
        """A feed's request (a sitemap's is ``Sitemaps.request``), or None when it was
        polled in this run already or the crawl does not take it."""
        target = self.admit(url)
        if target is None or not self.take(target):
            return None
        self.count("govsi/feeds/requested")
        return Request(
            target,
            callback=self.parse,
            errback=self.failed,
            dont_filter=True,
            headers=self.headers(target),
            meta={
                META_KIND: KIND_SITEMAP,
                META_URL: target,
                META_SITE: site,
                META_FEED: (kind, found_on),
                "dont_retry": True,
                "download_maxsize": sitemaps.MAX_BYTES,
            },
        )

    # -- outcomes ---------------------------------------------------------------------------
    async def parse(self, response: Response) -> list[Any]:
        url: str = response.meta[META_URL]
        if response.status != 200:
            if response.status != 304:
                logger.info("feed %s: HTTP %d", url, response.status)
            self.count(f"govsi/feeds/status/{response.status}")
            return [self.polled(response)]
        try:
            read = await maybe_deferred_to_future(
                self.worker.run(feeds.read_feed, response.body, url)
            )
        except Exception as exc:  # the worker died or could not start: skip this feed
            logger.error("feed %s: not read, the worker failed: %r", url, exc)
            self.count("govsi/feeds/errors")
            return [self.polled(response, error=f"worker: {exc!r}")]
        if read.error:
            logger.warning("feed %s: %s", url, read.error)
            self.count("govsi/feeds/errors")
        pages: dict[str, None] = {}
        for entry in read.entries:
            page = self.admit(entry)
            if page is not None and self.is_new(page):
                pages.setdefault(page)
        out: list[Any] = []
        for page in pages:
            out.append(DiscoveredPage(url=page, depth=1))
            request = self.page_request(page, 1)
            request.meta[META_FROM_FEED] = True  # ahead of the host's breadth-first order
            out.append(request)
        new = len(pages)
        self.count("govsi/feeds/read")
        self.count("govsi/feeds/new_entries", new)
        return [self.polled(response, len(read.entries), new, read.error), *out]

    def polled(
        self, response: Response, entries: int = 0, new: int = 0, error: str | None = None
    ) -> FeedState:
        """The record of a poll that was answered (a feed's or a sitemap's)."""
        kind, found_on = response.meta.get(META_FEED, ("sitemap", None))
        url: str = response.meta[META_URL]
        now = self.clock()
        return FeedState(
            url, host_of(url), kind, found_on, polled_at=now, status=response.status,
            error=error,
            etag=validator(response.headers.get("ETag"), ETAG_MAX),
            last_modified=validator(response.headers.get("Last-Modified"), LAST_MODIFIED_MAX),
            entries=entries, new_entries=new, next_poll=now + self.interval(kind),
        )  # fmt: skip

    def poll_failed(self, request: Request, reason: str) -> FeedState:
        """The record of a poll with no response (its validators stay)."""
        kind, found_on = request.meta.get(META_FEED, ("sitemap", None))
        url: str = request.meta[META_URL]
        now = self.clock()
        return FeedState(url, host_of(url), kind, found_on, polled_at=now, error=reason,
                         next_poll=now + self.interval(kind))  # fmt: skip

    def failed(self, failure: Failure) -> list[FeedState]:
        request: Request = failure.request  # type: ignore[attr-defined]
        reason = self.failure_reason(failure)
        logger.warning("feed %s: %s", request.url, reason)
        self.count("govsi/feeds/errors")
        return [self.poll_failed(request, reason)]
