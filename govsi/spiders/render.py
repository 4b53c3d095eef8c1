"""The spider's side of JavaScript rendering (RENDER_JS): the scrapy-playwright settings a
rendering crawl runs with, and the requests that fetch a page again through Chromium.

A page is always fetched over plain HTTP first: that tells HTML from documents, and for
most pages it is all there is. When the page needs a browser (``govsi.rendering``), the
spider asks for the same URL again with ``meta["playwright"]``; that request goes through
the frontier like any other (robots.txt, per-host and per-address delays) and its
response is the DOM after scripts ran.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from lxml import etree
from scrapy import Request
from scrapy.http import Response
from scrapy.settings import BaseSettings
from twisted.python.failure import Failure

from govsi.extract import ExtractedLinks, extract_links, parse_html
from govsi.items import FetchedPage
from govsi.queued import KIND_PAGE
from govsi.rendering import (
    RenderLearner,
    Yield,
    blocked_resource,
    find_chromium,
    needs_browser,
    render_mode,
    rendering_adds,
    scripts_may_change,
)
from govsi.urls import host_of, in_scope, resolve

logger = logging.getLogger(__name__)

HANDLER = "scrapy_playwright.handler.ScrapyPlaywrightDownloadHandler"


# What the crawl's politeness says about a request the browser wants to make: None if it
# must not be made (robots.txt, or a host not known yet), else the host's delay in seconds.
BrowserPolicy = Callable[[str], float | None]


class BrowserGate:
    """PLAYWRIGHT_ABORT_REQUEST: every request the browser wants to make passes here.

    Images, media, fonts, stylesheets and anything outside scope are refused. The page's
    own document was released by the frontier. A script's request to the page's host must
    be allowed by robots.txt, and goes out only after the previous request to that host
    (the document first) has been answered and the host's delay has passed since: the rule
    the frontier keeps, so a rendered page asks its host no faster than plain fetches
    would. After the render, the frontier counts the host's next delay from the render's
    end. A request to another host is refused: that host's turn is the frontier's to give.
    """

    def __init__(self, suffixes: list[str]) -> None:
        self.suffixes = suffixes
        self.policy: BrowserPolicy | None = None
        self.counts: dict[str, int] = {}
        # The latest request let through per host: the next one waits for its answer.
        self._previous: dict[str, Any] = {}

    def bind(self, policy: BrowserPolicy) -> None:
        """Called by the scheduler, which knows robots.txt and delays."""
        self.policy = policy

    def _count(self, what: str) -> None:
        self.counts[what] = self.counts.get(what, 0) + 1

    async def __call__(self, request: Any) -> bool:
        url: str = request.url
        web = url.startswith(("http://", "https://"))
        reason = blocked_resource(request.resource_type, url, web and in_scope(url, self.suffixes))
        if reason is not None:
            self._count(reason.replace(" ", "_"))
            return True
        if not web:
            return False  # data:, blob:, about: never reach a server
        host = host_of(url)
        frame = request.frame
        if request.is_navigation_request() and frame.parent_frame is None:
            self._previous[host] = request  # the page itself; what follows waits for it
            return False
        if host != host_of(frame.page.url):
            self._count("other_host")
            return True
        delay = self.policy(url) if self.policy is not None else None
        if delay is None:
            self._count("robots")
            return True
        # Queue behind the previous request first, so requests made together go in turn.
        previous, self._previous[host] = self._previous.get(host), request
        if previous is not None:
            # Its answer (None if it failed); a failed or cancelled request is answered too.
            with contextlib.suppress(Exception):
                await previous.response()
            await asyncio.sleep(delay)
        self._count("allowed")
        return False


def browser_args(value: Any) -> list[str]:
    """RENDER_BROWSER_ARGS: a list, a JSON list (for switches that contain commas, such as
    --host-resolver-rules), or comma-separated switches."""
    if not value:
        return []
    if isinstance(value, str):
        value = json.loads(value) if value.lstrip().startswith("[") else value.split(",")
    return [str(v).strip() for v in value if str(v).strip()]


class _WithoutTraceback(logging.Filter):
    """scrapy-playwright logs a page that timed out or crashed with its traceback; it is an
    expected outcome here, logged by the spider in one line and kept in fetch_error."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.exc_info = None
        record.exc_text = None
        return True


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
    playwright_log = logging.getLogger("scrapy-playwright")
    if not any(isinstance(f, _WithoutTraceback) for f in playwright_log.filters):
        playwright_log.addFilter(_WithoutTraceback())
    for name, value in {
        "DOWNLOAD_HANDLERS": {"http": HANDLER, "https": HANDLER},
        "PLAYWRIGHT_BROWSER_TYPE": "chromium",
        "PLAYWRIGHT_LAUNCH_OPTIONS": {
            "executable_path": chromium,
            "headless": True,
            "args": browser_args(settings.get("RENDER_BROWSER_ARGS")),
        },
        # Contexts are rotated (RenderContextMiddleware): one in use, one being retired.
        # The cap is a backstop, one more than that, for a context the rotation never
        # learned of (its pages all failed before opening).
        "PLAYWRIGHT_MAX_CONTEXTS": 3,
        "PLAYWRIGHT_MAX_PAGES_PER_CONTEXT": settings.getint("RENDER_MAX_PAGES"),
        # No startup context: each scheme's handler would launch a browser at once; this
        # way a browser starts with the first page rendered over its scheme.
        "PLAYWRIGHT_CONTEXTS": {},
        # A browser that died is launched again for the next page.
        "PLAYWRIGHT_RESTART_DISCONNECTED_BROWSER": True,
        "PLAYWRIGHT_DEFAULT_NAVIGATION_TIMEOUT": timeout_ms,
        "PLAYWRIGHT_ABORT_REQUEST": BrowserGate(settings.getlist("ALLOWED_DOMAIN_SUFFIXES")),
    }.items():
        settings.set(name, value, priority="spider")
    return mode


@dataclass
class PlainPage:
    """What the plain fetch of a page gave, kept until its rendered version arrives."""

    record: FetchedPage
    text: str
    found: ExtractedLinks
    # Rendered to learn whether the host needs rendering: what the plain version gave.
    sample: Yield | None


def merge(plain: ExtractedLinks, rendered: ExtractedLinks) -> ExtractedLinks:
    """Links and images of both versions: the served HTML's first, then the DOM's new ones."""
    return ExtractedLinks(
        links=list(dict.fromkeys(plain.links + rendered.links)),
        images=list(dict.fromkeys(plain.images + rendered.images)),
        base_url=rendered.base_url or plain.base_url,
        nofollow=plain.nofollow or rendered.nofollow,
    )


# Context options, given with every rendered request (the context is made lazily). Scrapy
# does not verify certificates either; a page must not be lost to it.
CONTEXT_KWARGS = {"ignore_https_errors": True}


def page_methods(timeout: float) -> list[Any]:
    """Wait for the page to settle: no network activity, within the render timeout."""
    from scrapy_playwright.page import PageMethod

    return [PageMethod("wait_for_load_state", "networkidle", timeout=timeout * 1000)]


class RenderingMixin:
    """The rendering half of GovsiSpider: which pages to render, the rendered request, and
    its outcome. Uses the spider's ``crawler``, ``suffixes``, ``render_js``, ``learner``,
    ``render_timeout``, ``failure_reason`` and ``_finish_html`` (which stores a page)."""

    crawler: Any
    suffixes: list[str]
    render_js: str
    learner: RenderLearner
    render_timeout: float

    def failure_reason(self, failure: Failure) -> str:
        raise NotImplementedError

    async def _finish_html(
        self, record: FetchedPage, text: str, root: etree._Element | None, found: ExtractedLinks
    ) -> list[Any]:
        raise NotImplementedError

    def _render_plan(self, url: str, root: etree._Element | None) -> str:
        """ "render", "sample" (render, and compare with the plain page) or "plain"."""
        if self.render_js == "always":
            return "render"
        if not scripts_may_change(root, lambda src: self._loadable(url, src)):
            return "plain"  # nothing a browser would run: rendering can only cost
        reason = needs_browser(root)
        if reason is not None:
            self.crawler.stats.inc_value(f"govsi/render/needed/{reason.replace(' ', '_')}")
            return "render"
        return self.learner.plan(host_of(url))

    def _loadable(self, page_url: str, src: str) -> bool:
        """Whether the browser would load this script of the page (in scope)."""
        target = resolve(page_url, src)
        return target is not None and in_scope(target, self.suffixes)

    def _render_request(self, plain: PlainPage) -> Request:
        record = plain.record
        return Request(
            record.url,
            callback=self.parse_rendered,
            errback=self.render_failed,
            priority=-record.depth,
            dont_filter=True,  # the same URL again, on purpose
            meta={
                "depth": record.depth,
                "govsi_kind": KIND_PAGE,
                "govsi_url": record.url,
                "govsi_plain": plain,
                "playwright": True,
                "playwright_context_kwargs": CONTEXT_KWARGS,
                # The page is closed by RenderContextMiddleware, which needs it to reach
                # (and retire) its context.
                "playwright_include_page": True,
                "playwright_page_methods": page_methods(self.render_timeout),
            },
        )

    async def parse_rendered(self, response: Response) -> list[Any]:
        plain: PlainPage = response.meta["govsi_plain"]
        record = plain.record
        host = host_of(record.url)
        text = response.text
        root = parse_html(text)
        found = extract_links(text, response.url, root)
        if plain.sample is not None:
            gained = rendering_adds(plain.sample, page_yield(root, found))
            self.learner.learn(host, gained)
            self.crawler.stats.inc_value(f"govsi/render/sampled/{'gained' if gained else 'same'}")
        self.crawler.stats.inc_value("govsi/render/pages")
        self.crawler.stats.inc_value(f"govsi/render/host/{host}")
        record.rendered = True
        return await self._finish_html(record, text, root, merge(plain.found, found))

    async def render_failed(self, failure: Failure) -> list[Any]:
        """A page the browser could not render is kept as fetched plainly, with the reason."""
        plain: PlainPage = failure.request.meta["govsi_plain"]  # type: ignore[attr-defined]
        error = self.failure_reason(failure)
        logger.warning("rendering %s failed (%s); keeping it as fetched", plain.record.url, error)
        self.crawler.stats.inc_value("govsi/render/failed")
        plain.record.fetch_error = f"rendering failed: {error}"[:1000]
        plain.record.rendered = False
        root = parse_html(plain.text)
        return await self._finish_html(plain.record, plain.text, root, plain.found)


def page_yield(root: etree._Element | None, found: ExtractedLinks) -> Yield:
    """What one version of a page gives, for comparing the plain and rendered versions
    (read from its tree before the duplicate check cuts the template out of it)."""
    chars = len(" ".join(root.itertext())) if root is not None else 0
    return Yield(frozenset(found.links), frozenset(found.images), chars)
