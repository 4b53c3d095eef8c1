"""The records of a feed's or a sitemap's poll (``FeedState``): its outcome on the row
polled, or on the new URL and each URL it moved from after permanent redirects; a poll with
no response; the next poll planned (``feedpolicy``), a back-off or a parking logged. The
polls themselves are ``govsi.responses.feeding``'s."""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime, timedelta

from scrapy import Request
from scrapy.http import Response

from govsi.items import FeedKind, FeedState
from govsi.requestmeta import META_FEED, META_FEED_HOPS, META_URL
from govsi.responses import feedpolicy
from govsi.responses.feedpolicy import FeedPolls
from govsi.revisit.conditional import ETAG_MAX, LAST_MODIFIED_MAX, validator
from govsi.stats import Count
from govsi.store.feeds import StoredFeed
from govsi.web.urls import host_of

__all__ = ["Hops", "PollRecords"]

logger = logging.getLogger("govsi.responses.feeding")  # its lines, as before the split

# The redirects a poll followed: (URL, status) of each, first the URL polled.
Hops = list[tuple[str, int]]


class PollRecords:
    """Makes a poll's records; ``row``: crawldb's feed row of a URL as the run started
    (None: none), ``count`` takes the stats, ``clock`` says when."""

    def __init__(
        self,
        config: FeedPolls,
        count: Count,
        clock: Callable[[], datetime],
        row: Callable[[str], StoredFeed | None],
    ) -> None:
        self.config = config
        self.count = count
        self.clock = clock
        self.row = row

    def interval(self, kind: FeedKind) -> timedelta:
        """FEED_POLL_INTERVAL or SITEMAP_POLL_INTERVAL, by what is polled."""
        seconds = self.config.sitemap_interval if kind == "sitemap" else self.config.feed_interval
        return timedelta(seconds=max(0.0, seconds))

    def polled(
        self,
        response: Response,
        entries: int = 0,
        new: int = 0,
        error: str | None = None,
        *,
        arrived: bool = True,
    ) -> list[FeedState]:
        """The records of a poll that was answered (a feed's or a sitemap's): its outcome
        on the row polled, or on the new URL and each URL it moved from when every
        redirect to it was permanent and it ``arrived`` (no redirect refused there)."""
        kind, found_on = response.meta.get(META_FEED, ("sitemap", None))
        url: str = response.meta[META_URL]
        hops: Hops = list(response.meta.get(META_FEED_HOPS) or [])
        moved = arrived and feedpolicy.moved_for_good([status for _, status in hops])
        polled_url = url if moved or not hops else hops[0][0]
        origin = self.row(hops[0][0] if hops else url)
        found_on = found_on or (origin.found_on if origin is not None else None)
        now = self.clock()
        failed = feedpolicy.poll_failed(response.status, entries, error)
        state = self._plan(polled_url, kind, response.status, failed, error)
        records = [FeedState(
            polled_url, host_of(polled_url), kind, found_on, polled_at=now,
            status=response.status, error=error,
            etag=validator(response.headers.get("ETag"), ETAG_MAX),
            last_modified=validator(response.headers.get("Last-Modified"), LAST_MODIFIED_MAX),
            entries=entries, new_entries=new, next_poll=now + state.wait,
            failures=state.failures, state=state.state, seen_at=now if moved else None,
        )]  # fmt: skip
        if moved:
            records += self.moved(hops, url, kind, found_on)
        return records

    def moved(self, hops: Hops, url: str, kind: FeedKind, found_on: str | None) -> list[FeedState]:
        """The records of the URLs a chain of permanent redirects moved to ``url``."""
        now = self.clock()
        records = []
        for old, status in hops:
            logger.info("%s %s moved to %s (HTTP %d)", kind, old, url, status)
            self.count("govsi/feeds/moved")
            records.append(FeedState(old, host_of(old), kind, found_on, polled_at=now,
                                     status=status, state="moved", moved_to=url))  # fmt: skip
        return records

    def poll_failed(self, request: Request, reason: str) -> FeedState:
        """The record of a poll with no response, on the row polled (its validators stay)."""
        kind, found_on = request.meta.get(META_FEED, ("sitemap", None))
        hops: Hops = list(request.meta.get(META_FEED_HOPS) or [])
        url: str = hops[0][0] if hops else request.meta[META_URL]
        now = self.clock()
        state = self._plan(url, kind, None, True, reason)
        return FeedState(url, host_of(url), kind, found_on, polled_at=now, error=reason,
                         next_poll=now + state.wait, failures=state.failures,
                         state=state.state)  # fmt: skip

    def _plan(
        self, url: str, kind: FeedKind, status: int | None, failed: bool, error: str | None
    ) -> feedpolicy.PollPlan:
        """The row's failures in a row, state and wait after this poll; a back-off or a
        parking logged."""
        row = self.row(url)
        plan = feedpolicy.plan_next_poll(
            self.interval(kind).total_seconds(), row.failures if row is not None else 0,
            status, failed, self.config.backoff,
        )  # fmt: skip
        why = f"HTTP {status}" if status is not None and status != 200 else (error or "failed")
        if plan.state == "gone":
            logger.warning(
                "%s %s: parked after %d failed polls in a row (the last %s); asked again in %s",
                kind, url, plan.failures, why, plan.wait,
            )  # fmt: skip
            self.count("govsi/feeds/parked")
        elif plan.failures:
            logger.info("%s %s: poll failed (%s), %d in a row; next poll in %s",
                        kind, url, why, plan.failures, plan.wait)  # fmt: skip
            self.count("govsi/feeds/backed_off")
        return plan
