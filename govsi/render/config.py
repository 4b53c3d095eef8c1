"""What rendering reads from settings, as plain values, read once here: ``RenderConfig``
(the RENDER_JS mode in effect, which Chromium, the renderer's and the browser's bounds).

``configure`` is the crawl's set-up (the add-on, ``govsi.addons``): scrapy-playwright's
settings, and what the configuration cannot honour, said once. ``Renderer.from_crawler``
builds from the same ``RenderConfig.from_settings``; a test builds one directly.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from scrapy.settings import BaseSettings

from govsi.render.decide import RenderMode, render_mode
from govsi.render.engine import (
    browser_args,
    configure_playwright,
    find_chromium,
    refused_args,
)
from govsi.web.scope import Scope

__all__ = ["RenderConfig", "configure"]

logger = logging.getLogger("govsi.render.browser")  # one logger for the browser's lines


@dataclass(frozen=True)
class RenderConfig:
    requested: RenderMode  # RENDER_JS
    chromium: str | None  # CHROMIUM_PATH, else Debian's; None: none found, or not looked for
    # Sub-resources out of it are refused (ALLOWED_DOMAIN_SUFFIXES, MAX_URL_LENGTH).
    scope: Scope
    timeout: float  # RENDER_TIMEOUT
    settle_quiet: float  # RENDER_SETTLE_QUIET
    max_pages: int  # RENDER_MAX_PAGES
    queue_pages: int  # RENDER_QUEUE_PAGES
    queue_bytes: int  # RENDER_QUEUE_BYTES
    host_queue_pages: int  # RENDER_QUEUE_HOST_PAGES
    context_pages: int  # RENDER_CONTEXT_PAGES
    idle_close: float  # RENDER_IDLE_CLOSE
    browser_user: str  # RENDER_BROWSER_USER
    browser_args: tuple[str, ...]  # RENDER_BROWSER_ARGS a user may add (fence.ADDABLE_SWITCHES)
    refused_args: tuple[str, ...]  # RENDER_BROWSER_ARGS of any other kind
    js_heap_mb: int  # RENDER_JS_HEAP_MB
    memory_mb: int  # RENDER_MEMORY_MB
    cache_max_bytes: int  # RENDER_CACHE_MAX_BYTES
    cache_ttl: float  # RENDER_CACHE_TTL
    max_requests: int  # RENDER_MAX_REQUESTS_PER_PAGE
    max_dom: int  # DOWNLOAD_MAXSIZE: the largest DOM kept, and cached response

    @property
    def mode(self) -> RenderMode:
        """The mode in effect: RENDER_JS, or off without a Chromium to drive."""
        return self.requested if self.chromium is not None else "off"

    @classmethod
    def from_settings(cls, s: BaseSettings) -> RenderConfig:
        requested = render_mode(s.get("RENDER_JS"))
        args = s.get("RENDER_BROWSER_ARGS")
        return cls(
            requested=requested,
            chromium=find_chromium(s.get("CHROMIUM_PATH") or None) if requested != "off" else None,
            scope=Scope.from_settings(s),
            timeout=s.getfloat("RENDER_TIMEOUT"),
            settle_quiet=s.getfloat("RENDER_SETTLE_QUIET"),
            max_pages=s.getint("RENDER_MAX_PAGES"),
            queue_pages=s.getint("RENDER_QUEUE_PAGES"),
            queue_bytes=s.getint("RENDER_QUEUE_BYTES"),
            host_queue_pages=s.getint("RENDER_QUEUE_HOST_PAGES"),
            context_pages=s.getint("RENDER_CONTEXT_PAGES"),
            idle_close=s.getfloat("RENDER_IDLE_CLOSE"),
            browser_user=s.get("RENDER_BROWSER_USER"),
            browser_args=tuple(browser_args(args)),
            refused_args=tuple(refused_args(args)),
            js_heap_mb=s.getint("RENDER_JS_HEAP_MB"),
            memory_mb=s.getint("RENDER_MEMORY_MB"),
            cache_max_bytes=s.getint("RENDER_CACHE_MAX_BYTES"),
            cache_ttl=s.getfloat("RENDER_CACHE_TTL"),
            max_requests=s.getint("RENDER_MAX_REQUESTS_PER_PAGE"),
            max_dom=s.getint("DOWNLOAD_MAXSIZE"),
        )


def configure(settings: BaseSettings) -> RenderMode:
    """The RENDER_JS mode in effect, with the scrapy-playwright settings its handler reads
    when it renders (``configure_playwright``). Said here, once per crawl: no Chromium
    (pages are fetched without rendering), switches refused."""
    config = RenderConfig.from_settings(settings)
    if config.requested != "off" and config.chromium is None:
        logger.warning(
            "RENDER_JS=%s but no Chromium was found (install Debian's chromium or set "
            "CHROMIUM_PATH): pages are fetched without rendering",
            config.requested,
        )
    if config.mode == "off":
        return config.mode
    if config.refused_args:
        logger.error(
            "RENDER_BROWSER_ARGS: %s refused: only switches of how pages look and how the "
            "browser uses this machine may be added (govsi.render.fence.ADDABLE_SWITCHES); "
            "Chromium runs sandboxed and fenced",
            list(config.refused_args),
        )
    configure_playwright(settings, max_pages=config.max_pages, timeout=config.timeout)
    return config.mode
