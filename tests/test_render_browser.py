"""The crawl's browser (govsi.render.browser) as the crawl's event loop sees it: Playwright's
messages are not held behind the crawl's own work, scrapy-playwright's per-request debug
log costs nothing when the crawl does not log at DEBUG, and a settled page costs two
messages to the page."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator
from typing import Any

import pytest
from scrapy.settings import Settings

from govsi.render import config, engine
from govsi.render.renderer import Refused
from govsi.render.routes import PageRoutes, Reply
from tests.support.renderer import make_renderer


async def _turns_taken_by_wait_for_next_task() -> int:
    """How many turns of a loop that always has other work ready (as a crawl's does)
    Playwright's client lets pass after one message from its driver."""
    from playwright._impl.utils.tasks import wait_for_next_task

    turns = 0
    busy = True

    def crawl_work() -> None:
        nonlocal turns
        turns += 1
        if busy:
            asyncio.get_running_loop().call_soon(crawl_work)

    asyncio.get_running_loop().call_soon(crawl_work)
    await asyncio.sleep(0)
    before = turns
    await wait_for_next_task()
    taken = turns - before
    busy = False
    await asyncio.sleep(0)
    return taken


@pytest.fixture
def max_turns() -> Iterator[None]:
    from playwright._impl.utils import tasks

    saved = tasks._MAX_TURNS
    yield
    tasks._MAX_TURNS = saved


@pytest.mark.usefixtures("max_turns")
def test_playwright_messages_do_not_wait_for_a_busy_crawl() -> None:
    # Without it, each message waits up to 100 turns of the crawl's callbacks: renders
    # begun while the crawl was busy took seconds (bench/render_speed.py).
    assert asyncio.run(_turns_taken_by_wait_for_next_task()) >= 50
    assert engine.dispatch_promptly() is True
    assert asyncio.run(_turns_taken_by_wait_for_next_task()) <= 1


@pytest.fixture
def playwright_log() -> Iterator[logging.Logger]:
    log = logging.getLogger("scrapy-playwright")
    saved = log.level
    log.setLevel(logging.NOTSET)
    yield log
    log.setLevel(saved)


@pytest.mark.parametrize(
    ("log_level", "expected"),
    [("INFO", logging.INFO), ("WARNING", logging.INFO), ("DEBUG", logging.NOTSET)],
)
def test_scrapy_playwrights_per_request_log_is_off_unless_the_crawl_logs_debug(
    playwright_log: logging.Logger,
    monkeypatch: pytest.MonkeyPatch,
    log_level: str,
    expected: int,
) -> None:
    monkeypatch.setattr(config, "find_chromium", lambda configured=None: "/bin/true")
    settings = Settings({"RENDER_JS": "auto", "LOG_LEVEL": log_level, "RENDER_MAX_PAGES": 4})
    assert config.configure(settings) == "auto"
    # The handler attaches its request and response loggers when the logger's effective
    # level is DEBUG or lower, which NOTSET is under Scrapy (its root logger is NOTSET).
    assert playwright_log.level == expected


class RecordingPage:
    """A page that has loaded, whose DOM is ``dom``; records each message sent to it."""

    calls: list[str]

    def __init__(self, dom: str, href: str = "http://a.gov.si/p") -> None:
        self.dom, self.href = dom, href
        self.calls: list[str] = []

    async def evaluate(self, script: str, arg: Any = None) -> Any:
        if "addEventListener('load'" in script:
            self.calls.append("evaluate: wait for load")
            return True
        self.calls.append("evaluate: snapshot")
        size = len(self.dom)
        return [self.href, size, self.dom if size <= arg else None]

    def __getattr__(self, name: str) -> Any:
        # Anything else (wait_for_function, content, ...) would be another message.
        raise AssertionError(f"page.{name} was used")


def _routes() -> PageRoutes:
    """A page's routes when only its settling is under test (nothing is fetched)."""
    return PageRoutes("http://a.gov.si/p", Reply(200, (), b""), None, None, None)  # type: ignore[arg-type]


def _settle_and_check(page: RecordingPage, max_dom: int = 1_000_000) -> str:
    renderer = make_renderer()
    renderer.max_dom = max_dom
    routes = _routes()
    routes.last_activity -= 1  # its network has been quiet for a second
    return asyncio.run(engine.settled_dom(page, renderer._steps(routes, "http://a.gov.si/p")))


def test_a_settled_page_costs_two_messages_to_the_page() -> None:
    # Its load is waited for in the page (not a function polled on every animation frame);
    # its address, size and DOM come back in one evaluate, not a check and page.content().
    page = RecordingPage("<!DOCTYPE html><html><body>Vsebina</body></html>")
    assert _settle_and_check(page) == page.dom
    assert page.calls == ["evaluate: wait for load", "evaluate: snapshot"]


def test_a_dom_past_the_limit_never_leaves_the_page() -> None:
    page = RecordingPage("<html>" + "x" * 500 + "</html>")
    with pytest.raises(Refused, match="DOWNLOAD_MAXSIZE"):
        _settle_and_check(page, max_dom=100)


def test_a_page_that_became_another_document_is_refused() -> None:
    page = RecordingPage("<html></html>", href="http://drug.gov.si/")
    with pytest.raises(Refused, match="another document"):
        _settle_and_check(page)


def test_a_page_whose_load_never_comes_fails_with_a_clear_reason() -> None:
    class NeverLoads:
        async def evaluate(self, script: str, arg: Any = None) -> Any:
            await asyncio.Event().wait()

    routes = _routes()
    with pytest.raises(TimeoutError, match="did not load within"):
        asyncio.run(routes.settled(NeverLoads(), timeout=0.1, quiet=0.0))
