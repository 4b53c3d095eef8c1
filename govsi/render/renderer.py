"""The Renderer extension: renders pages the spider hands it, in bounded memory, without
holding the crawl.

The spider has already fetched the page; ``render`` gives the browser that response as
the page's document (``govsi.render.routes``), so the page is downloaded once. Up to
``RENDER_MAX_PAGES`` render at once; up to ``RENDER_QUEUE_PAGES`` more wait for a turn,
their bodies of at most ``RENDER_QUEUE_BYTES`` together (a page that would go over is not
rendered: ``admits``). When ``RENDER_QUEUE_HOST_PAGES`` of them are one host's, the
scheduler holds back that host's pages until they drain, and the other hosts' pages go on:
one host whose every page needs a browser does not hold the crawl. When the whole queue is
full (``saturated``), every host's pages wait (robots.txt, sitemaps and the sub-resources
renders wait for still go out): the crawl's memory stays bounded when the browser cannot
keep up. The scheduler binds the policy sub-resources must pass and how to hold pages
back and let them go (``bind``); this is the one interface between them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from scrapy import Request, signals
from scrapy.crawler import Crawler
from scrapy.statscollectors import StatsCollector
from twisted.internet import task

from govsi.render.browser import Browser, BrowserUnavailable
from govsi.render.config import RenderConfig
from govsi.render.decide import RenderMode
from govsi.render.httpcache import ResourceCache
from govsi.render.resources import PageRequests, ResourceCancel, ResourceFetcher, ResourcePolicy
from govsi.render.routes import Document, PageRoutes
from govsi.web.urls import host_of, in_scope

__all__ = ["SNAPSHOT", "QueueFull", "RenderFailed", "RenderOff", "Rendered", "Renderer"]

logger = logging.getLogger(__name__)


class RenderFailed(Exception):
    """The page could not be rendered; the plain version stands."""


class QueueFull(RenderFailed):
    """No room for the page among those waiting (RENDER_QUEUE_BYTES): it is not rendered,
    through no fault of its own."""


class RenderOff(RenderFailed):
    """Rendering is off for the crawl (the browser cannot run sandboxed here, said once):
    the page is stored as fetched, nothing failed on its side."""


@dataclass(frozen=True)
class Rendered:
    html: str
    # Sub-resources the page's scripts asked for and got (from the cache or fetched).
    resources: int


class Refused(Exception):
    """The settled page is not one we may store (too large, or not the page's own)."""


# The page's address, its DOM's size, and the DOM itself when within ``max`` characters
# (serialized as Playwright's page.content() does), in one message to the page. It runs in
# the page's own world, where its scripts could replace what it calls: what they could
# make it return, they could as well have written into the DOM; anything but a string is
# refused, and a script that never returns meets the render's time bound.
SNAPSHOT = """max => {
  let dom = document.doctype ? new XMLSerializer().serializeToString(document.doctype) : '';
  if (document.documentElement) dom += document.documentElement.outerHTML;
  return [location.href, dom.length, dom.length <= max ? dom : null];
}"""


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}".lower()


class Renderer:
    def __init__(
        self,
        stats: StatsCollector,
        crawl: Callable[[Request], None],
        *,
        mode: RenderMode,
        suffixes: list[str],
        max_pages: int,
        queue_pages: int,
        queue_bytes: int,
        host_queue_pages: int,
        max_dom: int,
        timeout: float,
        idle_close: float,
        settle_quiet: float,
        cache: ResourceCache,
        browser: Browser | None,
        max_requests: int,
        max_url_length: int,
    ) -> None:
        self.stats = stats
        # Hands a sub-resource request to the engine, which passes it to the scheduler.
        self._crawl = crawl
        self.mode = mode
        self.suffixes = suffixes
        self.max_pages = max(1, max_pages)
        self.queue_pages = max(1, queue_pages)
        # 0: no bound in bytes (the pages' bound alone).
        self.queue_bytes = max(0, queue_bytes)
        self.host_queue_pages = max(1, host_queue_pages)
        self.max_dom = max_dom
        self.timeout = timeout
        self.idle_close = idle_close
        self.settle_quiet = settle_quiet
        self.browser = browser
        self.max_requests = max(0, max_requests)
        self.max_url_length = max_url_length
        self.fetcher = ResourceFetcher(
            cache,
            self._schedule,
            self._in_scope,
            self._count,
            stale_after=3 * timeout,
            max_url_length=max_url_length,
        )
        self._slots: asyncio.Semaphore | None = None
        self.waiting = 0
        self.waiting_bytes = 0
        self.waiting_by_host: Counter[str] = Counter()
        self.active = 0
        self._hold: Callable[[str | None, bool], None] = lambda host, held: None
        self._idle_loop: task.LoopingCall | None = None

    @property
    def off(self) -> bool:
        """Rendering is off: RENDER_JS=off, or switched off since (the browser could not
        start, or not in its sandbox). Asked afresh after every wait: it may be switched
        off meanwhile."""
        return self.mode == "off"

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Renderer:
        c = RenderConfig.from_settings(crawler.settings)
        browser = None
        if c.mode != "off" and c.chromium is not None:
            browser = Browser(
                crawler,
                chromium=c.chromium,
                user=c.browser_user,
                extra_args=list(c.browser_args),
                timeout=c.timeout,
                context_pages=c.context_pages,
                idle_close=c.idle_close,
                js_heap_mb=c.js_heap_mb,
                memory_mb=c.memory_mb,
            )
        renderer = cls(
            crawler.stats,
            lambda request: crawler.engine.crawl(request),
            mode=c.mode,
            suffixes=list(c.scope.suffixes),
            max_pages=c.max_pages,
            queue_pages=c.queue_pages,
            queue_bytes=c.queue_bytes,
            host_queue_pages=c.host_queue_pages,
            max_dom=c.max_dom,
            timeout=c.timeout,
            idle_close=c.idle_close,
            settle_quiet=c.settle_quiet,
            cache=ResourceCache(
                max_bytes=c.cache_max_bytes,
                max_entry_bytes=c.max_dom,
                heuristic_ttl=c.cache_ttl,
            ),
            browser=browser,
            max_requests=c.max_requests,
            max_url_length=c.scope.max_url_length,
        )
        crawler.signals.connect(renderer._spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(renderer._spider_closed, signal=signals.spider_closed)
        return renderer

    # -- the scheduler's side -------------------------------------------------------------
    def bind(
        self,
        policy: ResourcePolicy,
        hold: Callable[[str | None, bool], None],
        cancel: ResourceCancel,
    ) -> None:
        """The scheduler says which sub-resources may go out, how to hold a host's pages
        back (``hold(host, True)``; every host's: ``hold(None, True)``) and let them go
        (``False``), and how to take a render's queued requests out when it ends
        (``cancel``). Holds follow the queue: each is said once when it starts and ends."""
        self.fetcher.policy = policy
        self.fetcher.cancel = cancel
        self._hold = hold

    def saturated(self) -> bool:
        """Pages waiting for the browser fill the queue: hold pages back for now."""
        return self.waiting >= self.queue_pages

    def admits(self, size: int) -> bool:
        """Whether a page of ``size`` bytes may wait on the browser: within
        ``RENDER_QUEUE_BYTES`` with the pages waiting already, or the first to wait."""
        return (
            not self.waiting
            or not self.queue_bytes
            or self.waiting_bytes + size <= self.queue_bytes
        )

    # -- rendering ------------------------------------------------------------------------
    async def render(self, url: str, document: Document) -> Rendered:
        """``url``'s DOM after its scripts ran, the document being the response the crawler
        fetched. Raises RenderFailed (RenderOff when rendering is off); the caller keeps the
        plain page then."""
        if self.browser is None:
            raise RenderFailed("no browser")
        if self.off:
            raise RenderOff("rendering is off")
        if self._slots is None:
            self._slots = asyncio.Semaphore(self.max_pages)
            self._idle_loop = task.LoopingCall(self._close_if_idle)
            self._idle_loop.start(max(1.0, min(10.0, self.idle_close / 4)), now=False)
        if self._slots.locked():
            # Raises QueueFull when there is no room for it among the waiting pages.
            with self.waiting_for(url, len(document.body)):
                await self._slots.acquire()
        else:
            await self._slots.acquire()  # a turn now: nothing to wait for
        if self.off:  # switched off while the page waited
            self._slots.release()
            raise RenderOff("rendering is off")
        self.active += 1
        requests = PageRequests(url, self.max_requests)
        routes = PageRoutes(
            url,
            document,
            self._fetch_for(requests),
            self._in_scope,
            self._count,
            max_url_length=self.max_url_length,
        )
        began = time.monotonic()
        try:
            response = await self.browser.render(url, routes.install, self._steps(routes, url))
        except Refused as e:
            raise RenderFailed(str(e)) from None
        except BrowserUnavailable as e:
            self.mode = "off"
            raise RenderOff(f"rendering is off: {e}") from None
        except Exception as e:
            first = (str(e).strip().splitlines() or ["no message"])[0][:300]
            raise RenderFailed(f"{type(e).__name__}: {first}") from e
        finally:
            # Settled, timed out or failed: what it still waits for in the queue goes.
            self.fetcher.end(requests)
            self.active -= 1
            self._slots.release()
            # Browser time per page (the wait for a slot not included): the cost of a render.
            spent = round(time.monotonic() - began, 3)
            self.stats.inc_value("govsi/render/browser_seconds", spent)  # type: ignore[arg-type]
        if not routes.installed or not routes.served:
            # Our routes never took the page: what the browser shows is not our document.
            raise RenderFailed("the browser did not load the fetched document")
        self.stats.inc_value("govsi/render/pages")
        return Rendered(response.text, routes.fetched)

    @contextlib.contextmanager
    def waiting_for(self, url: str, size: int) -> Iterator[None]:
        """``url``'s page, of ``size`` bytes as fetched, waits on the browser while in this
        block: for a turn to render, or for its script signature's samples. Either way it
        counts towards the queue's bounds and holds, so pages waiting on the browser stay
        bounded in number (while every host is held, the sub-resources the samples need
        still go out) and in bytes: QueueFull, before the block, when it does not fit
        (``admits``)."""
        if not self.admits(size):
            self.stats.inc_value("govsi/render/over_queue_bytes")
            raise QueueFull(
                f"{self.waiting_bytes} bytes of pages already wait for the browser "
                f"(RENDER_QUEUE_BYTES {self.queue_bytes})"
            )
        host = host_of(url)
        self._queued(host, +1, size)
        try:
            yield
        finally:
            self._queued(host, -1, size)

    def _queued(self, host: str, step: int, size: int) -> None:
        """One more (or one fewer) of ``host``'s pages, of ``size`` bytes, waits on the
        browser; holds and releases follow the counts."""
        self.waiting += step
        self.waiting_bytes += step * size
        count = self.waiting_by_host[host] + step
        if count:
            self.waiting_by_host[host] = count
        else:
            del self.waiting_by_host[host]
        if step > 0:
            # The page that fills a bound starts its hold.
            self.stats.max_value("govsi/render/queue_max", self.waiting)
            self.stats.max_value("govsi/render/queue_max_bytes", self.waiting_bytes)
            if count == self.host_queue_pages:
                self.stats.inc_value("govsi/render/host_held")
                self._hold(host, True)
            if self.waiting == self.queue_pages:
                self._hold(None, True)
        else:
            # The page that leaves one below it ends it.
            if count == self.host_queue_pages - 1:
                self._hold(host, False)
            if self.waiting == self.queue_pages - 1:
                self._hold(None, False)

    def _fetch_for(self, page: PageRequests) -> Any:
        async def fetch(url: str, headers: dict[str, str]) -> Any:
            return await self.fetcher.fetch(url, headers, referer=page.url, page=page)

        return fetch

    def _steps(self, routes: PageRoutes, url: str) -> list[Any]:
        origin = _origin(url)

        async def settle(page: Any) -> None:
            await routes.settled(page, self.timeout, self.settle_quiet)

        async def check(page: Any) -> str:
            return await self._check(page, origin)

        return [settle, check]

    async def _check(self, page: Any, origin: str) -> str:
        """The settled page's DOM. It must still be our document (same origin:
        history.pushState may change its path) and no larger than DOWNLOAD_MAXSIZE; a larger
        one never leaves the page."""
        where, size, dom = await page.evaluate(SNAPSHOT, self.max_dom)
        if _origin(str(where)) != origin:
            self.stats.inc_value("govsi/render/navigated_away")
            raise Refused(f"the page became another document ({str(where)[:200]})")
        if size > self.max_dom or not isinstance(dom, str):
            self.stats.inc_value("govsi/render/too_large")
            raise Refused(f"rendered DOM larger than DOWNLOAD_MAXSIZE ({self.max_dom} bytes)")
        return dom

    def _schedule(self, request: Request) -> None:
        self._crawl(request)

    def _in_scope(self, url: str) -> bool:
        return in_scope(url, self.suffixes)

    def _count(self, what: str) -> None:
        self.stats.inc_value(f"govsi/render/browser/{what}")

    async def _close_if_idle_async(self) -> None:
        if self.browser is not None:
            await self.browser.close_if_idle()

    def _close_if_idle(self) -> Any:
        from scrapy.utils.defer import deferred_from_coro

        return deferred_from_coro(self._close_if_idle_async())

    def _spider_opened(self) -> None:
        if self.browser is not None and not self.browser.check_sandbox():
            self.mode = "off"

    async def _spider_closed(self) -> None:
        if self._idle_loop is not None and self._idle_loop.running:
            self._idle_loop.stop()
        pages = self.stats.get_value("govsi/render/pages", 0)
        if pages:
            self.stats.set_value(
                "govsi/render/resource_requests_per_page", round(self.fetcher.requests / pages, 3)
            )
        if self.browser is not None:
            await self.browser.shut()
