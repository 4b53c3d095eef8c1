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
import json
import logging
import os
import shutil
import socket
import time
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from scrapy import Request
from scrapy.crawler import Crawler
from scrapy.http import Response
from scrapy.settings import BaseSettings

from govsi.render.decide import render_mode
from govsi.render.fence import chromium_args
from govsi.render.limits import MemoryLimit, browser_cgroup, js_heap_args, remove_cgroup
from govsi.render.sandbox import Launch, sandbox_problem, sandboxed_launch
from govsi.requestmeta import META_SETTLE

__all__ = [
    "Browser",
    "BrowserUnavailable",
    "ContextRotation",
    "browser_args",
    "configure",
    "dispatch_promptly",
    "find_chromium",
    "launch_options",
    "settled_dom",
]

logger = logging.getLogger(__name__)

# Debian's chromium-headless-shell first: the same engine without the desktop browser's
# user interface, and about half the CPU per render (bench/render_floor.py). Then the
# chromium package: the binary itself, then the wrapper script on the PATH.
CHROMIUM_CANDIDATES = (
    "/usr/lib/chromium/chromium-headless-shell",
    "/usr/bin/chromium-headless-shell",
    "/usr/lib/chromium/chromium",
    "/usr/bin/chromium",
    "/usr/bin/chromium-browser",
)
# Options of every context: no service workers (they would serve and fetch outside the
# routing), no downloads.
CONTEXT_KWARGS = {"service_workers": "block", "accept_downloads": False}
# Seconds a page gets to close before it is left to its context's closing.
CLOSE_TIMEOUT = 5.0
# Switches that would take Chromium's sandbox down: never passed, whatever the settings say.
UNSANDBOXING = frozenset({"--no-sandbox", "--disable-setuid-sandbox", "--no-zygote-sandbox"})


class BrowserUnavailable(Exception):
    """Chromium cannot run sandboxed here: rendering is off for the rest of the crawl."""


def find_chromium(configured: str | None = None) -> str | None:
    """The Chromium executable to drive: ``configured`` (CHROMIUM_PATH) if it is one, else
    Debian's; None when there is none."""
    if configured:
        return configured if os.access(configured, os.X_OK) else None
    for path in CHROMIUM_CANDIDATES:
        if os.access(path, os.X_OK):
            return path
    return (
        shutil.which("chromium-headless-shell")
        or shutil.which("chromium")
        or shutil.which("chromium-browser")
    )


def browser_args(value: Any) -> list[str]:
    """RENDER_BROWSER_ARGS: a list, a JSON list (for switches that contain commas), or
    comma-separated switches. Switches that would switch the sandbox off are dropped, with
    a log line: the browser runs sandboxed or not at all."""
    if not value:
        return []
    if isinstance(value, str):
        value = json.loads(value) if value.lstrip().startswith("[") else value.split(",")
    args = [str(v).strip() for v in value if str(v).strip()]
    dropped = [a for a in args if a.split("=", 1)[0] in UNSANDBOXING]
    if dropped:
        logger.error("RENDER_BROWSER_ARGS: %s ignored (Chromium runs sandboxed)", dropped)
    return [a for a in args if a not in dropped]


class _WithoutTraceback(logging.Filter):
    """scrapy-playwright logs a page that timed out or crashed with its traceback; it is an
    expected outcome here, logged by the spider in one line and kept in fetch_error."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.exc_info = None
        record.exc_text = None
        return True


def _level(value: Any) -> int:
    if isinstance(value, int):
        return value
    level = logging.getLevelName(str(value or "DEBUG").upper())
    return level if isinstance(level, int) else logging.DEBUG


def configure(settings: BaseSettings) -> str:
    """The RENDER_JS mode in effect ("off" when there is no Chromium), with the
    scrapy-playwright settings its handler reads (at spider priority, so ``-s`` wins).
    No DOWNLOAD_HANDLERS: the browser is never Scrapy's downloader."""
    mode = render_mode(settings.get("RENDER_JS"))
    if mode == "off":
        return mode
    if find_chromium(settings.get("CHROMIUM_PATH") or None) is None:
        logger.warning(
            "RENDER_JS=%s but no Chromium was found (install Debian's chromium or set "
            "CHROMIUM_PATH): pages are fetched without rendering",
            mode,
        )
        return "off"
    playwright_log = logging.getLogger("scrapy-playwright")
    if not any(isinstance(f, _WithoutTraceback) for f in playwright_log.filters):
        playwright_log.addFilter(_WithoutTraceback())
    # Scrapy filters by handler, so this logger's own level stays NOTSET, and the handler
    # then logs every request a page makes at DEBUG, asking the driver for its headers
    # each time, for records the crawl's LOG_LEVEL drops.
    if playwright_log.level == logging.NOTSET and _level(settings.get("LOG_LEVEL")) > logging.DEBUG:
        playwright_log.setLevel(logging.INFO)
    for name, value in {
        "PLAYWRIGHT_BROWSER_TYPE": "chromium",
        # One context in use, one being retired, and one for a context the rotation never
        # learned of (its pages all failed before opening).
        "PLAYWRIGHT_MAX_CONTEXTS": 3,
        "PLAYWRIGHT_MAX_PAGES_PER_CONTEXT": settings.getint("RENDER_MAX_PAGES"),
        "PLAYWRIGHT_CONTEXTS": {},
        "PLAYWRIGHT_RESTART_DISCONNECTED_BROWSER": True,
        "PLAYWRIGHT_DEFAULT_NAVIGATION_TIMEOUT": settings.getfloat("RENDER_TIMEOUT") * 1000,
        # Our routes (govsi.render.routes) answer every request; these never apply.
        "PLAYWRIGHT_PROCESS_REQUEST_HEADERS": None,
    }.items():
        settings.set(name, value, priority="spider")
    return mode


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


def dispatch_promptly() -> bool:
    """Let Playwright's client hand each message from its driver on at once.

    Playwright 1.65's client waits, after each message, until the event loop has nothing
    else ready, for up to 100 turns of the loop (``playwright._impl.utils.tasks``, to order
    events as Node.js would). In a crawl the loop always has work ready: each of a render's
    dozens of messages waited 100 turns of the crawl's own callbacks, and renders begun while the
    crawl was busy took 5-6 s instead of 0.3 s (bench/README, "Renders behind a busy
    crawl"). Without that wait messages are dispatched as they arrive, as Playwright did
    before. False when this Playwright has no such wait (nothing to change)."""
    try:
        from playwright._impl.utils import tasks
    except ImportError:
        return False
    if not isinstance(getattr(tasks, "_MAX_TURNS", None), int):
        return False
    tasks._MAX_TURNS = 0
    return True


def _handler_class() -> type:
    # Imported when the first page needs a browser: Playwright costs memory to import.
    from scrapy.http import HtmlResponse
    from scrapy_playwright.handler import ScrapyPlaywrightDownloadHandler

    if not dispatch_promptly():
        logger.warning(
            "this Playwright's client cannot be told to dispatch its messages at once: "
            "renders may wait behind a busy crawl"
        )

    class PageEngine(ScrapyPlaywrightDownloadHandler):
        """scrapy-playwright's handler as the page engine: it launches Chromium, keeps the
        contexts (each with its page limit) and restarts a browser that died. A page's way
        through it is ours, with as few messages to the driver as it takes, since each is
        handled on the crawl's own thread:

        - the page's routes (``install``, once per tab) are its only ones: the handler's
          own catch-all route would be removed and added again on every render;
        - the navigation waits for the document to be parsed, not for its load event: a
          script that navigates away (refused) leaves Playwright waiting for a load that
          never comes, while the page itself is whole;
        - a download a script starts is refused (the context accepts none), never taken
          for the page as the handler's own navigation would;
        - after it, only our own steps (``govsi_settle``, ``settled_dom``): no response
          headers, security details or server address (a message each, none used here);
        - no listeners on each request and response (the handler's counters and debug
          log: an event from the driver for each, and a message for the log's headers).
        """

        async def start(self) -> None:
            await self._launch()

        async def _create_page(self, request: Request, spider: Any) -> Any:
            page = await super()._create_page(request, spider)
            page.remove_listener("request", self._increment_request_stats)
            page.remove_listener("response", self._increment_response_stats)
            return page

        async def _download_request_with_retry(self, request: Request, spider: Any) -> Response:
            meta = request.meta
            page = meta.get("playwright_page")
            if page is None or page.is_closed():
                page = await self._create_page(request=request, spider=spider)
            # Set first: Browser releases (or closes) it whatever happens next.
            meta["playwright_page"] = page
            await meta["playwright_page_init_callback"](page, request)
            kwargs = dict(meta.get("playwright_page_goto_kwargs") or {})
            response = await page.goto(url=request.url, **kwargs)
            dom = await settled_dom(page, meta.get(META_SETTLE) or ())
            return HtmlResponse(
                url=page.url,
                status=response.status if response is not None else 200,
                body=dom.encode("utf-8"),
                encoding="utf-8",
                request=request,
                flags=["playwright"],
            )

    return PageEngine


# A page's set-up before it loads (routes), and the steps after: waiting for it to settle,
# checks of what it became.
PageHook = Callable[[Any, Request], Awaitable[None]]
PageStep = Callable[[Any], Awaitable[str | None]]


async def settled_dom(page: Any, steps: Iterable[PageStep]) -> str:
    """Run a loaded page's steps in order; its DOM is what the last one returned, taken in
    the same message to the page as that step's check (each message costs the driver, the
    browser and the page CPU), else ``page.content()``."""
    dom = None
    for step in steps:
        dom = await step(page)
    return dom if dom is not None else await page.content()


def launch_options(
    executable: str, refusing_proxy: str, extra: list[str], js_heap_mb: int = 0
) -> dict[str, Any]:
    """Playwright's launch options for the crawl's Chromium: sandboxed (never
    ``--no-sandbox``), fenced (``govsi.render.fence.chromium_args``), each page's V8 heap
    capped at ``js_heap_mb`` (before ``extra``: a --js-flags there replaces it)."""
    return {
        "executable_path": executable,
        "chromium_sandbox": True,
        "headless": True,
        "args": chromium_args(refusing_proxy, [*js_heap_args(js_heap_mb), *extra]),
    }


def _launch_error(error: Exception) -> str:
    """Playwright's launch error in one line: its first, and what Chromium itself said on
    its stderr (the launch error says only that it closed), else Playwright's hint."""
    lines = [line.strip() for line in str(error).strip().splitlines() if line.strip()]
    said = [line.split("[err]", 1)[1].strip() for line in lines if "[err]" in line]
    said += [line for line in lines[1:] if "sandbox" in line.lower()]
    return "; ".join((lines or ["no message"])[:1] + said[:1])[:400]


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
        engine = _handler_class()(self.crawler)
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
            "namespaces or RENDER_BROWSER_USER (README, 'JavaScript rendering').",
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
                self.disable(f"it failed to start sandboxed: {_launch_error(e)}")
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
            "playwright_page_goto_kwargs": {"wait_until": "domcontentloaded", "timeout": ms},
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
            response = await asyncio.wait_for(engine.download_request(request), 3 * self.timeout)
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
