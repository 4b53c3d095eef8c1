"""Chromium and scrapy-playwright set up for the crawl's browser (``govsi.render.browser``):
which Chromium to drive, its switches and launch options, the scrapy-playwright settings
its handler reads, and that handler as the page engine, a page's way through it.

Playwright is imported only in ``handler_class``, when the first page needs a browser.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from scrapy import Request
from scrapy.http import Response
from scrapy.settings import BaseSettings

from govsi.render.fence import addable_switch, chromium_args
from govsi.render.limits import js_heap_args
from govsi.requestmeta import META_SETTLE

__all__ = [
    "PageHook",
    "PageStep",
    "browser_args",
    "configure_playwright",
    "dispatch_promptly",
    "find_chromium",
    "handler_class",
    "launch_error",
    "launch_options",
    "refused_args",
    "settled_dom",
]

logger = logging.getLogger("govsi.render.browser")  # one logger for the browser's lines

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


def _switches(value: Any) -> list[str]:
    if not value:
        return []
    if isinstance(value, str):
        value = json.loads(value) if value.lstrip().startswith("[") else value.split(",")
    return [str(v).strip() for v in value if str(v).strip()]


def browser_args(value: Any) -> list[str]:
    """RENDER_BROWSER_ARGS: a list, a JSON list (for switches that contain commas), or
    comma-separated switches; only those ``govsi.render.fence.ADDABLE_SWITCHES`` names
    (``addable_switch``), spelt ``--name[=value]``: the browser runs sandboxed and fenced
    or not at all, whatever a switch says (``refused_args`` names the others)."""
    return [switch for a in _switches(value) if (switch := addable_switch(a)) is not None]


def refused_args(value: Any) -> list[str]:
    """The switches of RENDER_BROWSER_ARGS that ``browser_args`` leaves out."""
    return [a for a in _switches(value) if addable_switch(a) is None]


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


def configure_playwright(settings: BaseSettings, *, max_pages: int, timeout: float) -> None:
    """The scrapy-playwright settings its handler reads, for ``max_pages`` pages at once and
    a page's ``timeout`` in seconds (at spider priority, so ``-s`` wins), and its log kept
    to what the crawl's LOG_LEVEL shows. No DOWNLOAD_HANDLERS: the browser is never
    Scrapy's downloader."""
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
        "PLAYWRIGHT_MAX_PAGES_PER_CONTEXT": max_pages,
        "PLAYWRIGHT_CONTEXTS": {},
        "PLAYWRIGHT_RESTART_DISCONNECTED_BROWSER": True,
        "PLAYWRIGHT_DEFAULT_NAVIGATION_TIMEOUT": timeout * 1000,
        # Our routes (govsi.render.routes) answer every request; these never apply.
        "PLAYWRIGHT_PROCESS_REQUEST_HEADERS": None,
    }.items():
        settings.set(name, value, priority="spider")


def dispatch_promptly() -> bool:
    """Let Playwright's client hand each message from its driver on at once.

    Playwright 1.65's client waits, after each message, until the event loop has nothing
    else ready, for up to 100 turns of the loop (``playwright._impl.utils.tasks``, to order
    events as Node.js would). In a crawl the loop always has work ready: each of a render's
    dozens of messages waited 100 turns of the crawl's own callbacks, and renders begun while the
    crawl was busy took many times as long (bench.render_speed). Without that wait
    messages are dispatched as they arrive, as Playwright did before. False when this
    Playwright has no such wait (nothing to change)."""
    try:
        from playwright._impl.utils import tasks
    except ImportError:
        return False
    if not isinstance(getattr(tasks, "_MAX_TURNS", None), int):
        return False
    tasks._MAX_TURNS = 0
    return True


def handler_class() -> type:
    # Imported when the first page needs a browser: Playwright costs memory to import.
    from scrapy.http import HtmlResponse
    from scrapy_playwright.handler import ScrapyPlaywrightDownloadHandler

    if not dispatch_promptly():
        logger.warning(
            "this Playwright's client cannot be told to dispatch its messages at once: "
            "renders may wait behind a busy crawl"
        )

    # scrapy-playwright has no type information: its handler is Any to mypy.
    class PageEngine(ScrapyPlaywrightDownloadHandler):  # type: ignore[misc]
        """scrapy-playwright's handler as the page engine: it launches Chromium, keeps the
        contexts (each with its page limit) and restarts a browser that died. A page's way
        through it is ours, with as few messages to the driver as it takes, since each is
        handled on the crawl's own thread:

        - the page's routes (``install``, once per tab) are its only ones: the handler's
          own catch-all route would be removed and added again on every render;
        - the navigation waits only for the document to be committed; the settle step
          then waits for it to be complete in the page itself: a script that navigates
          away (refused) before DOMContentLoaded or load leaves Playwright waiting for
          events that never come, while the page itself is whole;
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
    ``--no-sandbox``), fenced (``govsi.render.fence.chromium_args``: the switches of
    ``extra`` it allows, then its own), each page's V8 heap capped at ``js_heap_mb`` (last:
    no switch before it changes it)."""
    return {
        "executable_path": executable,
        "chromium_sandbox": True,
        "headless": True,
        "args": chromium_args(refusing_proxy, extra, own=js_heap_args(js_heap_mb)),
    }


def launch_error(error: Exception) -> str:
    """Playwright's launch error in one line: its first, and what Chromium itself said on
    its stderr (the launch error says only that it closed), else Playwright's hint."""
    lines = [line.strip() for line in str(error).strip().splitlines() if line.strip()]
    said = [line.split("[err]", 1)[1].strip() for line in lines if "[err]" in line]
    said += [line for line in lines[1:] if "sandbox" in line.lower()]
    return "; ".join((lines or ["no message"])[:1] + said[:1])[:400]
