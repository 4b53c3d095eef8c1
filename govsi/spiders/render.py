"""The spider's side of JavaScript rendering (RENDER_JS): the scrapy-playwright settings a
rendering crawl runs with, and the requests that fetch a page again through Chromium.

A page is always fetched over plain HTTP first: that tells HTML from documents, and for
most pages it is all there is. When the page needs a browser (``govsi.rendering``), the
spider asks for the same URL again with ``meta["playwright"]``; that request goes through
the frontier like any other (robots.txt, per-host and per-address delays) and its
response is the DOM after scripts ran.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from functools import partial
from typing import Any

from scrapy.settings import BaseSettings

from govsi.extract import ExtractedLinks
from govsi.items import FetchedPage
from govsi.rendering import blocked_resource, find_chromium, render_mode
from govsi.urls import in_scope

logger = logging.getLogger(__name__)

HANDLER = "scrapy_playwright.handler.ScrapyPlaywrightDownloadHandler"


def _abort(suffixes: list[str], request: Any) -> bool:
    """PLAYWRIGHT_ABORT_REQUEST: what the browser must not load."""
    url = request.url
    scoped = url.startswith(("http://", "https://")) and in_scope(url, suffixes)
    return blocked_resource(request.resource_type, url, scoped) is not None


def browser_args(value: Any) -> list[str]:
    """RENDER_BROWSER_ARGS: a list, a JSON list (for switches that contain commas, such as
    --host-resolver-rules), or comma-separated switches."""
    if not value:
        return []
    if isinstance(value, str):
        value = json.loads(value) if value.lstrip().startswith("[") else value.split(",")
    return [str(v).strip() for v in value if str(v).strip()]


def configure(settings: BaseSettings) -> str:
    """Set scrapy-playwright up for the run's RENDER_JS (at spider priority, so ``-s``
    still wins) and return the mode in effect: "off" when there is no Chromium."""
    mode = render_mode(settings.get("RENDER_JS"))
    if mode == "off":
        return mode
    chromium = find_chromium(settings.get("CHROMIUM_PATH") or None)
    if chromium is None:
        logger.warning(
            "RENDER_JS=%s but no Chromium was found (install Debian's chromium or set "
            "CHROMIUM_PATH): pages are fetched without rendering",
            mode,
        )
        return "off"
    timeout_ms = settings.getfloat("RENDER_TIMEOUT") * 1000
    for name, value in {
        "DOWNLOAD_HANDLERS": {"http": HANDLER, "https": HANDLER},
        "PLAYWRIGHT_BROWSER_TYPE": "chromium",
        "PLAYWRIGHT_LAUNCH_OPTIONS": {
            "executable_path": chromium,
            "headless": True,
            "args": browser_args(settings.get("RENDER_BROWSER_ARGS")),
        },
        # One context, a few pages: the browser's memory stays flat over a long crawl.
        "PLAYWRIGHT_MAX_CONTEXTS": 1,
        "PLAYWRIGHT_MAX_PAGES_PER_CONTEXT": settings.getint("RENDER_MAX_PAGES"),
        # Scrapy does not verify certificates either; a page must not be lost to it.
        "PLAYWRIGHT_CONTEXTS": {"default": {"ignore_https_errors": True}},
        "PLAYWRIGHT_DEFAULT_NAVIGATION_TIMEOUT": timeout_ms,
        "PLAYWRIGHT_ABORT_REQUEST": partial(_abort, settings.getlist("ALLOWED_DOMAIN_SUFFIXES")),
    }.items():
        settings.set(name, value, priority="spider")
    return mode


@dataclass
class PlainPage:
    """What the plain fetch of a page gave, kept until its rendered version arrives."""

    record: FetchedPage
    text: str
    found: ExtractedLinks
    sample: bool  # rendered to learn whether the host needs rendering


def merge(plain: ExtractedLinks, rendered: ExtractedLinks) -> ExtractedLinks:
    """Links and images of both versions: the served HTML's first, then the DOM's new ones."""
    return ExtractedLinks(
        links=list(dict.fromkeys(plain.links + rendered.links)),
        images=list(dict.fromkeys(plain.images + rendered.images)),
        base_url=rendered.base_url or plain.base_url,
        nofollow=plain.nofollow or rendered.nofollow,
    )


def page_methods(timeout: float) -> list[Any]:
    """Wait for the page to settle: no network activity, within the render timeout."""
    from scrapy_playwright.page import PageMethod

    return [PageMethod("wait_for_load_state", "networkidle", timeout=timeout * 1000)]
