"""What the crawl's browser takes from inside scrapy-playwright and Playwright is still there.

``govsi.render.engine.PageEngine`` overrides and calls private methods of scrapy-playwright's
handler, ``govsi.render.browser.Browser`` reads its attributes, and ``dispatch_promptly``
changes a private constant of Playwright's client. None of these is a promised interface:
an upgrade that moves or renames one fails here, naming it, instead of in a crawl that
renders nothing, or renders each page seconds late. Only classes, modules and their source
are looked at: no driver, no browser is started.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
from collections.abc import Callable
from typing import Any

import pytest
from playwright.async_api import BrowserContext, Page
from scrapy import Request
from scrapy_playwright import handler as sp_handler
from scrapy_playwright.handler import Config, ScrapyPlaywrightDownloadHandler

from govsi.render import engine

HANDLER = "scrapy_playwright.handler.ScrapyPlaywrightDownloadHandler"
# Stand-ins for the arguments: only whether a signature takes them is checked.
SELF, REQUEST, SPIDER, EVENT = object(), Request("http://a.gov.si/"), object(), object()


@pytest.fixture
def page_engine(monkeypatch: pytest.MonkeyPatch) -> type:
    """PageEngine; Playwright's client is put back as it was afterwards (``handler_class``
    tells it to dispatch at once, for the whole process)."""
    try:
        from playwright._impl.utils import tasks
    except ImportError:
        pass
    else:
        if hasattr(tasks, "_MAX_TURNS"):
            monkeypatch.setattr(tasks, "_MAX_TURNS", tasks._MAX_TURNS)
    return engine.handler_class()


def _shape(function: Callable[..., Any]) -> list[tuple[str, Any, bool]]:
    # Names, kinds and which have defaults: what a caller relies on; annotations are not.
    return [
        (p.name, p.kind, p.default is not p.empty)
        for p in inspect.signature(function).parameters.values()
    ]


def _handler_method(name: str, user: str) -> Callable[..., Any]:
    method = getattr(ScrapyPlaywrightDownloadHandler, name, None)
    assert callable(method), f"{HANDLER}.{name} is gone or renamed; {user}"
    return method


# -- methods PageEngine overrides -----------------------------------------------------------
OVERRIDDEN = {
    "_create_page": "govsi.render.engine.PageEngine._create_page overrides it, calls it "
    "through super() and takes the handler's stats listeners off the new page",
    "_download_request_with_retry": "govsi.render.engine.PageEngine overrides it with a "
    "page's way through the browser (routes, navigation, settled DOM)",
}


@pytest.mark.parametrize("name", OVERRIDDEN)
def test_the_methods_page_engine_overrides_keep_their_signature(
    page_engine: type, name: str
) -> None:
    base = _handler_method(name, OVERRIDDEN[name])
    assert inspect.iscoroutinefunction(base), (
        f"{HANDLER}.{name} is no longer a coroutine function; {OVERRIDDEN[name]}"
    )
    ours = getattr(page_engine, name)
    assert ours is not base, f"PageEngine no longer overrides {HANDLER}.{name}"
    assert _shape(ours) == _shape(base), (
        f"{HANDLER}.{name}{inspect.signature(base)} no longer matches "
        f"PageEngine.{name}{inspect.signature(ours)}; {OVERRIDDEN[name]}"
    )


# -- methods called as the crawl calls them -------------------------------------------------
# (name, a call as govsi.render makes it, awaited, who calls it)
CALLED: list[tuple[str, tuple[Any, ...], dict[str, Any], bool, str]] = [
    ("_launch", (SELF,), {}, True, "PageEngine.start awaits self._launch()"),
    ("_create_page", (SELF, REQUEST, SPIDER), {}, True,
     "PageEngine._create_page awaits super()._create_page(request, spider)"),
    ("_create_page", (SELF,), {"request": REQUEST, "spider": SPIDER}, True,
     "PageEngine._download_request_with_retry awaits self._create_page(request=, spider=)"),
    ("_increment_request_stats", (SELF, EVENT), {}, False,
     "PageEngine._create_page removes it as the page's 'request' listener"),
    ("_increment_response_stats", (SELF, EVENT), {}, False,
     "PageEngine._create_page removes it as the page's 'response' listener"),
    ("download_request", (SELF, REQUEST), {}, True,
     "govsi.render.browser.Browser awaits engine.download_request(request)"),
    ("close", (SELF,), {}, True, "govsi.render.browser.Browser awaits engine.close()"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("name", "args", "kwargs", "awaited", "user"), CALLED, ids=[c[0] for c in CALLED]
)
def test_the_handler_methods_govsi_calls_take_its_arguments(
    name: str, args: tuple[Any, ...], kwargs: dict[str, Any], awaited: bool, user: str
) -> None:
    method = _handler_method(name, user)
    assert inspect.iscoroutinefunction(method) is awaited, (
        f"{HANDLER}.{name} is {'no longer' if awaited else 'now'} a coroutine function; {user}"
    )
    try:
        inspect.signature(method).bind(*args, **kwargs)
    except TypeError as e:
        pytest.fail(f"{HANDLER}.{name}{inspect.signature(method)} no longer takes the call "
                    f"govsi makes ({e}); {user}")  # fmt: skip


# -- the handler's own path goes through the overrides --------------------------------------
# (method, what its source must still contain, why)
ON_THE_PATH = [
    ("download_request", "self._download_request(",
     "a page goes from download_request to _download_request"),
    ("_download_request", "self._download_request_with_retry(",
     "_download_request hands each page to PageEngine's _download_request_with_retry"),
    ("_create_page", "self._increment_request_stats",
     "_create_page adds the listener PageEngine takes off again"),
    ("_create_page", "self._increment_response_stats",
     "_create_page adds the listener PageEngine takes off again"),
    ("_create_page", "playwright_context_kwargs",
     "_create_page makes a context with Browser's CONTEXT_KWARGS (no service workers, no "
     "downloads)"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("name", "needle", "why"),
    ON_THE_PATH,
    ids=[f"{p[0]}-{p[1].removeprefix('self.').rstrip('(')}" for p in ON_THE_PATH],
)
def test_the_handlers_path_still_goes_through_what_page_engine_changes(
    name: str, needle: str, why: str
) -> None:
    source = inspect.getsource(_handler_method(name, why))
    assert needle in source, f"{HANDLER}.{name} no longer uses {needle.rstrip('(')}: {why}"


# -- attributes -----------------------------------------------------------------------------
def test_the_handlers_config_takes_the_launch_options_browser_sets() -> None:
    user = "govsi.render.browser.Browser sets engine.config.launch_options before start()"
    assert "self.config = Config" in inspect.getsource(ScrapyPlaywrightDownloadHandler.__init__), (
        f"{HANDLER}.__init__ no longer sets self.config; {user}"
    )
    params = getattr(Config, "__dataclass_params__", None)
    assert params is not None, f"scrapy_playwright.handler.Config is no longer a dataclass; {user}"
    assert "launch_options" in {f.name for f in dataclasses.fields(Config)}, (
        f"scrapy_playwright.handler.Config.launch_options is gone; {user}"
    )
    assert not params.frozen, f"scrapy_playwright.handler.Config is frozen now; {user}"


def test_the_handler_says_when_its_browser_has_launched() -> None:
    # Browser tells Chromium failing to start (the sandbox: rendering off) from a page's
    # failure by the handler having no ``browser`` yet and no browser counted.
    user = "govsi.render.browser.Browser._first_launch_failed reads it"
    source = inspect.getsource(ScrapyPlaywrightDownloadHandler)
    assert "self.browser = " in source, f"{HANDLER}.browser is no longer set; {user}"
    assert '"playwright/browser_count"' in source, (
        f"{HANDLER} no longer counts playwright/browser_count; {user}"
    )


def test_the_handlers_logger_is_the_one_configure_quiets() -> None:
    assert sp_handler.logger.name == "scrapy-playwright", (
        f"scrapy_playwright.handler logs as {sp_handler.logger.name!r}; "
        "govsi.render.engine.configure_playwright filters and levels the 'scrapy-playwright' logger"
    )


# -- Playwright -----------------------------------------------------------------------------
def test_playwrights_client_still_has_the_wait_dispatch_promptly_turns_off() -> None:
    user = ("govsi.render.engine.dispatch_promptly sets it to 0 (renders behind a busy crawl "
            "waited seconds otherwise)")  # fmt: skip
    try:
        tasks = importlib.import_module("playwright._impl.utils.tasks")
    except ImportError:
        pytest.fail(f"playwright._impl.utils.tasks is gone; {user}")
    assert isinstance(getattr(tasks, "_MAX_TURNS", None), int), (
        f"playwright._impl.utils.tasks._MAX_TURNS is gone or no longer a number; {user}"
    )


# (object, method, a call as govsi.render makes it, who calls it)
PLAYWRIGHT_CALLS: list[tuple[type, str, tuple[Any, ...], dict[str, Any], str]] = [
    (Page, "goto", (SELF,), {"url": "http://a.gov.si/", "wait_until": "domcontentloaded",
                             "timeout": 1000.0}, "PageEngine._download_request_with_retry"),
    (Page, "close", (SELF,), {"run_before_unload": False}, "Browser._release"),
    (Page, "is_closed", (SELF,), {}, "Browser and PageEngine, before reusing a tab"),
    (Page, "content", (SELF,), {}, "govsi.render.engine.settled_dom"),
    (Page, "remove_listener", (SELF, "request", EVENT), {}, "PageEngine._create_page"),
    (BrowserContext, "close", (SELF,), {}, "Browser._release, closing a retired context"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("owner", "name", "args", "kwargs", "user"),
    PLAYWRIGHT_CALLS,
    ids=[f"{c[0].__name__}.{c[1]}" for c in PLAYWRIGHT_CALLS],
)
def test_the_playwright_calls_govsi_makes_are_still_taken(
    owner: type, name: str, args: tuple[Any, ...], kwargs: dict[str, Any], user: str
) -> None:
    method = getattr(owner, name, None)
    what = f"playwright.async_api.{owner.__name__}.{name}"
    assert callable(method), f"{what} is gone or renamed; {user} calls it"
    try:
        inspect.signature(method).bind(*args, **kwargs)
    except TypeError as e:
        pytest.fail(f"{what}{inspect.signature(method)} no longer takes the call govsi "
                    f"makes ({e}); {user}")  # fmt: skip


def test_a_page_still_says_its_context_and_url() -> None:
    for name in ("context", "url"):
        assert isinstance(inspect.getattr_static(Page, name, None), property), (
            f"playwright.async_api.Page.{name} is no longer a property; "
            "govsi.render.browser.Browser and PageEngine read it"
        )
