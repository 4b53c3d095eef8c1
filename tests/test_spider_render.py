"""The spider's side of rendering (govsi.responses.rendering, GovsiSpider.parse_html), without a
crawl: a page waiting for its script signature's samples sends its links out at once, and
is stored as the samples decide."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

from scrapy.http import HtmlResponse, Request
from scrapy.utils.test import get_crawler

from govsi.frontier.seen import seen_key
from govsi.items import DiscoveredPage, FetchedPage
from govsi.page.reading import read_tree
from govsi.requestmeta import KIND_PAGE, META_KIND, META_URL
from govsi.spiders.govsi import GovsiSpider
from govsi.web.extract import parse_html
from tests.support.renderer import make_renderer
from tests.support.stats import DictStats

# Text enough that the page plainly does not need a browser: its signature decides.
TEXT = "Vlada je na današnji seji sprejela sklep o spremembah uredbe. " * 12
PAGE = (
    f"<html><body><p>{TEXT}</p><a href='/a'>a</a> <a href='/b'>b</a>"
    "<script>var _paq = [];</script></body></html>"
)


class Crawled(list[Request]):
    """The engine: requests handed to it become known, as the scheduler makes them."""

    def __init__(self) -> None:
        super().__init__()
        self.known: set[str] = set()

    def crawl(self, request: Request) -> None:
        self.append(request)
        self.known.add(seen_key(KIND_PAGE, request.meta[META_URL]))


def spider(
    samples: int, queue_bytes: int = 64 * 1024 * 1024, browser: Any = None
) -> tuple[GovsiSpider, Crawled, list[Any]]:
    crawler = get_crawler(GovsiSpider, {
        "ALLOWED_DOMAIN_SUFFIXES": ["gov.si"], "MAX_URL_LENGTH": 2000,
        "MAX_LINKS_PER_PAGE": 1000, "DEPTH_LIMIT": 0, "ROBOTSTXT_USER_AGENT": "govsi-crawler",
        "WORKER_MIN_PAGE_CHARS": 0, "MAX_PARSE_TAGS": 0, "TRAP_MAX_REPEATED_SEGMENTS": 3,
        "TRAP_MAX_QUERY_VARIANTS": 1000, "TRAP_MAX_QUERY_CHAIN": 0, "DUPLICATE_DETECTION": False,
        "RENDER_SAMPLE_PAGES": samples, "RENDER_RESAMPLE_EVERY": 200,
    })  # fmt: skip
    s = GovsiSpider.from_crawler(crawler)
    crawled, stored = Crawled(), []
    stats = DictStats()
    s.crawler = SimpleNamespace(stats=stats, engine=crawled)  # type: ignore[assignment]
    s.known = crawled.known  # type: ignore[assignment]
    s.store = SimpleNamespace(add=stored.append)  # type: ignore[assignment]
    s.parts.rendering.bind(
        make_renderer(browser, crawl=crawled.crawl, queue_bytes=queue_bytes, stats=stats)
    )
    return s, crawled, stored


def response(url: str) -> HtmlResponse:
    meta = {"depth": 0, META_KIND: KIND_PAGE, META_URL: url}
    request = Request(url, meta=meta)
    return HtmlResponse(url, body=PAGE.encode(), encoding="utf-8", request=request)


def test_a_page_waiting_for_samples_sends_its_links_out_before_the_decision() -> None:
    async def scenario() -> None:
        s, crawled, stored = spider(samples=1)
        planner, renderer = s.parts.rendering.planner, s.parts.rendering.renderer
        url = "https://x.gov.si/"
        record = FetchedPage(url=url, depth=0, page_type="HTML", accessed_time=None)
        # Another page of the same signature came first and is being sampled.
        first = "https://x.gov.si/prva"
        inputs = s.parts.rendering.plan_inputs()
        reading = read_tree(parse_html(PAGE), PAGE, first, max_links=10, plan=inputs)
        signature = reading.signature
        assert s.parts.rendering.plan(reading) == "sample" and signature is not None
        waiting = asyncio.ensure_future(s.parse_html(response(url), record))
        for _ in range(5):
            await asyncio.sleep(0)
        assert not waiting.done()  # it waits for its signature's sample,
        assert renderer is not None and renderer.waiting == 1  # within the queue's bounds
        wanted = {"https://x.gov.si/a", "https://x.gov.si/b"}
        assert {r.meta[META_URL] for r in crawled} == wanted
        assert {d.url for d in stored if isinstance(d, DiscoveredPage)} == wanted
        # The sample gained nothing: the waiting page is stored plainly, its links not
        # asked for twice.
        planner.learn(signature, False)
        s.parts.rendering.decided(signature)
        out = await asyncio.wait_for(waiting, 5)
        assert [o.url for o in out if isinstance(o, FetchedPage)] == [url]
        assert not [o for o in out if isinstance(o, Request)]
        assert not record.rendered and renderer.waiting == 0
        assert set(record.links) == wanted

    asyncio.run(scenario())


def test_a_page_the_queues_bytes_cannot_take_is_stored_plainly_without_waiting() -> None:
    async def scenario() -> None:
        s, _, _ = spider(samples=1, queue_bytes=len(PAGE) + 10)
        renderer = s.parts.rendering.renderer
        assert renderer is not None
        # A sample is out for the signature, and a page of it already waits.
        inputs = s.parts.rendering.plan_inputs()
        reading = read_tree(parse_html(PAGE), PAGE, "https://x.gov.si/prva", max_links=10,
                            plan=inputs)  # fmt: skip
        assert s.parts.rendering.plan(reading) == "sample"
        record = FetchedPage(url="https://x.gov.si/", depth=0, page_type="HTML",
                             accessed_time=None)  # fmt: skip
        waiting = asyncio.ensure_future(s.parse_html(response("https://x.gov.si/"), record))
        for _ in range(5):
            await asyncio.sleep(0)
        assert not waiting.done() and renderer.waiting == 1
        # The next would take the waiting bytes over the bound: stored now, as fetched.
        other = FetchedPage(url="https://y.gov.si/", depth=0, page_type="HTML",
                            accessed_time=None)  # fmt: skip
        out = await asyncio.wait_for(s.parse_html(response("https://y.gov.si/"), other), 5)
        assert [o.url for o in out if isinstance(o, FetchedPage)] == ["https://y.gov.si/"]
        assert not other.rendered and renderer.waiting == 1
        assert s.crawler.stats.get_value("govsi/render/over_queue_bytes") == 1
        waiting.cancel()

    asyncio.run(scenario())


def test_a_sample_refused_for_room_wakes_a_waiting_page_to_be_sampled_instead() -> None:
    async def scenario() -> None:
        # A browser never reached: its slots are all busy.
        s, _, _ = spider(samples=1, queue_bytes=len(PAGE) + 10, browser=object())
        renderer = s.parts.rendering.renderer
        assert renderer is not None
        renderer._slots = asyncio.Semaphore(0)
        renderer._idle_loop = SimpleNamespace(running=False)  # type: ignore[assignment]
        # A page of the signature waits for the first sample (and fills the bytes).
        first = FetchedPage(url="https://x.gov.si/1", depth=0, page_type="HTML",
                            accessed_time=None)  # fmt: skip
        inputs = s.parts.rendering.plan_inputs()
        reading = read_tree(parse_html(PAGE), PAGE, first.url, max_links=10, plan=inputs)
        signature = reading.signature
        assert s.parts.rendering.plan(reading) == "sample" and signature is not None
        waiting = asyncio.ensure_future(s.parse_html(response("https://x.gov.si/2"), FetchedPage(
            url="https://x.gov.si/2", depth=0, page_type="HTML", accessed_time=None)))  # fmt: skip
        for _ in range(5):
            await asyncio.sleep(0)
        assert not waiting.done() and renderer.waiting == 1
        # The sample finds no room: refused, kept as fetched, the signature undecided, and
        # the waiting page plans again: it becomes the sample (and waits for a slot).
        assert (
            await s.parts.rendering.render(response(first.url), first, "sample", signature) is None
        )
        assert "RENDER_QUEUE_BYTES" in (first.fetch_error or "")
        assert not s.parts.rendering.planner.decided(signature)
        for _ in range(5):
            await asyncio.sleep(0)
        assert s.crawler.stats.get_value("govsi/render/plan/after_wait/sample") == 1
        assert not waiting.done() and renderer.waiting == 1  # now waiting for a slot
        waiting.cancel()

    asyncio.run(scenario())
