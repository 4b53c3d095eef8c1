"""The sub-resources rendered pages need, fetched by the crawler and cached for the crawl.

A script or an XHR a page asks for is a request like any other: it goes through the
frontier (robots.txt, the host's and the address's delays, and the address guard at
connect time) as a Scrapy request of kind ``resource``, ahead of the host's pages so a
render is not kept waiting behind them. Answers are kept in a ``ResourceCache`` by URL
under HTTP's caching rules, so a site template's scripts cost one request per host for
the crawl, not one per page; several renders asking for one URL at once share a request.
Redirects are followed here, each hop under the same rules, so the browser never follows
one itself.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any

from scrapy import Request
from scrapy.http import Response
from twisted.python.failure import Failure

from govsi.render.httpcache import ResourceCache, same_representation
from govsi.render.routes import Reply
from govsi.requestmeta import KIND_RESOURCE, META_KIND, META_RESOURCE, META_STALE
from govsi.web.urls import resolve

__all__ = ["KIND_RESOURCE", "ResourceFetcher", "ResourcePolicy"]

logger = logging.getLogger(__name__)

MAX_REDIRECTS = 5
# Why a request the browser wants may not go out now (None: it may): the scheduler's
# robots.txt and host knowledge.
ResourcePolicy = Callable[[str], str | None]


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
    ) -> None:
        self.cache = cache
        # A request unanswered this long (lost with a host given up on) is asked again.
        self.stale_after = stale_after
        self.schedule = schedule
        self.in_scope = in_scope
        self.count = count
        self.policy: ResourcePolicy | None = None
        self._pending: dict[str, tuple[float, asyncio.Future[Reply | None]]] = {}
        self.requests = 0

    async def fetch(self, url: str, headers: dict[str, str], referer: str = "") -> Reply | None:
        """The answer for ``url``: from the cache, or fetched (following redirects)."""
        for _ in range(MAX_REDIRECTS + 1):
            reply = await self._one(url, headers, referer)
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

    async def _one(self, url: str, headers: dict[str, str], referer: str) -> Reply | None:
        refusal = self.policy(url) if self.policy is not None else "no_policy"
        if refusal is not None:
            self.count(f"refused/{refusal}")
            return None
        state, stored = self.cache.lookup(url, time.time())
        if state == "hit" and stored is not None:
            self.count("cache_hits")
            return Reply(stored.status, stored.headers, stored.body)
        pending = self._pending.get(url)
        if pending is not None and time.monotonic() - pending[0] < self.stale_after:
            self.count("shared")
            return await asyncio.shield(pending[1])
        future: asyncio.Future[Reply | None] = asyncio.get_running_loop().create_future()
        self._pending[url] = (time.monotonic(), future)
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
        self.requests += 1
        self.count("requests")
        self.schedule(request)
        # Shielded: a render that gives up must not cancel what other renders wait for.
        return await asyncio.shield(future)

    def _settle(self, url: str, reply: Reply | None) -> None:
        pending = self._pending.pop(url, None)
        if pending is not None and not pending[1].done():
            pending[1].set_result(reply)

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
                self.schedule(_unconditional(response.request))
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
