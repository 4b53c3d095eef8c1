"""JavaScript rendering, crawled for real with Debian's Chromium: what each RENDER_JS mode
finds and stores, and what the browser never requests."""

from __future__ import annotations

import time
from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path

import pytest

from govsi.rendering import find_chromium
from tests.simweb import jsweb
from tests.simweb.expected import E2E_SETTINGS
from tests.simweb.server import SimWeb
from tests.support.crawl import CrawlRun, kill_browsers, query, run_crawl, start_crawl

S = "http://spa.gov.si"
T = "http://staticno.gov.si"


@pytest.fixture(scope="module")
def js_web() -> Iterator[SimWeb]:
    if find_chromium() is None:
        pytest.fail("Chromium is missing: scripts/setup.sh installs Debian's chromium")
    web = jsweb.build().start()
    yield web
    web.stop()


def crawl(
    web: SimWeb, tmp_path: Path, mode: str, **settings: object
) -> tuple[CrawlRun, dict[str, tuple]]:
    db_url = f"sqlite:///{tmp_path / 'crawldb.sqlite3'}"
    web.reset_log()
    run = run_crawl(
        web,
        db_url,
        tmp_path,
        jsweb.SEEDS,
        RENDER_JS=mode,
        RENDER_BROWSER_ARGS=jsweb.browser_args(web),
        RENDER_TIMEOUT=3,
        **{**E2E_SETTINGS, **settings},
    )
    assert run.returncode == 0, run.log[-3000:]
    assert "Traceback" not in run.log, run.log[-5000:]
    rows = query(db_url, "SELECT url, page_type_code, rendered, html_content FROM page")
    return run, {url: (kind, rendered, html) for url, kind, rendered, html in rows}


def js_only(pages: dict[str, tuple]) -> set[str]:
    return {p for p in jsweb.JS_ONLY if f"{S}{p}" in pages and pages[f"{S}{p}"][0] == "HTML"}


def never_requested_by_the_browser(web: SimWeb) -> None:
    hits = web.requested()
    refused = ("/site.css", "/font.woff2", "/zasebno/skrito.js", "/lib.js")
    assert not [h for h in hits if h.target in refused]
    assert not [h for h in hits if h.host == "cdn.example.com"]


def test_off_sees_only_the_served_html(js_web: SimWeb, tmp_path: Path) -> None:
    _, pages = crawl(js_web, tmp_path, "off")
    assert js_only(pages) == set()
    assert not any(rendered for _, rendered, _ in pages.values())
    assert f"{S}/app" in pages and pages[f"{S}/app"][0] == "HTML"
    assert not [h for h in js_web.requested() if h.target in ("/app.js", "/api/menu")]


def test_always_renders_every_html_page_and_finds_what_scripts_add(
    js_web: SimWeb, tmp_path: Path
) -> None:
    # Three pages per browser context: contexts are retired and closed along the way.
    run, pages = crawl(js_web, tmp_path, "always", RENDER_CONTEXT_PAGES=3)
    assert js_only(pages) == jsweb.JS_ONLY
    html_pages = {u: v for u, v in pages.items() if v[0] == "HTML" and u != f"{S}/visi"}
    assert all(rendered for _, rendered, _ in html_pages.values()), html_pages.keys()
    # The stored content is the DOM after scripts ran.
    assert 'href="/storitve-js"' in pages[f"{S}/app"][2]
    images = {u for (u,) in query(f"sqlite:///{tmp_path / 'crawldb.sqlite3'}",
                                  "SELECT url FROM image")}  # fmt: skip
    assert f"{S}/grb-js.png" in images
    never_requested_by_the_browser(js_web)
    # A page that hangs the renderer is kept as fetched, with the reason.
    db_url = f"sqlite:///{tmp_path / 'crawldb.sqlite3'}"
    ((rendered, error, html),) = query(
        db_url, f"SELECT rendered, fetch_error, html_content FROM page WHERE url = '{S}/visi'"
    )
    assert not rendered and error.startswith("rendering failed") and "Visi" in html
    assert run.stats.get("govsi/render/failed") == 1
    # Every page the browser opened was closed; contexts were rotated and closed.
    opened = run.stats["playwright/page_count"]
    assert run.stats.get("govsi/render/pages_closed") == opened
    assert run.stats["playwright/context_count"] >= opened // 3
    assert run.stats.get("govsi/render/contexts_closed", 0) >= opened // 3 - 1


def test_auto_renders_what_needs_it_and_learns_hosts(js_web: SimWeb, tmp_path: Path) -> None:
    run, pages = crawl(js_web, tmp_path, "auto")
    assert js_only(pages) == jsweb.JS_ONLY
    # The app shell plainly needed a browser; spa.gov.si's first sample showed that
    # rendering adds links there; staticno.gov.si's samples showed it adds nothing.
    assert pages[f"{S}/app"][1] is True or pages[f"{S}/app"][1] == 1
    static_rendered = [u for u, v in pages.items() if u.startswith(T) and v[1]]
    assert len(static_rendered) <= 3  # the samples, then plain HTTP
    assert run.stats.get("govsi/render/needed/app_root") == 1
    never_requested_by_the_browser(js_web)


def test_the_browser_asks_a_host_no_faster_than_its_delay(js_web: SimWeb, tmp_path: Path) -> None:
    delay = 0.4
    run, pages = crawl(js_web, tmp_path, "always", DEFAULT_CRAWL_DELAY=delay)
    assert js_only(pages) == jsweb.JS_ONLY
    # Scripts and their fetches went out (the browser's own requests to the page's host)...
    assert {"/a.js", "/b.js", "/app.js"} <= {h.target for h in js_web.requested()}
    # ...each after the host's delay, counted at the server like every other request.
    for host in ("spa.gov.si", "staticno.gov.si"):
        times = sorted(h.time for h in js_web.requested() if h.host == host)
        gaps = [b - a for a, b in pairwise(times)]
        assert min(gaps) >= delay * 0.95, (host, min(gaps))
    never_requested_by_the_browser(js_web)
    assert run.stats.get("govsi/render/browser/robots") == 1
    assert run.stats.get("govsi/render/browser/other_host") == 1


def test_a_browser_that_dies_is_started_again(js_web: SimWeb, tmp_path: Path) -> None:
    db_url = f"sqlite:///{tmp_path / 'crawldb.sqlite3'}"
    js_web.reset_log()
    running = start_crawl(
        js_web, db_url, tmp_path, jsweb.SEEDS, RENDER_JS="always",
        RENDER_BROWSER_ARGS=jsweb.browser_args(js_web), RENDER_TIMEOUT=3,
        DEFAULT_CRAWL_DELAY=0.3, **E2E_SETTINGS,
    )  # fmt: skip
    # Kill the crawl's Chromium processes once the browser has rendered something.
    deadline = time.monotonic() + 60
    while not [h for h in js_web.requested() if h.target == "/app.js"]:
        assert time.monotonic() < deadline, "the browser never rendered a page"
        time.sleep(0.05)
    assert kill_browsers(running) >= 1
    run = running.wait()
    assert run.returncode == 0, run.log[-3000:]
    assert int(run.stats.get("playwright/browser_count", 0)) >= 2  # type: ignore[call-overload]
    rows = query(db_url, "SELECT url, page_type_code, rendered FROM page")
    pages = {url: (kind, rendered) for url, kind, rendered in rows}
    # Nothing lost: every page is stored, rendered after the restart or kept as fetched.
    assert {f"{S}/", f"{S}/app", f"{S}/navadna", f"{T}/"} <= {
        u for u, (kind, _) in pages.items() if kind == "HTML"
    }
    assert sum(1 for _, rendered in pages.values() if rendered) >= 5
