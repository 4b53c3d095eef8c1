"""A browser that cannot run sandboxed is never run (govsi.render.browser, renderer): the
first failure switches rendering off for the crawl, every page waiting for the browser
is handed back to be stored as fetched, and no switch can take the sandbox down."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

import pytest
from scrapy.settings import Settings

from govsi.render.browser import BrowserUnavailable
from govsi.render.config import RenderConfig, configure
from govsi.render.engine import browser_args, launch_error
from govsi.render.renderer import RenderFailed, RenderOff
from govsi.render.routes import Document
from tests.support.renderer import make_renderer

LAUNCH_FAILED = (
    "BrowserType.launch: Target page, context or browser has been closed\nBrowser logs:\n"
    "Chromium sandboxing failed!\n====\nCall log:\n  - <launched> pid=7\n"
    "  - [pid=7][err] FATAL: No usable sandbox! Update your kernel\n  - [pid=7] <kill>\n"
)


class NoSandbox:
    """A browser whose first start fails: every render raises BrowserUnavailable."""

    def __init__(self) -> None:
        self.renders = 0
        self.go = asyncio.Event()

    async def render(self, url: str, install: Any, steps: Any) -> Any:
        self.renders += 1
        await self.go.wait()
        raise BrowserUnavailable("it failed to start sandboxed")


def test_a_failed_start_switches_rendering_off_and_the_waiting_pages_go_back() -> None:
    async def scenario() -> None:
        browser = NoSandbox()
        r = make_renderer(browser, mode="always", max_pages=1)
        doc = Document(200, (), b"<html></html>")
        pages = [asyncio.ensure_future(r.render(f"http://a.gov.si/{i}", doc)) for i in range(4)]
        await asyncio.sleep(0)
        assert browser.renders == 1 and r.waiting == 3
        browser.go.set()
        outcomes = await asyncio.gather(*pages, return_exceptions=True)
        # One start tried, none after it; every page back to be stored as fetched.
        assert browser.renders == 1
        assert all(isinstance(o, RenderOff) for o in outcomes), outcomes
        assert r.mode == "off" and r.waiting == 0 and r.active == 0
        with pytest.raises(RenderOff):
            await r.render("http://a.gov.si/later", doc)

    asyncio.run(scenario())


def test_a_pages_own_failure_leaves_rendering_on() -> None:
    class Fails:
        async def render(self, url: str, install: Any, steps: Any) -> Any:
            raise RuntimeError("Page.goto: Timeout 3000ms exceeded")

    r = make_renderer(Fails(), mode="always")
    with pytest.raises(RenderFailed) as failed:
        asyncio.run(r.render("http://a.gov.si/", Document(200, (), b"")))
    assert not isinstance(failed.value, RenderOff) and r.mode == "always"


def test_the_reason_names_what_chromium_said() -> None:
    said = launch_error(Exception(LAUNCH_FAILED))
    assert said.startswith("BrowserType.launch: Target page")
    assert said.endswith("FATAL: No usable sandbox! Update your kernel")
    assert "\n" not in said


@pytest.mark.parametrize(
    ("setting", "expected"),
    [
        ("--lang=sl,--no-sandbox", ["--lang=sl"]),
        (["--disable-setuid-sandbox", "--mute-audio"], ["--mute-audio"]),
        ('["--no-zygote-sandbox", "--window-size=1280,800"]', ["--window-size=1280,800"]),
        ("-no-sandbox,--no-sandbox=1,--NO-SANDBOX,--lang=sl", ["--lang=sl"]),
        ("", []),
    ],
)
def test_no_setting_takes_the_sandbox_down(setting: Any, expected: list[str]) -> None:
    assert browser_args(setting) == expected


def test_a_refused_switch_is_said_once_as_the_crawl_is_set_up(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    fake = tmp_path / "chromium"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    settings = Settings({
        "RENDER_JS": "auto", "CHROMIUM_PATH": str(fake),
        "RENDER_BROWSER_ARGS": "-no-sandbox,--lang=sl,--proxy-server=http://evil:3128",
    })  # fmt: skip
    settings.setmodule("govsi.settings", priority="default")
    with caplog.at_level(logging.ERROR, "govsi.render.browser"):
        assert configure(settings) == "auto"
    config = RenderConfig.from_settings(settings)
    assert config.browser_args == ("--lang=sl",)
    assert config.refused_args == ("-no-sandbox", "--proxy-server=http://evil:3128")
    (line,) = [r.getMessage() for r in caplog.records]
    assert line.startswith(
        "RENDER_BROWSER_ARGS: ['-no-sandbox', '--proxy-server=http://evil:3128'] refused"
    )
