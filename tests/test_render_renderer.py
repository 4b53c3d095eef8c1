"""The Renderer's queue (govsi.render.renderer): at most RENDER_MAX_PAGES render at once;
a host with RENDER_QUEUE_HOST_PAGES pages waiting is held back alone, every host when the
whole queue is full (RENDER_QUEUE_PAGES pages, or RENDER_QUEUE_BYTES of their bodies), and
released as the queue drains."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import pytest

from govsi.render.renderer import Renderer, RenderFailed
from govsi.render.routes import Document
from tests.support.renderer import make_renderer


class HeldBrowser:
    """Renders nothing until told to: every page waits on ``go``, then fails."""

    def __init__(self) -> None:
        self.go = asyncio.Event()
        self.rendering = 0

    async def render(self, url: str, install: Any, steps: Any) -> Any:
        self.rendering += 1
        await self.go.wait()
        raise RuntimeError("not rendered")


def renderer(browser: HeldBrowser, holds: list[tuple[str | None, bool]]) -> Renderer:
    r = make_renderer(browser, mode="always", max_pages=2, queue_pages=5, host_queue_pages=3)
    r.bind(lambda url: None, lambda host, held: holds.append((host, held)), lambda rs: [])
    return r


async def _render(r: Renderer, url: str, body: bytes = b"<html></html>") -> None:
    with contextlib.suppress(RenderFailed):
        await r.render(url, Document(200, (), body))


def test_one_host_filling_the_queue_holds_only_that_host() -> None:
    async def scenario() -> None:
        browser, holds = HeldBrowser(), []  # type: ignore[var-annotated]
        r = renderer(browser, holds)
        # Two render, three of a.gov.si wait: a.gov.si is held, nobody else.
        tasks = [asyncio.ensure_future(_render(r, f"http://a.gov.si/{i}")) for i in range(5)]
        await asyncio.sleep(0)
        assert browser.rendering == 2 and r.waiting == 3
        assert holds == [("a.gov.si", True)] and not r.saturated()
        # Another host's pages fill the whole queue: every host waits.
        tasks += [asyncio.ensure_future(_render(r, f"http://b.gov.si/{i}")) for i in range(2)]
        await asyncio.sleep(0)
        assert r.saturated() and holds[-1] == (None, True) and ("b.gov.si", True) not in holds
        browser.go.set()
        await asyncio.gather(*tasks)
        # Drained: each hold said once and released once, nothing waits.
        assert [h for h in holds if h[0]] == [("a.gov.si", True), ("a.gov.si", False)]
        assert [h for h in holds if h[0] is None] == [(None, True), (None, False)]
        assert r.waiting == 0 and not r.saturated() and not r.waiting_by_host
        assert r.stats.get("govsi/render/host_held") == 1  # type: ignore[attr-defined]

    asyncio.run(scenario())


def test_a_page_over_the_queues_bytes_is_not_rendered_and_holds_nobody() -> None:
    async def scenario() -> None:
        browser, holds = HeldBrowser(), []  # type: ignore[var-annotated]
        r = make_renderer(browser, mode="always", max_pages=1, queue_pages=10,
                          queue_bytes=1000, host_queue_pages=10)  # fmt: skip
        r.bind(lambda url: None, lambda host, held: holds.append((host, held)), lambda rs: [])
        large = b"x" * 600
        # One renders; its bytes do not count: it waits for nothing.
        tasks = [asyncio.ensure_future(_render(r, "http://a.gov.si/0", large))]
        await asyncio.sleep(0)
        assert browser.rendering == 1 and r.waiting_bytes == 0
        # The first to wait may, whatever its size; the next would take 1 200 bytes over
        # the 1 000: it fails at once, kept as fetched.
        tasks.append(asyncio.ensure_future(_render(r, "http://a.gov.si/1", large)))
        await asyncio.sleep(0)
        assert r.waiting == 1 and r.waiting_bytes == 600
        with pytest.raises(RenderFailed, match="RENDER_QUEUE_BYTES"):
            # Bounded: were it queued, it would wait for the held browser.
            await asyncio.wait_for(r.render("http://b.gov.si/1", Document(200, (), large)), 1)
        # A small page still fits; no host was held back for bytes.
        tasks.append(asyncio.ensure_future(_render(r, "http://c.gov.si/1")))
        await asyncio.sleep(0)
        assert r.waiting == 2 and r.waiting_bytes == 613 and holds == []
        assert r.stats.get("govsi/render/over_queue_bytes") == 1  # type: ignore[attr-defined]
        browser.go.set()
        await asyncio.gather(*tasks)
        assert r.waiting == 0 and r.waiting_bytes == 0
        assert r.stats.get("govsi/render/queue_max_bytes") == 613  # type: ignore[attr-defined]

    asyncio.run(scenario())


def test_no_bound_in_bytes_when_it_is_zero() -> None:
    async def scenario() -> None:
        browser = HeldBrowser()
        r = make_renderer(browser, mode="always", max_pages=1, queue_pages=5, queue_bytes=0)
        big = b"x" * 10_000_000
        tasks = [asyncio.ensure_future(_render(r, f"http://{h}.gov.si/", big)) for h in "abc"]
        await asyncio.sleep(0)
        assert r.waiting == 2 and r.waiting_bytes == 20_000_000
        browser.go.set()
        await asyncio.gather(*tasks)

    asyncio.run(scenario())
