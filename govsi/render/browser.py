"""The crawl's one browser: scrapy-playwright's Playwright handler, driven directly.

scrapy-playwright is used as the page engine (contexts, pages, navigation, the DOM), but
not as a download handler: a page is never downloaded by the browser (``govsi.render.
fence``), so rendering is not a request in Scrapy's downloader and holds no host's turn.

- Lean: Playwright is imported, and its driver and Chromium started, when the first page
  needs rendering; one driver for the crawl (a download handler has one per scheme); after
  ``idle_close`` seconds with nothing to render both are closed, and started again when
  a page needs them.
- Contexts rotate every ``context_pages`` pages (a context keeps caches and state as long
  as it lives, and the browser's memory creeps up without this).
- A page (a tab) that rendered well renders the next one: opening and closing a tab cost
  Chromium about as much CPU as the render itself. One that failed, timed out or was
  refused is closed, never reused.
- Sandboxed (``govsi.render.sandbox``), or not at all: when the sandbox cannot start (no
  account to run as under root, no user namespaces) the browser is marked unavailable
  with one log line, ``BrowserUnavailable`` is raised for every page from then on, and
  the crawl goes on without rendering. It is never launched with ``--no-sandbox``.
- Bounded in memory (``govsi.render.limits``): a V8 heap cap per page, and the browser's
  process tree in a memory cgroup where one can be made; one log line says which applies.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
import socket
import time
from typing import Any

from scrapy import Request
from scrapy.crawler import Crawler
from scrapy.http import Response

from govsi.render.engine import PageHook, PageStep, handler_class, launch_error, launch_options
from govsi.render.limits import MemoryLimit, browser_cgroup, remove_cgroup
from govsi.render.sandbox import Launch, sandbox_problem, sandboxed_launch
from govsi.requestmeta import META_SETTLE

__all__ = ["Browser", "BrowserUnavailable", "ContextRotation"]

logger = logging.getLogger(__name__)

# Options of every context: no service workers (they would serve and fetch outside the
# routing), no downloads.
CONTEXT_KWARGS = {"service_workers": "block", "accept_downloads": False}
# Seconds a page gets to close before it is left to its context's closing.
CLOSE_TIMEOUT = 5.0


class BrowserUnavailable(Exception):
    """Chromium cannot run sandboxed here: rendering is off for the rest of the crawl."""


class ContextRotation:
    """Which browser context each rendered page goes to, and which contexts may be closed.

    Every ``per_context`` pages the next ones go to a new generation; a retired generation
    is closed once none of its pages is in flight any more. Every page is reported done
    (``Browser`` releases it whatever happened), so none is closed under a page: with more
    pages at once than ``per_context``, several retired generations may wait their turn.
    """

    def __init__(self, per_context: int) -> None:
        self.per_context = max(1, per_context)
        self.generation = 0
        self.issued = 0
        self.in_flight: dict[int, int] = {}
        self.contexts: dict[int, Any] = {}

    def assign(self) -> int:
        if self.issued >= self.per_context:
            self.generation += 1
            self.issued = 0
        self.issued += 1
        self.in_flight[self.generation] = self.in_flight.get(self.generation, 0) + 1
        return self.generation

    def done(self, generation: int, context: Any | None) -> list[Any]:
        """A page of ``generation`` is over; the contexts to close now."""
        left = self.in_flight.get(generation, 0) - 1
        if left > 0:
            self.in_flight[generation] = left
        else:
            self.in_flight.pop(generation, None)
        if context is not None:
            self.contexts[generation] = context  # a browser restart makes a new one
        closing = []
        for g in sorted(self.contexts):
            if g < self.generation and g not in self.in_flight:
                closing.append(self.contexts.pop(g))
        return closing


class Browser:
    def __init__(
        self,
        crawler: Crawler,
        *,
        chromium: str,
        user: str,
        extra_args: list[str],
        timeout: float,
        context_pages: int,
        idle_close: float,
        js_heap_mb: int = 0,
        memory_mb: int = 0,
    ) -> None:
        self.crawler = crawler
        self.js_heap_mb = js_heap_mb
        self.memory_mb = memory_mb
        self.memory: MemoryLimit | None = None
        self.stats = crawler.stats
        self.chromium = chromium
        self.user = user
        self.extra_args = extra_args
        self.timeout = timeout
        self.idle_close = idle_close
        self.rotation = ContextRotation(context_pages)
        self._engine: Any = None
        self._starting: asyncio.Lock | None = None
        self._launch: Launch | None = None
        # Why the browser cannot run (sandboxed) here; set once, never cleared.
        self.unavailable: str | None = None
        self._in_use = 0
        # Tabs that rendered well, by context generation, ready for the next page.
        self._idle_pages: list[tuple[int, Any]] = []
        self.idle_since = time.monotonic()
        # Bound, never listened on: every connection to it is refused (fence.chromium_args).
        self._refuser = socket.socket()
        self._refuser.bind(("127.0.0.1", 0))

    @property
    def running(self) -> bool:
        return self._engine is not None

    def _launch_options(self, launch: Launch) -> dict[str, Any]:
        host, port = self._refuser.getsockname()
        return launch_options(launch.executable, f"{host}:{port}", self.extra_args, self.js_heap_mb)

    async def _engine_for(self, launch: Launch) -> Any:
        engine = handler_class()(self.crawler)
        # The handler reads its launch options from the settings; the executable (a
        # sandbox wrapper) and the refusing proxy are only known now.
        engine.config.launch_options = self._launch_options(launch)
        await engine.start()
        return engine

    async def _ensure(self) -> Any:
        if self._engine is not None:
            return self._engine
        if self._starting is None:
            self._starting = asyncio.Lock()
        async with self._starting:
            if self.unavailable is not None:
                raise BrowserUnavailable(self.unavailable)
            if self._engine is None:
                if self._launch is None:
                    self.memory = self._limit_memory()
                    launch = sandboxed_launch(self.chromium, self.user, cgroup=self.memory.cgroup)
                    if not launch.sandbox:
                        remove_cgroup(self.memory)
                        self.disable(launch.problem or "no sandbox")
                        raise BrowserUnavailable(self.unavailable)
                    self._launch = launch
                self._engine = await self._engine_for(self._launch)
                self.stats.inc_value("govsi/render/browser/starts")
                self.stats.set_value("govsi/render/browser/sandbox", 1)
        return self._engine

    def _limit_memory(self) -> MemoryLimit:
        """The browser's process-tree memory limit, said once. None possible is not a
        reason to stop: the V8 cap still bounds every page's scripts (docs/rendering.md)."""
        limit = browser_cgroup(self.memory_mb, f"govsi-browser-{os.getpid()}")
        heap = f"{self.js_heap_mb} MiB" if self.js_heap_mb > 0 else "none"
        if limit.cgroup is not None:
            self.stats.set_value("govsi/render/browser/memory_limit_mb", self.memory_mb)
            logger.info("browser memory: %s; V8 heap per page: %s", limit.said, heap)
        else:
            self.stats.set_value("govsi/render/browser/memory_limit_mb", 0)
            logger.warning(
                "browser memory: no process-tree limit can apply (%s); only the V8 heap cap "
                "per page does (RENDER_JS_HEAP_MB: %s)",
                limit.said,
                heap,
            )
        return limit

    def check_sandbox(self) -> bool:
        """At the start of the crawl: whether the sandbox can start here; when it cannot,
        the browser is unavailable (said once) before any page needs it."""
        problem = sandbox_problem(self.user)
        if problem is not None:
            self.disable(problem)
        return self.unavailable is None

    def disable(self, why: str) -> None:
        """No browser for the rest of the crawl, said once: it cannot run sandboxed."""
        if self.unavailable is not None:
            return
        self.unavailable = why
        self.stats.set_value("govsi/render/browser/sandbox", 0)
        self.stats.set_value("govsi/render/disabled", 1)
        logger.error(
            "Chromium cannot run sandboxed here (%s): rendering is OFF for this crawl and "
            "pages are stored as fetched. It is never run without its sandbox; enable user "
            "namespaces or RENDER_BROWSER_USER (docs/rendering.md, 'Letting Chromium run "
            "sandboxed').",
            why,
        )

    async def render(self, url: str, install: PageHook, steps: list[PageStep]) -> Response:
        """The page at ``url`` after its scripts ran and the network went quiet; ``install``
        sets up its routes before it loads, ``steps`` wait for it to settle and may refuse
        what it became."""
        self._in_use += 1
        try:
            try:
                return await self._render_once(url, install, steps)
            except Exception as e:
                if not self._first_launch_failed(e):
                    raise
                # The sandbox could not start here: no browser, never one without it.
                self.disable(f"it failed to start sandboxed: {launch_error(e)}")
                await self.close()
                raise BrowserUnavailable(self.unavailable) from e
        finally:
            self._in_use -= 1
            self.idle_since = time.monotonic()

    def _first_launch_failed(self, error: Exception) -> bool:
        """Whether Chromium itself failed to start (never a page's failure: a passing error
        must not turn rendering off)."""
        engine = self._engine
        return (
            engine is not None
            and "BrowserType.launch" in str(error)
            and self.stats.get_value("playwright/browser_count") is None
            and not hasattr(engine, "browser")
        )

    async def _render_once(self, url: str, install: PageHook, steps: list[PageStep]) -> Response:
        engine = await self._ensure()
        generation = self.rotation.assign()
        ms = self.timeout * 1000
        meta: dict[str, Any] = {
            "playwright": True,
            "playwright_context": f"govsi-{generation}",
            "playwright_context_kwargs": CONTEXT_KWARGS,
            "playwright_page_init_callback": install,
            "playwright_page_goto_kwargs": {"wait_until": "commit", "timeout": ms},
            META_SETTLE: steps,
        }
        reused = self._idle_page(generation)
        if reused is not None:
            # The page engine navigates it afresh (and runs ``install`` again).
            meta["playwright_page"] = reused
            self.stats.inc_value("govsi/render/pages_reused")
        request = Request(url, dont_filter=True, meta=meta)
        rendered = False
        try:
            # The handler's own timeouts bound each step; this bounds them all together.
            # The page engine is scrapy-playwright's handler, which has no type information.
            response: Response = await asyncio.wait_for(
                engine.download_request(request), 3 * self.timeout
            )
            rendered = True
            return response
        finally:
            await self._release(generation, request.meta.get("playwright_page"), rendered)

    def _idle_page(self, generation: int) -> Any | None:
        """A tab of ``generation`` that rendered well; tabs of older generations are left
        to their context's closing."""
        while self._idle_pages:
            born, page = self._idle_pages.pop()
            if born == generation and not page.is_closed():
                return page
        return None

    async def _release(self, generation: int, page: Any | None, keep: bool) -> None:
        context = None
        if page is not None:
            context = page.context
            if keep and not page.is_closed():
                self._idle_pages.append((generation, page))
            else:
                # The browser may have died with it: a closed page needs no closing.
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(page.close(run_before_unload=False), CLOSE_TIMEOUT)
                self.stats.inc_value("govsi/render/pages_closed")
        for old in self.rotation.done(generation, context):
            with contextlib.suppress(Exception):
                await asyncio.wait_for(old.close(), CLOSE_TIMEOUT)
            self.stats.inc_value("govsi/render/contexts_closed")

    def idle_for(self, now: float) -> float:
        return 0.0 if self._in_use else now - self.idle_since

    async def close_if_idle(self) -> None:
        if self._engine is not None and self.idle_for(time.monotonic()) >= self.idle_close:
            logger.info("no page to render for %.0f s: closing the browser", self.idle_close)
            self.stats.inc_value("govsi/render/browser/idle_closes")
            await self.close()

    async def close(self) -> None:
        engine, self._engine = self._engine, None
        self._idle_pages = []
        self.rotation = ContextRotation(self.rotation.per_context)
        if engine is not None:
            with contextlib.suppress(Exception):
                await engine.close()

    async def shut(self) -> None:
        """The crawl is over: the browser, the refusing socket and the sandbox wrapper go."""
        await self.close()
        self._refuser.close()
        if self.memory is not None:
            remove_cgroup(self.memory)
        if self._launch is not None and self._launch.executable != self.chromium:
            shutil.rmtree(os.path.dirname(self._launch.executable), ignore_errors=True)
