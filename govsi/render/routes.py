"""A rendered page's routes: every request the page makes is answered here
(``govsi.render.fence.verdict`` decides how), and nothing reaches the network by itself."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from govsi.render.fence import DOCUMENT, FETCH, document_headers, page_headers, verdict

__all__ = ["LOADED", "Document", "PageRoutes", "Reply"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Reply:
    """An answer handed to the browser."""

    status: int
    headers: tuple[tuple[str, str], ...]
    body: bytes


# The page's own response, as the crawler fetched it.
Document = Reply
# Fetches a sub-resource for the browser (None: refused or failed).
Fetch = Callable[[str, dict[str, str]], Awaitable[Reply | None]]


class PageRoutes:
    """Installed on a page before it loads (scrapy-playwright's page init callback): its
    routes take precedence over the handler's, which then never see a request."""

    def __init__(
        self,
        url: str,
        document: Document,
        fetch: Fetch,
        in_scope: Callable[[str], bool],
        count: Callable[[str], None],
        max_url_length: int = 2000,
    ) -> None:
        self.url = url
        self.max_url_length = max_url_length
        self.document = document
        self.fetch = fetch
        self.in_scope = in_scope
        self.count = count
        self.installed = False
        self.served = False
        self.fetched = 0
        # Every request of the page passes here, so we know when its network is quiet.
        self.in_flight = 0
        self.last_activity = time.monotonic()
        # Closing popups: held until done (the loop keeps only weak references to tasks).
        self._closing: set[asyncio.Task[None]] = set()

    async def install(self, page: Any, request: Any) -> None:
        # Also on a tab that rendered another page before (the browser reuses tabs): its
        # requests and events go to this page's routes from now on.
        self.served = False
        context = page.context
        if not getattr(context, "_govsi_fenced", False):
            # Pages the page opens (popups) have no page route: the context's refuses all.
            context._govsi_fenced = True
            await context.route("**", self._refuse_popup)
        first = getattr(page, "_govsi_routes", None) is None
        page._govsi_routes = self
        if first:
            # Once per tab, to whichever page it shows now: routes added for each render
            # would pile up, and each costs the driver a message.
            await page.route("**", lambda route: page._govsi_routes.route(route))
            await page.route_web_socket("**", lambda ws: page._govsi_routes._websocket(ws))
            page.on("popup", lambda popup: page._govsi_routes._popup(popup))
            page.on("download", lambda download: page._govsi_routes._download(download))
        self.installed = True

    async def route(self, route: Any) -> None:
        self.in_flight += 1
        try:
            await self._answer(route)
        finally:
            self.in_flight -= 1
            self.last_activity = time.monotonic()

    async def settled(self, page: Any, timeout: float, quiet: float) -> None:
        """Wait until the page has loaded and none of its requests has been open for
        ``quiet`` seconds (its scripts' fetches are in); TimeoutError after ``timeout``.

        Not Playwright's "networkidle": that waits half a second whatever happens, and
        the routes know exactly when the page's network is quiet. One message to the page
        (its own load event, waited for in the page), then only our own clock.
        """
        deadline = time.monotonic() + timeout
        try:
            await asyncio.wait_for(page.evaluate(LOADED), timeout)
        except TimeoutError:
            raise TimeoutError(f"the page did not load within {timeout:.0f} s") from None
        while True:
            now = time.monotonic()
            left = quiet - (now - self.last_activity)
            if self.in_flight == 0 and left <= 0:
                return
            if now > deadline:
                raise TimeoutError(f"the page did not settle within {timeout:.0f} s")
            await asyncio.sleep(max(left, 0.02))

    async def _answer(self, route: Any) -> None:
        request = route.request
        url: str = request.url
        if len(url) > self.max_url_length:
            # Before any other look at it: scope, robots.txt and the queue cost with its length.
            self.count("refused/url_too_long")
            with contextlib.suppress(Exception):
                await route.abort(_refusal_code(request))
            return
        decided = verdict(
            request.resource_type,
            request.method,
            url,
            navigation=request.is_navigation_request(),
            document_url=self.url,
            document_served=self.served,
            in_scope=url.startswith(("http://", "https://")) and self.in_scope(url),
        )
        try:
            if decided == DOCUMENT:
                self.served = True
                self.count("document")
                page = self.document
                headers = page_headers(page.headers)
                await route.fulfill(status=page.status, headers=headers, body=page.body)
                return
            if decided == FETCH:
                reply = await self.fetch(url, _wanted_headers(request.headers))
                if reply is not None:
                    self.fetched += 1
                    headers = document_headers(reply.headers)
                    await route.fulfill(status=reply.status, headers=headers, body=reply.body)
                    return
                await route.abort("failed")
                return
            self.count(f"refused/{decided}")
            await route.abort(_refusal_code(request))
        except Exception as e:  # the page closed or crashed meanwhile: nothing to answer
            logger.debug("route of %s for %s not answered: %s", url, self.url, e)

    async def _refuse_popup(self, route: Any) -> None:
        self.count("refused/popup")
        with contextlib.suppress(Exception):
            await route.abort("blockedbyclient")

    async def _websocket(self, ws: Any) -> None:
        # Never connected to the server: closed as soon as the page opens it.
        self.count("refused/websocket")
        with contextlib.suppress(Exception):
            await ws.close()

    def _download(self, download: Any) -> None:
        # The context accepts no downloads: nothing is written, the count says it was tried.
        self.count("refused/download")

    def _popup(self, popup: Any) -> None:
        self.count("popups_closed")
        closing = asyncio.ensure_future(_close_quietly(popup))
        self._closing.add(closing)
        closing.add_done_callback(self._closing.discard)


async def _close_quietly(page: Any) -> None:
    with contextlib.suppress(Exception):
        await page.close(run_before_unload=False)


# Resolves when the document is complete, at once when it is past. Not Playwright's load
# state: a script's navigation away, refused, leaves the driver waiting for a load of its
# own that never comes. Not the load event alone: a navigation begun before it stops the
# document's loading (its pending pictures and frames are cancelled), and Chromium then
# makes the document complete without ever firing load. Not wait_for_function: that polls
# on every animation frame, and each frame makes a headless Chromium lay the loading page
# out and paint it again.
LOADED = """() => document.readyState === 'complete' || new Promise(done => {
  addEventListener('load', () => done(true), {once: true});
  document.addEventListener('readystatechange', () => {
    if (document.readyState === 'complete') done(true);
  });
})"""


def _refusal_code(request: Any) -> str:
    # The page's own frame navigating elsewhere, refused as "blocked", would show Chromium's
    # error page in place of the document; "aborted" leaves the page as it was. A frame's
    # refusal must end its load ("blocked"), or the page's load event never comes.
    main = request.is_navigation_request() and request.frame.parent_frame is None
    return "aborted" if main else "blockedbyclient"


def _wanted_headers(headers: dict[str, str]) -> dict[str, str]:
    # What a server may vary its answer on; the rest (user agent, cookies) is the crawler's.
    return {k: v for k, v in headers.items() if k.lower() in ("accept", "x-requested-with")}
