"""The crawl's side of JavaScript rendering (RENDER_JS): which fetched pages to render,
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
from collections.abc import Callable
from functools import partial

from scrapy.crawler import Crawler
from scrapy.http import Response

from govsi.archive.capture import dom_rendered, header_pairs
from govsi.items import FetchedPage
from govsi.page.reading import PlanInputs, Reading
from govsi.render.decide import RenderMode, RenderPlan, RenderPlanner
from govsi.render.renderer import QueueFull, Renderer, RenderFailed, RenderOff
from govsi.render.routes import Document
from govsi.render.scripts import rendering_adds
from govsi.stats import Count
from govsi.web.extract import ExtractedLinks

logger = logging.getLogger(__name__)


def merge(plain: ExtractedLinks, rendered: ExtractedLinks) -> ExtractedLinks:
    """Links and images of both versions: the served HTML's first, then the DOM's new ones."""
    return ExtractedLinks(
        links=list(dict.fromkeys(plain.links + rendered.links)),
        images=list(dict.fromkeys(plain.images + rendered.images)),
        base_url=rendered.base_url or plain.base_url,
        nofollow=plain.nofollow or rendered.nofollow,
        canonical=plain.canonical and rendered.canonical,
        too_long=plain.too_long + rendered.too_long,
    )


def document_of(response: Response) -> Document:
    """The fetched response as the browser gets it."""
    return Document(response.status, header_pairs(response.headers), response.body)


def _send_rendered(crawler: Crawler, url: str, html: str, response: Response) -> None:
    # To the archive (WarcMiddleware), when there is one.
    crawler.signals.send_catch_log(dom_rendered, url=url, html=html, response=response)


class Rendering:
    def __init__(self, planner: RenderPlanner, suffixes: tuple[str, ...], count: Count) -> None:
        """``planner``: ``auto``'s decisions per script signature; ``suffixes``: the crawl's
        scope (a script from there is the page's own)."""
        self.planner = planner
        self.suffixes = suffixes
        self.count = count
        # The Renderer extension, once the crawl has one (``bind``).
        self.renderer: Renderer | None = None
        # Pages waiting for their signature's samples, woken when it is decided.
        self.decisions: dict[str, asyncio.Event] = {}
        # Told of each page rendered: the URL its response came from (as requested: the
        # archive names the DOM after that response's record), its DOM and the response
        # (the spider sends it on to the archive).
        self.on_rendered: Callable[[str, str, Response], None] = lambda url, html, response: None

    @classmethod
    def from_crawler(cls, crawler: Crawler, suffixes: tuple[str, ...], count: Count) -> Rendering:
        """The crawl's rendering part: ``auto``'s planner from RENDER_SAMPLE_PAGES and
        RENDER_RESAMPLE_EVERY; each rendered DOM sent on to the archive
        (``dom_rendered``)."""
        s = crawler.settings
        planner = RenderPlanner(
            samples=s.getint("RENDER_SAMPLE_PAGES"),
            resample_every=s.getint("RENDER_RESAMPLE_EVERY"),
        )
        rendering = cls(planner, suffixes, count)
        rendering.on_rendered = partial(_send_rendered, crawler)
        return rendering

    def open(self, crawler: Crawler) -> None:
        """At the crawl's start: bind the crawl's Renderer extension, when it has one."""
        self.bind(crawler.get_extension(Renderer))

    def bind(self, renderer: Renderer | None) -> None:
        """The crawl's Renderer: extensions are built after the spider."""
        self.renderer = renderer

    @property
    def mode(self) -> RenderMode:
        return self.renderer.mode if self.renderer is not None else "off"

    def plan_inputs(self) -> PlanInputs | None:
        """What ``read_tree`` reads for the render plan; None when nothing renders."""
        if self.mode == "off":
            return None
        return PlanInputs(self.suffixes, needs=self.mode == "auto")

    def plan(self, reading: Reading) -> RenderPlan:
        """The page's plan ("render", "sample", "wait" or "plain"), from its reading."""
        if self.mode == "off":
            return "plain"
        if self.mode == "always":
            return "render"
        if reading.signature is None:
            # Nothing a browser would run on load: rendering could only cost.
            self.count("govsi/render/plan/no_scripts")
            return "plain"
        if reading.needs is not None:
            self.count(f"govsi/render/needed/{reading.needs.replace(' ', '_')}")
            self.count("govsi/render/plan/needed")
            return "render"
        plan = self.planner.plan(reading.signature)
        self.count(f"govsi/render/plan/{plan}")
        return plan

    async def decide(
        self, url: str, plan: RenderPlan, signature: str | None, size: int
    ) -> RenderPlan:
        """The plan ``plan`` gave, once the samples of the page's signature are in when it
        said "wait" (bounded: a sample that never returns counts as plain, and so does a
        page of ``size`` bytes as fetched that the queue cannot take: ``Renderer.admits``)."""
        while plan == "wait" and signature is not None and self.renderer is not None:
            event = self.decisions.setdefault(signature, asyncio.Event())
            try:
                with self.renderer.waiting_for(url, size):
                    await asyncio.wait_for(event.wait(), 2 * self.renderer.timeout + 5)
            except QueueFull:
                return "plain"
            except TimeoutError:
                self.count("govsi/render/wait_timeout")
                return "plain"
            plan = self.planner.plan(signature)
            self.count(f"govsi/render/plan/after_wait/{plan}")
        return plan

    def decided(self, signature: str) -> None:
        """Wake the pages waiting for ``signature`` when its samples have decided it."""
        if self.planner.decided(signature):
            self._wake(signature)

    def _wake(self, signature: str) -> None:
        """The pages waiting for ``signature``'s samples plan again."""
        event = self.decisions.pop(signature, None)
        if event is not None:
            event.set()

    async def render(
        self, response: Response, record: FetchedPage, plan: RenderPlan, signature: str | None
    ) -> str | None:
        """The page's DOM, or None to keep the plain version when rendering failed
        (recorded in the page; a sample that failed gives its signature up)."""
        assert self.renderer is not None
        try:
            rendered = await self.renderer.render(record.url, document_of(response))
        except RenderOff:
            # Said once when it was switched off; the page is simply not rendered.
            self.count("govsi/render/skipped_off")
        except QueueFull as e:
            logger.info("%s not rendered: %s; keeping it as fetched", record.url, e)
            record.fetch_error = f"rendering failed: {e}"[:1000]
            if plan == "sample" and signature is not None:
                # Not a sample's outcome: a page waiting for it is sampled instead.
                self.planner.returned(signature)
                self._wake(signature)
            return None
        except RenderFailed as e:
            logger.warning("rendering %s failed (%s); keeping it as fetched", record.url, e)
            self.count("govsi/render/failed")
            record.fetch_error = f"rendering failed: {e}"[:1000]
        else:
            self.on_rendered(response.url, rendered.html, response)
            return rendered.html
        if plan == "sample" and signature is not None:
            self.planner.given_up(signature)
            self.decided(signature)
        return None

    def learn(self, url: str, signature: str, plain: Reading, rendered: Reading) -> None:
        """What a sample of ``signature`` showed: whether rendering ``url`` added to it."""
        if plain.yielded is None or rendered.yielded is None:
            return
        gained = rendering_adds(plain.yielded, rendered.yielded)
        self.count(f"govsi/render/sampled/{'gained' if gained else 'same'}")
        decided = self.planner.learn(signature, gained)
        self.decided(signature)
        if decided is not None:
            self.count(f"govsi/render/decided/{decided}")
            logger.info(
                "script signature %s (first seen on %s): %s",
                signature,
                url,
                "rendering adds content, its pages are rendered"
                if decided == "render"
                else "rendering adds nothing, its pages are fetched plainly",
            )
