"""The Renderer's queue (govsi.render.renderer): at most RENDER_MAX_PAGES render at once;
a host with RENDER_QUEUE_HOST_PAGES pages waiting is held back alone, every host when the
whole queue is full (RENDER_QUEUE_PAGES pages, or RENDER_QUEUE_BYTES of their bodies), and
released as the queue drains."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

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


def test_large_pages_fill_the_queue_by_their_bytes() -> None:
    async def scenario() -> None:
        browser, holds = HeldBrowser(), []  # type: ignore[var-annotated]
        r = make_renderer(browser, mode="always", max_pages=1, queue_pages=10,
                          queue_bytes=1000, host_queue_pages=10)  # fmt: skip
        r.bind(lambda url: None, lambda host, held: holds.append((host, held)), lambda rs: [])
        large = b"x" * 600
        # One renders; its bytes do not count: it waits for nothing.
        tasks = [asyncio.ensure_future(_render(r, "http://a.gov.si/0", large))]
        await asyncio.sleep(0)
        assert browser.rendering == 1 and r.waiting_bytes == 0 and not r.saturated()
        # 600 bytes wait: under the bound; 1 200: over it, with 2 of 10 pages.
        tasks.append(asyncio.ensure_future(_render(r, "http://a.gov.si/1", large)))
        await asyncio.sleep(0)
        assert r.waiting_bytes == 600 and not r.saturated() and holds == []
        tasks.append(asyncio.ensure_future(_render(r, "http://b.gov.si/1", large)))
        await asyncio.sleep(0)
        assert r.waiting == 2 and r.waiting_bytes == 1200
        assert r.saturated() and holds == [(None, True)]
        # Small pages still add to the hold, not to a second one.
        tasks.append(asyncio.ensure_future(_render(r, "http://c.gov.si/1")))
        await asyncio.sleep(0)
        assert holds == [(None, True)]
        browser.go.set()
        await asyncio.gather(*tasks)
        assert holds == [(None, True), (None, False)]
        assert r.waiting == 0 and r.waiting_bytes == 0 and not r.saturated()
        assert r.stats.get("govsi/render/queue_max_bytes") == 1200 + 13  # type: ignore[attr-defined]

    asyncio.run(scenario())


def test_no_bound_in_bytes_when_it_is_zero() -> None:
    async def scenario() -> None:
        browser, holds = HeldBrowser(), []  # type: ignore[var-annotated]
        r = make_renderer(browser, mode="always", max_pages=1, queue_pages=3, queue_bytes=0)
        r.bind(lambda url: None, lambda host, held: holds.append((host, held)), lambda rs: [])
        big = b"x" * 10_000_000
        tasks = [asyncio.ensure_future(_render(r, f"http://{h}.gov.si/", big)) for h in "abc"]
        await asyncio.sleep(0)
        assert r.waiting == 2 and not r.saturated() and holds == []
        browser.go.set()
        await asyncio.gather(*tasks)

    asyncio.run(scenario())
