"""Tests for govsi.middlewares: which bodies are kept, browser context rotation, and the
address guard's middleware in Scrapy's chain."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from scrapy import Request
from scrapy.core.downloader.middleware import DownloaderMiddlewareManager
from scrapy.downloadermiddlewares.retry import RetryMiddleware
from scrapy.exceptions import CannotResolveHostError
from scrapy.utils.test import get_crawler

from govsi.middlewares import AddressGuardMiddleware, keep_body
from govsi.net.guard import AddressGuard, AddressRefused
from govsi.render.browser import ContextRotation

KEEP_CASES = [
    # content type, url, kind, store binary, store images, kept
    ("text/html; charset=utf-8", "https://www.gov.si/", "page", False, False, True),
    ("application/pdf", "https://www.gov.si/a.pdf", "page", True, False, True),
    ("application/pdf", "https://www.gov.si/a.pdf", "page", False, False, False),
    ("application/octet-stream", "https://www.gov.si/a.docx", "page", True, False, True),
    ("application/zip", "https://www.gov.si/a.zip", "page", True, True, False),
    ("image/png", "https://www.gov.si/a.png", "page", True, True, False),
    ("image/png", "https://www.gov.si/a.png", "image", False, True, True),
    ("image/png", "https://www.gov.si/a.png", "image", True, False, False),
    (None, "https://www.gov.si/stran", "page", False, False, True),  # may sniff as HTML
]


@pytest.mark.parametrize(("ctype", "url", "kind", "binary", "images", "kept"), KEEP_CASES)
def test_keep_body(ctype: str | None, url: str, kind: str, binary: bool, images: bool,
                   kept: bool) -> None:  # fmt: skip
    assert keep_body(ctype, url, kind, binary, images) is kept


class Ctx:
    def __init__(self, name: str) -> None:
        self.name = name


def test_pages_go_to_a_new_context_every_per_context_pages() -> None:
    rotation = ContextRotation(3)
    assert [rotation.assign() for _ in range(7)] == [0, 0, 0, 1, 1, 1, 2]


def test_a_retired_context_closes_when_its_last_page_is_done() -> None:
    rotation = ContextRotation(2)
    first = [rotation.assign(), rotation.assign()]
    assert first == [0, 0]
    c0 = Ctx("0")
    assert rotation.done(0, c0) == []  # generation 0 is still current
    assert rotation.assign() == 1  # 0 is retired now, one page still out
    assert rotation.done(1, Ctx("1")) == []
    assert rotation.done(0, c0) == [c0]  # its last page: closed
    assert rotation.done(1, None) == []  # nothing known is left to close


def test_a_retired_context_is_never_closed_under_a_page_in_flight() -> None:
    # More pages at once than pages per context: generations pass while a page of an old
    # one is still being rendered (closing its context would fail that page).
    rotation = ContextRotation(1)
    c0, c1 = Ctx("0"), Ctx("1")
    assert [rotation.assign() for _ in range(4)] == [0, 1, 2, 3]
    assert rotation.done(1, c1) == [c1]  # retired, and its only page is back
    rotation.contexts[0] = c0  # learned from an earlier page; 0 has a page out
    assert rotation.done(3, Ctx("3")) == []  # 3 is current; 0 and 2 have pages out
    c2 = Ctx("2")
    assert rotation.done(2, c2) == [c2]  # 0 stays: its page is still out
    assert rotation.done(0, c0) == [c0]  # its page is back: now it closes


def test_a_restarted_browser_context_replaces_the_dead_one() -> None:
    rotation = ContextRotation(2)
    rotation.assign()
    rotation.assign()
    rotation.done(0, Ctx("dead"))
    fresh = Ctx("fresh")
    rotation.assign()  # generation 1; 0 retired with one page out
    assert rotation.done(0, fresh) == [fresh]


# -- the address guard in Scrapy's downloader middleware chain ---------------------------------
class NoReactor:
    nameResolver: Any = None

    def installNameResolver(self, resolver: Any) -> Any:
        previous, self.nameResolver = self.nameResolver, resolver
        return previous


def _download(request: Request, guarded: bool = True) -> tuple[Any, dict[str, Any], int]:
    """``request`` through RetryMiddleware (and the guard's middleware after it, as in
    the settings) to a handler that fails as Scrapy's HTTP/1.1 handler does when the
    guard left a host no address: what comes out, the stats, the handler's calls."""
    crawler = get_crawler(settings_dict={"RETRY_TIMES": 2})
    crawler.spider = crawler._create_spider("govsi")
    guard = AddressGuard((), crawler.stats)
    guard.install(NoReactor())
    guard.admit("zasebni.gov.si", "127.0.0.1")  # refused when it was resolved
    middlewares: list[Any] = [RetryMiddleware.from_crawler(crawler)]
    if guarded:
        middlewares.append(AddressGuardMiddleware(guard))
    manager = DownloaderMiddlewareManager(*middlewares, crawler=crawler)
    calls = 0

    async def handler(request: Request) -> Any:
        nonlocal calls
        calls += 1
        raise CannotResolveHostError(f"no results for hostname lookup: {request.url}")

    async def run() -> Any:
        try:
            return await manager.download_async(handler, request)
        except Exception as e:
            return e

    out = asyncio.run(run())
    return out, crawler.stats.get_stats(), calls


def test_a_refused_connection_keeps_the_reason_and_is_not_retried() -> None:
    out, stats, _ = _download(Request("http://zasebni.gov.si/"))
    assert isinstance(out, AddressRefused)
    assert str(out).startswith("address guard: zasebni.gov.si resolves to 127.0.0.1, a loopback")
    assert stats.get("retry/count", 0) == 0
    # Without the guard's middleware Scrapy retries it, the reason lost.
    out, stats, _ = _download(Request("http://zasebni.gov.si/"), guarded=False)
    assert isinstance(out, Request) and stats["retry/count"] == 1


def test_another_dns_failure_is_left_to_scrapy() -> None:
    out, stats, _ = _download(Request("http://nikjer.gov.si/"))
    assert isinstance(out, Request) and stats["retry/count"] == 1


def test_a_request_with_a_proxy_never_reaches_the_handler() -> None:
    out, stats, calls = _download(
        Request("http://10.0.0.1/secret", meta={"proxy": "http://proxy.example:3128"})
    )
    assert isinstance(out, AddressRefused) and "through the proxy" in str(out)
    assert calls == 0 and stats.get("retry/count", 0) == 0
    assert stats["govsi/guard/proxy_refused"] == 1


def test_the_spider_records_the_refusal_as_the_pages_error() -> None:
    from types import SimpleNamespace

    from twisted.python.failure import Failure

    from govsi.requestmeta import META_URL
    from govsi.spiders.govsi import GovsiSpider

    out, _, _ = _download(Request("http://zasebni.gov.si/"))
    failure = Failure(out)
    url = "http://zasebni.gov.si/"
    failure.request = Request(url, meta={META_URL: url, "depth": 1})  # type: ignore[attr-defined]
    crawler = get_crawler(GovsiSpider, {"ROBOTSTXT_USER_AGENT": "govsi-crawler"})
    spider = GovsiSpider.from_crawler(crawler)
    stats = crawler.stats
    spider.crawler = SimpleNamespace(stats=stats, get_extension=lambda cls: None)  # type: ignore[assignment]
    (page,) = spider.page_failed(failure)
    assert page.page_type == "ERROR"
    assert page.fetch_error == str(out) and "a loopback address" in page.fetch_error
