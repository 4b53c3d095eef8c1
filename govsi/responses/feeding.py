"""The spider's feed part: feeds pages declare, polled once per run at most and only when
due (FEED_POLL_INTERVAL), conditionally from the validators crawldb's ``feed`` table holds;
their entries new to the crawl fetched first; every poll's outcome (a feed's, and a
sitemap's for ``Sitemaps``) recorded as a ``FeedState`` (``pollrecords``), with its next
poll backed off after failures (``feedpolicy``), a redirect followed within scope (a
permanent one moves the row), and the rows no page or robots.txt names any more forgotten
at a run's start.

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
    META_FEED_HOPS,
    META_FROM_FEED,
    META_KIND,
    META_LASTMOD,
    META_SITE,
    META_URL,
)
from govsi.responses import feedpolicy
from govsi.responses.feedpolicy import FeedPolls
from govsi.responses.pollrecords import Hops, PollRecords
from govsi.robots import rules
from govsi.stats import Count
from govsi.store.feeds import StoredFeed, claim_polls, forget_feeds, robots_texts, stored_feeds
from govsi.store.schema import utcnow
from govsi.web import feeds, sitemaps
from govsi.web.urls import host_of, resolve
from govsi.workers.pool import WorkerPool

logger = logging.getLogger(__name__)

__all__ = ["FeedPolling", "Follow"]

# The request for a redirect's target with the hops so far, or None when it is not made.
Follow = Callable[[str, Hops], Request | None]


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
        record: Callable[[FeedState], None] = lambda item: None,
        clock: Callable[[], datetime] = utcnow,
    ) -> None:
        """``admit``: a URL's canonical form, or None when the crawl does not take it;
        ``is_new``: a page not known to the crawl yet; ``page_request``: the request for a
        page at a depth; ``failure_reason``: what went wrong with a request; ``record``:
        a record for crawldb that is no poll's (a feed named by a page, a sitemap robots.txt
        no longer lists)."""
        self.config = config
        self.worker = worker
        self.count = count
        self.admit = admit
        self.is_new = is_new
        self.page_request = page_request
        self.failure_reason = failure_reason
        self.record = record
        self.clock = clock
        self.records = PollRecords(config, count, clock, lambda url: self.stored.get(url))
        # crawldb's feed rows as the run started (``open``), the URLs polled in it, and
        # those named by a page or robots.txt in it (recorded once per run).
        self.stored: dict[str, StoredFeed] = {}
        self._taken: set[tuple[str, str]] = set()
        self._seen: set[str] = set()

    def open(self, stored: dict[str, StoredFeed]) -> None:
        self.stored = stored

    def start(self, engine: Engine) -> list[StoredFeed]:
        """Rows not named for FEED_FORGET_AFTER forgotten; crawldb's feed rows read; the
        due ones (``due``) robots.txt still lists, if robots.txt named them, that this
        worker has taken (``claim_polls``: another worker of the crawl polls the others)."""
        now = self.clock()
        forgotten = forget_feeds(engine, now, timedelta(seconds=self.config.backoff.park))
        if forgotten:
            self.count("govsi/feeds/forgotten", len(forgotten))
            logger.info("feeds: %d not named by any page or robots.txt for %.0f days forgotten "
                        "(%s)", len(forgotten), self.config.backoff.park / 86400,
                        ", ".join(forgotten[:5]))  # fmt: skip
        self.open(stored_feeds(engine))
        due = self.due(now)
        listed_by = {host_of(row.found_on or "") for row in due if _from_robots(row)}
        texts = robots_texts(engine, listed_by)
        polled = {row.url: row for row in due if self._still_listed(row, texts)}
        intervals = {url: self.records.interval(row.kind) for url, row in polled.items()}
        claimed = claim_polls(engine, intervals, now)
        # A crawl kept open (REVISIT_WAIT) starts again here: what it claims is due again,
        # and what pages name is recorded again.
        self._taken = {(url, site) for url, site in self._taken if url not in claimed}
        self._seen.clear()
        return [polled[url] for url in claimed]

    def _still_listed(self, row: StoredFeed, texts: dict[str, str]) -> bool:
        """False for a sitemap robots.txt named whose host's robots.txt, as crawldb holds
        it, lists it no more (then recorded as unlisted); True for any other row."""
        if not _from_robots(row) or row.found_on is None:
            return True
        text = texts.get(host_of(row.found_on))
        if text is None:
            return True  # no robots.txt stored: the one fetched in this run decides
        listed = {self.admit(url) for url in rules.parse(text, row.found_on).sitemaps}
        if row.url in listed:
            return True
        logger.info("sitemap %s: %s lists it no more; not polled", row.url, row.found_on)
        self.count("govsi/sitemaps/unlisted")
        self.record(FeedState(row.url, host_of(row.url), "sitemap", state="unlisted"))
        return False

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
        for feeds when FEED_FOLLOW is off), a parked one's among them; not one that moved
        (its new URL's row is polled) nor one robots.txt no longer lists."""
        if not self.config.repoll:
            return []
        now = now or self.clock()
        return [
            row
            for row in self.stored.values()
            if row.state in ("active", "gone")
            and (row.next_poll is None or row.next_poll <= now)
            and (row.kind == "sitemap" or self.config.follow)
        ]

    def headers(self, url: str) -> dict[str, str]:
        """The stored validators of ``url``, as a conditional request sends them."""
        row = self.stored.get(url)
        headers: dict[str, str] = {}
        if row is not None and row.etag:
            headers["If-None-Match"] = row.etag
        if row is not None and row.last_modified:
            headers["If-Modified-Since"] = row.last_modified
        return headers

    def current(self, url: str) -> str:
        """Where ``url`` is polled now: where a permanent redirect moved it, else itself."""
        row = self.stored.get(url)
        return row.moved_to if row is not None and row.state == "moved" and row.moved_to else url

    def seen(self, url: str, kind: FeedKind, found_on: str) -> None:
        """``found_on`` (a page, robots.txt, a sitemap index) names ``url``: its row's
        ``last_seen``, recorded once per run. A feed with no row yet gets one when it is
        polled (not one robots.txt forbids, nor one out of scope)."""
        if url in self._seen or url not in self.stored:
            return
        self._seen.add(url)
        self.record(FeedState(url, host_of(url), kind, found_on, seen_at=self.clock()))

    def declared(self, page_url: str, urls: list[str]) -> Iterator[Request]:
        """The requests for the feeds a page declares (canonical already), at their new
        URL when they moved; those stored and not due left for a later run."""
        if not self.config.follow:
            return
        now = self.clock()
        for named in urls:
            self.seen(named, "feed", page_url)
            url = self.current(named)
            if url != named:
                self.seen(url, "feed", page_url)
            row = self.stored.get(url)
            if row is not None and row.next_poll is not None and row.next_poll > now:
                continue
            request = self.request(url, host_of(url), "feed", page_url)
            if request is not None:
                yield request

    def request(
        self, url: str, site: str, kind: FeedKind, found_on: str | None, hops: Hops | None = None
    ) -> Request | None:
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
                META_FEED_HOPS: list(hops or []),
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
            kind, found_on = response.meta[META_FEED]
            site: str = response.meta[META_SITE]
            return self.redirected(
                response, lambda target, hops: self.request(target, site, kind, found_on, hops)
            )
        try:
            read = await maybe_deferred_to_future(
                self.worker.run(feeds.read_feed, response.body, url)
            )
        except Exception as exc:  # the worker died or could not start: skip this feed
            logger.error("feed %s: not read, the worker failed: %r", url, exc)
            self.count("govsi/feeds/errors")
            return self.records.polled(response, error=f"worker: {exc!r}")
        if read.error:
            logger.warning("feed %s: %s", url, read.error)
            self.count("govsi/feeds/errors")
        pages: dict[str, None] = {}
        changed: dict[str, str] = {}
        for entry in read.entries:
            page = self.admit(entry)
            if page is None:
                continue
            if self.is_new(page):
                pages.setdefault(page)
            elif (when := read.lastmod.get(entry)) is not None:
                changed.setdefault(page, when)
        out: list[Any] = []
        for page in pages:
            out.append(DiscoveredPage(url=page, depth=1))
            request = self.page_request(page, 1)
            request.meta[META_FROM_FEED] = True  # ahead of the host's breadth-first order
            out.append(request)
        for page, when in changed.items():
            # A known page the feed says changed since its last visit is due at once, as a
            # sitemap's <lastmod> makes it (the scheduler reads it).
            request = self.page_request(page, 1)
            request.meta[META_LASTMOD] = when
            out.append(request)
        new = len(pages)
        self.count("govsi/feeds/read")
        self.count("govsi/feeds/new_entries", new)
        return [*self.records.polled(response, len(read.entries), new, read.error), *out]

    def redirected(self, response: Response, follow: Follow) -> list[Any]:
        """A poll's answer other than 200: a redirect's target requested (``follow``) when
        ``feedpolicy.redirect_refusal`` allows, else the poll's record (a refused redirect
        says why)."""
        status = response.status
        location = response.headers.get("Location")
        if not 300 <= status < 400 or status == 304:
            return self.records.polled(response)
        url: str = response.meta[META_URL]
        hops: Hops = list(response.meta.get(META_FEED_HOPS) or [])
        resolved = resolve(response.url, location.decode("latin-1")) if location else None
        target = self.admit(resolved) if resolved else None
        refusal = feedpolicy.redirect_refusal([u for u, _ in hops] + [url], resolved, target)
        if refusal is None and target is not None:
            chain = [*hops, (url, status)]
            request = follow(target, chain)
            if request is not None:
                self.count("govsi/feeds/redirects_followed")
                return [request]
            if feedpolicy.moved_for_good([s for _, s in chain]):
                # Its new URL was read in this run already (a page names both): the move
                # is recorded, and no poll failed.
                kind, found_on = response.meta[META_FEED]
                return self.records.moved(chain, target, kind, found_on)
            refusal = f"redirect to {target}: not requested again in this run"[:300]
        logger.warning("%s %s: %s", response.meta[META_FEED][0], url, refusal)
        self.count("govsi/feeds/redirects_refused")
        return self.records.polled(response, error=refusal, arrived=False)

    def failed(self, failure: Failure) -> list[FeedState]:
        request: Request = failure.request  # type: ignore[attr-defined]
        reason = self.failure_reason(failure)
        logger.warning("feed %s: %s", request.url, reason)
        self.count("govsi/feeds/errors")
        return [self.records.poll_failed(request, reason)]


def _from_robots(row: StoredFeed) -> bool:
    """A sitemap robots.txt named (its ``found_on``)."""
    return row.kind == "sitemap" and (row.found_on or "").endswith("/robots.txt")
