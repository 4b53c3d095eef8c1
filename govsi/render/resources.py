"""The sub-resources rendered pages need, fetched by the crawler and cached for the crawl.

A script or an XHR a page asks for is a request like any other: it goes through the
frontier (robots.txt, the host's and the address's delays, and the address guard at
connect time) as a Scrapy request of kind ``resource``, ahead of the host's pages so a
render is not kept waiting behind them. Answers are kept in a ``ResourceCache`` by URL
under HTTP's caching rules, so a site template's scripts cost one request per host for
the crawl, not one per page; several renders asking for one URL at once share a request.
Redirects are followed here, each hop under the same rules, so the browser never follows
one itself.

Each render's requests are bounded (``PageRequests``): a URL longer than MAX_URL_LENGTH is
refused before any other check, at most ``limit`` requests per render go past it, and when
the render ends the requests still queued for it alone are cancelled in the frontier
(``ResourceCancel``, which the scheduler binds), so a page that asks for thousands of URLs
holds neither the reactor nor its host's pages.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import Any

from scrapy import Request
from scrapy.http import Response
from twisted.python.failure import Failure

from govsi.render.httpcache import ResourceCache, same_representation
from govsi.render.routes import Reply
from govsi.requestmeta import KIND_RESOURCE, META_KIND, META_RESOURCE, META_STALE
from govsi.web.urls import resolve

__all__ = ["KIND_RESOURCE", "PageRequests", "ResourceCancel", "ResourceFetcher", "ResourcePolicy"]

logger = logging.getLogger(__name__)

MAX_REDIRECTS = 5
# Why a request the browser wants may not go out now (None: it may): the scheduler's
# robots.txt and host knowledge.
ResourcePolicy = Callable[[str], str | None]
# Takes requests that have not left yet out of the queue, and says which it took out (one
# already sent cannot be called back: its answer fills the cache).
ResourceCancel = Callable[[Collection[Request]], Collection[Request]]


@dataclass(eq=False)
class PageRequests:
    """One render's sub-resource requests: how many it made (at most ``limit``), the URLs
    it waits for, and whether it is over (then it may make none)."""

    url: str
    limit: int
    made: int = 0
    over: bool = False
    waiting: set[str] = field(default_factory=set)


@dataclass(eq=False)
class _Pending:
    since: float
    future: asyncio.Future[Reply | None]
    request: Request
    # The renders waiting for it; when the last one ends, it is cancelled.
    waiters: set[PageRequests] = field(default_factory=set)


def _headers(response: Response) -> tuple[tuple[str, str], ...]:
    return tuple(
        (k.decode("latin-1"), v.decode("latin-1"))
        for k, values in response.headers.items()
        for v in values
    )


def _unconditional(request: Request) -> Request:
    headers = request.headers.copy()
    for name in ("If-None-Match", "If-Modified-Since"):
        headers.pop(name, None)
    return request.replace(headers=headers, meta={**request.meta, META_STALE: None})


class ResourceFetcher:
    def __init__(
        self,
        cache: ResourceCache,
        schedule: Callable[[Request], None],
        in_scope: Callable[[str], bool],
        count: Callable[[str], None],
        stale_after: float = 180.0,
        max_url_length: int = 2000,
    ) -> None:
        self.cache = cache
        # A request unanswered this long (lost with a host given up on) is asked again.
        self.stale_after = stale_after
        self.schedule = schedule
        self.in_scope = in_scope
        self.count = count
        self.max_url_length = max_url_length
        self.policy: ResourcePolicy | None = None
        self.cancel: ResourceCancel | None = None
        self._pending: dict[str, _Pending] = {}
        self.requests = 0

    async def fetch(
        self,
        url: str,
        headers: dict[str, str],
        referer: str = "",
        page: PageRequests | None = None,
    ) -> Reply | None:
        """The answer for ``url``: from the cache, or fetched (following redirects); None
        when refused or failed. ``page``: the render asking, whose bounds apply."""
        for _ in range(MAX_REDIRECTS + 1):
            reply = await self._one(url, headers, referer, page)
            if reply is None or not (300 <= reply.status < 400):
                return reply
            location = next((v for k, v in reply.headers if k.lower() == "location"), None)
            target = resolve(url, location) if location else None
            if target is None:
                return reply
            if not self.in_scope(target):
                self.count("refused/redirect_out_of_scope")
                return None
            url = target
        self.count("refused/too_many_redirects")
        return None

    def _bounded(self, url: str, page: PageRequests | None) -> str | None:
        """Why ``url`` is refused before anything else looks at it (None: it is not)."""
        if len(url) > self.max_url_length:
            return "url_too_long"  # first: every later check costs with its length
        if page is None:
            return None
        if page.over:
            return "render_over"
        if page.made >= page.limit:
            if page.made == page.limit:
                logger.info(
                    "%s: more than %d sub-resource requests in one render; the rest refused",
                    page.url[:300],
                    page.limit,
                )
                page.made += 1  # said once
            return "too_many_requests"
        page.made += 1
        return None

    async def _one(
        self, url: str, headers: dict[str, str], referer: str, page: PageRequests | None
    ) -> Reply | None:
        refusal = self._bounded(url, page)
        if refusal is None:
            refusal = self.policy(url) if self.policy is not None else "no_policy"
        if refusal is not None:
            self.count(f"refused/{refusal}")
            return None
        state, stored = self.cache.lookup(url, time.time())
        if state == "hit" and stored is not None:
            self.count("cache_hits")
            return Reply(stored.status, stored.headers, stored.body)
        pending = self._pending.get(url)
        if pending is not None and time.monotonic() - pending.since < self.stale_after:
            self.count("shared")
            return await self._wait(pending, url, page)
        conditional = self.cache.conditional_headers(stored) if stored is not None else {}
        request = Request(
            url,
            headers={**headers, **conditional, **({"Referer": referer} if referer else {})},
            callback=self._answered,
            errback=self._failed,
            dont_filter=True,
            meta={
                META_KIND: KIND_RESOURCE,
                META_RESOURCE: url,
                "dont_redirect": True,
                # What a 304 confirms (the cache may have dropped it by then).
                META_STALE: stored if state == "stale" else None,
            },
        )
        future: asyncio.Future[Reply | None] = asyncio.get_running_loop().create_future()
        pending = self._pending[url] = _Pending(time.monotonic(), future, request)
        self.requests += 1
        self.count("requests")
        self.schedule(request)
        return await self._wait(pending, url, page)

    @staticmethod
    async def _wait(pending: _Pending, url: str, page: PageRequests | None) -> Reply | None:
        if page is not None:
            pending.waiters.add(page)
            page.waiting.add(url)
        try:
            # Shielded: a render that gives up must not cancel what other renders wait for.
            return await asyncio.shield(pending.future)
        finally:
            if page is not None:
                page.waiting.discard(url)
                pending.waiters.discard(page)

    def end(self, page: PageRequests) -> int:
        """``page``'s render is over: it may make no more requests, and those still queued
        that no other render waits for are taken out of the queue (answered None, so its
        routes end). Returns how many were cancelled."""
        page.over = True
        orphans: dict[str, _Pending] = {}
        for url in page.waiting:
            pending = self._pending.get(url)
            if pending is not None:
                pending.waiters.discard(page)
                if not pending.waiters:
                    orphans[url] = pending
        page.waiting.clear()
        if not orphans or self.cancel is None:
            return 0
        url_of = {id(p.request): url for url, p in orphans.items()}
        cancelled = self.cancel([p.request for p in orphans.values()])
        # Never answered now: settled here, so nothing waits for them. What had left
        # already is answered as usual and fills the cache.
        for request in cancelled:
            self.count("cancelled")
            self._settle(url_of[id(request)], None)
        return len(cancelled)

    def _settle(self, url: str, reply: Reply | None) -> None:
        pending = self._pending.pop(url, None)
        if pending is not None and not pending.future.done():
            pending.future.set_result(reply)

    def _answered(self, response: Response) -> list[Any]:
        url: str = response.meta[META_RESOURCE]
        now = time.time()
        headers = _headers(response)
        stale = response.meta.get(META_STALE)
        if response.status == 304 and stale is not None:
            if not same_representation(stale, headers):
                # The 304 confirms a body other than the one kept: only a full answer
                # can say what the page's script gets.
                self.count("revalidation_mismatch")
                self.cache.revalidated(url, headers, now)  # drops the entry
                assert response.request is not None  # a downloaded response has its request
                again = _unconditional(response.request)
                if url in self._pending:
                    self._pending[url].request = again  # the one to cancel now
                self.schedule(again)
                return []
            self.count("revalidated")
            fresh = self.cache.revalidated(url, headers, now) or stale
            self._settle(url, Reply(fresh.status, fresh.headers, fresh.body))
            return []
        self.cache.store(url, response.status, headers, response.body, now)
        self._settle(url, Reply(response.status, headers, response.body))
        return []

    def _failed(self, failure: Failure) -> list[Any]:
        request = failure.request  # type: ignore[attr-defined]
        url: str = request.meta[META_RESOURCE]
        self.count("failed")
        logger.info("resource %s for a rendered page failed: %s", url, failure.getErrorMessage())
        self._settle(url, None)
        return []
