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
from collections.abc import Awaitable, Callable
from typing import Any

from lxml import etree
from scrapy.http import Response

from govsi.items import FetchedPage
from govsi.render.decide import RenderPlanner
from govsi.render.renderer import Renderer, RenderFailed, RenderOff
from govsi.render.routes import Document
from govsi.render.scripts import rendering_adds
from govsi.spiders.reading import PlanInputs, Reading
from govsi.web.extract import ExtractedLinks

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
    # The spider's: a page's Reading and tree (read here or in the worker).
    _read: Callable[..., Awaitable[tuple[Reading, etree._Element | None]]]

    @property
    def render_mode(self) -> str:
        return self.renderer.mode if self.renderer is not None else "off"

    def _plan_inputs(self) -> PlanInputs | None:
        """What ``read_tree`` reads for the render plan; None when nothing renders."""
        if self.renderer is None or self.render_mode == "off":
            return None
        return PlanInputs(tuple(self.suffixes), needs=self.render_mode == "auto")

    def _render_plan(self, reading: Reading) -> str:
        """The page's plan ("render", "sample", "wait" or "plain"), from its reading."""
        if self.renderer is None or self.render_mode == "off":
            return "plain"
        stats = self.crawler.stats
        if self.render_mode == "always":
            return "render"
        if reading.signature is None:
            # Nothing a browser would run on load: rendering could only cost.
            stats.inc_value("govsi/render/plan/no_scripts")
            return "plain"
        if reading.needs is not None:
            stats.inc_value(f"govsi/render/needed/{reading.needs.replace(' ', '_')}")
            stats.inc_value("govsi/render/plan/needed")
            return "render"
        plan = self.planner.plan(reading.signature)
        stats.inc_value(f"govsi/render/plan/{plan}")
        return plan

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
        self, response: Response, record: FetchedPage, plain: Reading, plan: str
    ) -> tuple[str, Reading, etree._Element | None] | None:
        """The page's rendered text, reading (its links merged with the plain ones) and
        tree (None when read in the worker), or None to keep the plain version when
        rendering failed (recorded in the page)."""
        assert self.renderer is not None
        signature = plain.signature
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
        # The page's own URL is the base, whatever history.pushState made of the address.
        sample = plan == "sample" and signature is not None
        reading, root = await self._read(
            record, text, record.url, plan=False, measure=True, yielded=sample
        )
        if sample and plain.yielded is not None and reading.yielded is not None:
            assert signature is not None
            gained = rendering_adds(plain.yielded, reading.yielded)
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
        reading.found = merge(plain.found, reading.found)
        return text, reading, root
