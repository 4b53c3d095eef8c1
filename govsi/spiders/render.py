"""The spider's side of JavaScript rendering (RENDER_JS): which fetched pages to render,
and what their rendered version adds.

A page is fetched once, over plain HTTP. When it should be rendered, the spider hands that
response to the Renderer extension (``govsi.render.renderer``), which opens it in Chromium
as the page's document; the callback waits for the DOM while the crawl goes on. ``auto``
decides per page (``govsi.render.decide``): a page with no script that runs on load is
never rendered; one that plainly needs a browser is; the rest are decided by their script
signature's samples.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from lxml import etree
from scrapy.http import Response

from govsi.items import FetchedPage
from govsi.render.decide import RenderPlanner
from govsi.render.renderer import Renderer, RenderFailed, RenderOff
from govsi.render.routes import Document
from govsi.render.scripts import (
    needs_browser,
    onload_scripts,
    page_yield,
    rendering_adds,
    script_signature,
)
from govsi.web.extract import ExtractedLinks, extract_links, parse_html
from govsi.web.urls import in_scope

logger = logging.getLogger(__name__)


def merge(plain: ExtractedLinks, rendered: ExtractedLinks) -> ExtractedLinks:
    """Links and images of both versions: the served HTML's first, then the DOM's new ones."""
    return ExtractedLinks(
        links=list(dict.fromkeys(plain.links + rendered.links)),
        images=list(dict.fromkeys(plain.images + rendered.images)),
        base_url=rendered.base_url or plain.base_url,
        nofollow=plain.nofollow or rendered.nofollow,
    )


def document_of(response: Response) -> Document:
    """The fetched response as the browser gets it."""
    headers = tuple(
        (k.decode("latin-1"), v.decode("latin-1"))
        for k, values in response.headers.items()
        for v in values
    )
    return Document(response.status, headers, response.body)


class RenderingMixin:
    """The rendering half of GovsiSpider. Uses the spider's ``crawler``, ``suffixes``,
    ``planner``, ``decisions`` and ``renderer`` (set in ``start``)."""

    crawler: Any
    suffixes: list[str]
    max_links: int
    planner: RenderPlanner
    renderer: Renderer | None
    # Pages waiting for their signature's samples, woken when it is decided.
    decisions: dict[str, asyncio.Event]

    @property
    def render_mode(self) -> str:
        return self.renderer.mode if self.renderer is not None else "off"

    def _render_plan(self, url: str, root: etree._Element | None) -> tuple[str, str | None]:
        """("render" | "sample" | "plain", the page's script signature)."""
        if self.renderer is None or self.render_mode == "off":
            return "plain", None
        stats = self.crawler.stats
        tokens = onload_scripts(root, url, lambda src: in_scope(src, self.suffixes))
        signature = script_signature(tokens)
        if self.render_mode == "always":
            return "render", signature
        if signature is None:
            # Nothing a browser would run on load: rendering could only cost.
            stats.inc_value("govsi/render/plan/no_scripts")
            return "plain", None
        reason = needs_browser(root)
        if reason is not None:
            stats.inc_value(f"govsi/render/needed/{reason.replace(' ', '_')}")
            stats.inc_value("govsi/render/plan/needed")
            return "render", signature
        plan = self.planner.plan(signature)
        stats.inc_value(f"govsi/render/plan/{plan}")
        return plan, signature

    async def _decide(self, url: str, plan: str, signature: str | None) -> str:
        """The plan ``_render_plan`` gave, once the samples of the page's signature are in
        when it said "wait" (bounded: a sample that never returns counts as plain)."""
        while plan == "wait" and signature is not None and self.renderer is not None:
            event = self.decisions.setdefault(signature, asyncio.Event())
            try:
                with self.renderer.waiting_for(url):
                    await asyncio.wait_for(event.wait(), 2 * self.renderer.timeout + 5)
            except TimeoutError:
                self.crawler.stats.inc_value("govsi/render/wait_timeout")
                return "plain"
            plan = self.planner.plan(signature)
            self.crawler.stats.inc_value(f"govsi/render/plan/after_wait/{plan}")
        return plan

    def _decided(self, signature: str) -> None:
        if self.planner.decided(signature):
            event = self.decisions.pop(signature, None)
            if event is not None:
                event.set()

    async def _rendered(
        self,
        response: Response,
        record: FetchedPage,
        root: etree._Element | None,
        found: ExtractedLinks,
        plan: str,
        signature: str | None,
    ) -> tuple[str, etree._Element | None, ExtractedLinks] | None:
        """The page's rendered text, tree and links (merged with the plain ones), or None
        to keep the plain version when rendering failed (recorded in the page)."""
        assert self.renderer is not None
        try:
            rendered = await self.renderer.render(record.url, document_of(response))
        except RenderOff:
            # Said once when it was switched off; the page is simply not rendered.
            self.crawler.stats.inc_value("govsi/render/skipped_off")
            if plan == "sample" and signature is not None:
                self.planner.given_up(signature)
                self._decided(signature)
            return None
        except RenderFailed as e:
            logger.warning("rendering %s failed (%s); keeping it as fetched", record.url, e)
            self.crawler.stats.inc_value("govsi/render/failed")
            record.fetch_error = f"rendering failed: {e}"[:1000]
            if plan == "sample" and signature is not None:
                self.planner.given_up(signature)
                self._decided(signature)
            return None
        text = rendered.html
        new_root = parse_html(text)
        # The page's own URL is the base, whatever history.pushState made of the address.
        new_found = extract_links(text, record.url, new_root, self.max_links)
        if plan == "sample" and signature is not None:
            gained = rendering_adds(page_yield(root, found), page_yield(new_root, new_found))
            self.crawler.stats.inc_value(f"govsi/render/sampled/{'gained' if gained else 'same'}")
            decided = self.planner.learn(signature, gained)
            self._decided(signature)
            if decided is not None:
                self.crawler.stats.inc_value(f"govsi/render/decided/{decided}")
                logger.info(
                    "script signature %s (first seen on %s): %s",
                    signature,
                    record.url,
                    "rendering adds content, its pages are rendered"
                    if decided == "render"
                    else "rendering adds nothing, its pages are fetched plainly",
                )
        record.rendered = True
        return text, new_root, merge(found, new_found)
