"""The crawl's browser (govsi.render.browser) as the crawl's event loop sees it: Playwright's
messages are not held behind the crawl's own work, and scrapy-playwright's per-request
debug log costs nothing when the crawl does not log at DEBUG."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator

import pytest
from scrapy.settings import Settings

from govsi.render import browser


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
    # begun while the crawl was busy took seconds (bench/README).
    assert asyncio.run(_turns_taken_by_wait_for_next_task()) >= 50
    assert browser.dispatch_promptly() is True
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
    monkeypatch.setattr(browser, "find_chromium", lambda configured=None: "/bin/true")
    settings = Settings({"RENDER_JS": "auto", "LOG_LEVEL": log_level, "RENDER_MAX_PAGES": 4})
    assert browser.configure(settings) == "auto"
    # The handler attaches its request and response loggers when the logger's effective
    # level is DEBUG or lower, which NOTSET is under Scrapy (its root logger is NOTSET).
    assert playwright_log.level == expected
