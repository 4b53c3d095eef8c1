"""A Renderer (govsi.render.renderer) built from plain values for tests, without a crawl."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from scrapy import Request

from govsi.render.httpcache import ResourceCache
from govsi.render.renderer import Renderer
from tests.support.stats import DictStats


def make_renderer(
    browser: Any = None,
    crawl: Callable[[Request], None] = lambda request: None,
    *,
    mode: str = "auto",
    max_pages: int = 4,
    queue_pages: int = 32,
    queue_bytes: int = 64 * 1024 * 1024,
    host_queue_pages: int = 8,
    max_requests: int = 150,
    stats: Any = None,
) -> Renderer:
    return Renderer(
        stats if stats is not None else DictStats(),
        crawl,
        mode=mode,
        suffixes=["gov.si"],
        max_pages=max_pages,
        queue_pages=queue_pages,
        queue_bytes=queue_bytes,
        host_queue_pages=host_queue_pages,
        max_dom=1_000_000,
        timeout=5.0,
        idle_close=60.0,
        settle_quiet=0.1,
        cache=ResourceCache(max_bytes=1000, max_entry_bytes=100, heuristic_ttl=60),
        browser=browser,
        max_requests=max_requests,
        max_url_length=2000,
    )
