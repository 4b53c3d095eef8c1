"""Pages and images out, from their release to their outcome in the store.

A page released holds back the late entries (sitemap pages) at or below its depth until
its links are known (``Frontier.page_opened`` / ``page_done``): its outcome is its item,
or its callback's failure. A page's, image's or robots.txt's stored outcome settles it
for address sharing. A page whose outcome never comes is let go after a while.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from scrapy import Spider
from twisted.python.failure import Failure

from govsi.frontier.addresses import robots_key
from govsi.frontier.queue import Frontier
from govsi.items import FetchedImage, FetchedPage, RobotsFile
from govsi.requestmeta import META_URL
from govsi.web.urls import fingerprint


class PagesOut:
    def __init__(
        self,
        frontier: Frontier,
        *,
        settled: Callable[[str], None],
        changed: Callable[[], None],
        stuck_after: float,
    ) -> None:
        self.frontier = frontier
        # A page's or image's outcome is in the store (AddressSharing.settled).
        self.settled = settled
        # A page is done: the next ready time may have changed.
        self.changed = changed
        self.stuck_after = stuck_after
        # Pages out whose links are not known yet: (host, depth, when released).
        self._open: dict[int, tuple[str, int, float]] = {}

    def opened(self, url: str, host: str, depth: int, now: float) -> None:
        """The page ``url`` of ``host`` at ``depth`` was released at ``now``."""
        self.frontier.page_opened(host, depth)
        self._open[fingerprint(url)] = (host, depth, now)

    def item_done(self, item: Any) -> None:
        """Scrapy's item_scraped, item_dropped, item_error: the item's outcome is in the
        store (pipelines run before these signals)."""
        if isinstance(item, FetchedPage | FetchedImage):
            self.settled(item.url)
        elif isinstance(item, RobotsFile):
            self.settled(robots_key(item.host))
        if isinstance(item, FetchedPage):
            self._done(item.url)

    def spider_error(self, failure: Failure, response: Any, spider: Spider) -> None:
        """Scrapy's spider_error: a callback that failed yields no record; its page is
        done all the same."""
        url = getattr(response, "meta", {}).get(META_URL)
        if url is not None:
            self._done(url)

    def expire(self, now: float) -> None:
        """Let go of pages out longer than ``stuck_after``: a page whose outcome never
        came may not hold the sitemap's pages back for ever."""
        for key, (host, depth, since) in list(self._open.items()):
            if now - since > self.stuck_after:
                self._open.pop(key)
                self.frontier.page_done(host, depth)

    def _done(self, url: str) -> None:
        opened = self._open.pop(fingerprint(url), None)
        if opened is not None:
            self.frontier.page_done(opened[0], opened[1])
            self.changed()
