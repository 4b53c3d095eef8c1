"""The crawl's Chromium, launched as the crawl launches it (sandboxed, fenced), probed by a
page: WebRTC sends no UDP packet anywhere, and a page past the V8 heap cap crashes alone.
No crawl here, only the browser."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import socket
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest

from govsi.render.engine import find_chromium, launch_options
from govsi.render.sandbox import sandboxed_launch
from testkit.listeners import UdpCounter

STUN_PROBE = """<!doctype html><title>p</title><script>
const pc = new RTCPeerConnection({iceServers: [{urls: 'stun:127.0.0.1:%d'}]});
pc.createDataChannel('x');
pc.createOffer().then(offer => pc.setLocalDescription(offer));
</script>"""


@contextlib.asynccontextmanager
async def crawl_browser(js_heap_mb: int = 0) -> AsyncIterator[Any]:
    """Chromium launched with the crawl's own launch options."""
    from playwright.async_api import async_playwright

    chromium = find_chromium()
    if chromium is None:
        pytest.fail("Chromium is missing: scripts/setup.sh installs Debian's chromium")
    launch = sandboxed_launch(chromium, "nobody")
    refuser = socket.socket()
    refuser.bind(("127.0.0.1", 0))
    host, port = refuser.getsockname()
    try:
        async with async_playwright() as p:
            options = launch_options(launch.executable, f"{host}:{port}", [], js_heap_mb)
            browser = await p.chromium.launch(**options)
            yield browser
            await browser.close()
    finally:
        refuser.close()
        if launch.executable != chromium:
            shutil.rmtree(os.path.dirname(launch.executable), ignore_errors=True)


async def _render(html: str, wait: float = 2.0) -> None:
    async with crawl_browser() as browser:
        page = await browser.new_page()

        async def serve(route: Any) -> None:
            await route.fulfill(status=200, content_type="text/html", body=html)

        await page.route("**", serve)
        await page.goto("http://probe.gov.si/")
        await asyncio.sleep(wait)


def test_webrtc_sends_no_udp_packet() -> None:
    stun = UdpCounter()
    try:
        asyncio.run(_render(STUN_PROBE % stun.port))
        time.sleep(0.5)
    finally:
        stun.close()
    assert stun.packets == 0


# 400 MB of arrays: fine under Chromium's default heap limit (checked by hand: 50).
GREEDY = """() => {
  const a = [];
  for (let i = 0; i < 50; i++) a.push(new Array(1e6).fill(i));
  return a.length;
}"""


def test_a_page_past_the_v8_heap_cap_crashes_alone() -> None:
    async def scenario() -> None:
        async with crawl_browser(js_heap_mb=64) as browser:
            greedy = await browser.new_page()
            with pytest.raises(Exception, match="crashed"):
                await greedy.evaluate(GREEDY)
            # The browser and its other pages go on.
            other = await browser.new_page()
            assert await other.evaluate("() => 6 * 7") == 42

    asyncio.run(scenario())
