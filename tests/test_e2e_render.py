"""JavaScript rendering, crawled for real with Debian's Chromium: what each RENDER_JS mode
finds and stores, that a page is downloaded once, which pages auto renders, and that a
rendered page cannot make the browser reach anything on its own."""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path

import pytest
from warcio.archiveiterator import ArchiveIterator

from govsi.render.engine import find_chromium
from testkit.crawl import CrawlRun, kill_browsers, query, run_crawl, start_crawl
from testkit.simweb import jsweb
from testkit.simweb.expected import E2E_SETTINGS
from testkit.simweb.server import SimWeb

S = "http://spa.gov.si"
T = "http://staticno.gov.si"
C = "http://cms.gov.si"


@pytest.fixture(scope="module")
def js_web() -> Iterator[SimWeb]:
    if find_chromium() is None:
        pytest.fail("Chromium is missing: scripts/setup.sh installs Debian's chromium")
    web = jsweb.build().start()
    yield web
    web.stop()


def crawl(
    web: SimWeb, tmp_path: Path, mode: str, seeds: list[str] | None = None, **settings: object
) -> tuple[CrawlRun, dict[str, tuple]]:
    db_url = f"sqlite:///{tmp_path / 'crawldb.sqlite3'}"
    web.reset_log()
    run = run_crawl(
        web,
        db_url,
        tmp_path,
        seeds or jsweb.SEEDS,
        RENDER_JS=mode,
        **{"RENDER_TIMEOUT": 3, **E2E_SETTINGS, **settings},
    )
    assert run.returncode == 0, run.log[-3000:]
    assert "Traceback" not in run.log, run.log[-5000:]
    rows = query(db_url, "SELECT url, page_type_code, rendered, html_content FROM page")
    return run, {url: (kind, rendered, html) for url, kind, rendered, html in rows}


def js_only(pages: dict[str, tuple]) -> set[str]:
    return {p for p in jsweb.JS_ONLY if f"{S}{p}" in pages and pages[f"{S}{p}"][0] == "HTML"}


def rendered(pages: dict[str, tuple], prefix: str) -> set[str]:
    return {u.removeprefix(prefix) for u, v in pages.items() if u.startswith(prefix) and v[1]}


def each_url_requested_once(web: SimWeb) -> None:
    """One download per page: no URL (document or script) was asked for twice."""
    twice = {k: n for k, n in Counter((h.host, h.target) for h in web.requested()).items() if n > 1}
    assert not twice, twice


def archived_renders(warc: Path, pages: dict[str, tuple]) -> None:
    """The archive has each rendered page's DOM, as crawldb stores it, under its own
    ``urn:dom:`` URI and tied to the response it was rendered from, and the scripts and
    data the renders fetched, each under its URL."""
    by_id: dict[str, tuple[str, str]] = {}
    doms: dict[str, tuple[str | None, bytes]] = {}
    for path in warc.iterdir():
        with open(path, "rb") as f:
            for r in ArchiveIterator(f):
                h = r.rec_headers
                uri = h.get_header("WARC-Target-URI")
                by_id[h.get_header("WARC-Record-ID")] = (r.rec_type, uri)
                if r.rec_type == "conversion":
                    # Under its own URI, never the page's (replay shows the response).
                    page = h.get_header("WARC-Refers-To-Target-URI")
                    assert uri == f"urn:dom:{page}"
                    doms[page] = (h.get_header("WARC-Refers-To"), r.content_stream().read())
    rendered_urls = {u for u, v in pages.items() if v[1]}
    assert rendered_urls and set(doms) == rendered_urls
    for url, (refers_to, dom) in doms.items():
        assert by_id[refers_to or ""] == ("response", url)
        assert dom.decode() == pages[url][2]
    fetched = {uri for kind, uri in by_id.values() if kind in ("response", "revisit")}
    assert {f"{S}/app.js", f"{S}/api/menu"} <= fetched


def never_requested(web: SimWeb) -> None:
    hits = web.requested()
    # Styles and fonts are never needed; robots.txt forbids /zasebno/. (Another in-scope
    # host's script, staticno.gov.si/lib.js, is fetched like any request to that host.)
    refused = ("/site.css", "/font.woff2", "/zasebno/skrito.js")
    assert not [h for h in hits if h.target in refused]
    assert not [h for h in hits if h.host == "cdn.example.com"]


def test_off_sees_only_the_served_html_and_never_starts_a_browser(
    js_web: SimWeb, tmp_path: Path
) -> None:
    run, pages = crawl(js_web, tmp_path, "off")
    assert js_only(pages) == set()
    assert not any(r for _, r, _ in pages.values())
    assert f"{S}/app" in pages and pages[f"{S}/app"][0] == "HTML"
    assert not [h for h in js_web.requested() if h.target in ("/app.js", "/api/menu")]
    assert "govsi/render/browser/starts" not in run.stats


def test_always_renders_every_html_page_from_one_download(js_web: SimWeb, tmp_path: Path) -> None:
    # Three pages per browser context: contexts are retired and closed along the way.
    warc = tmp_path / "warc"
    run, pages = crawl(js_web, tmp_path, "always", RENDER_CONTEXT_PAGES=3, WARC_DIR=str(warc))
    assert js_only(pages) == jsweb.JS_ONLY
    archived_renders(warc, pages)
    html_pages = {u for u, v in pages.items() if v[0] == "HTML" and u != f"{S}/visi"}
    assert html_pages == {u for u in html_pages if pages[u][1]}
    # The stored content is the DOM after scripts ran.
    assert 'href="/storitve-js"' in pages[f"{S}/app"][2]
    images = {u for (u,) in query(f"sqlite:///{tmp_path / 'crawldb.sqlite3'}",
                                  "SELECT url FROM image")}  # fmt: skip
    assert f"{S}/grb-js.png" in images
    # Every page, and every script the template shares, was downloaded once.
    each_url_requested_once(js_web)
    assert run.stats["govsi/render/browser/document"] == run.stats["govsi/render/pages"] + 1
    # The template's script: fetched once, then served from the crawl's cache (or shared
    # with a render that was waiting for the same request).
    served = run.stats.get("govsi/render/browser/cache_hits", 0)
    served += run.stats.get("govsi/render/browser/shared", 0)
    assert served >= len(jsweb.CMS_PAGES)
    never_requested(js_web)
    # Every page asks for a stylesheet and a font: the browser never asked the routes for
    # them (the document's REFUSED_AT_SOURCE policy), while the out-of-scope script was.
    refused = {k.rpartition("/")[2] for k in run.stats if "/browser/refused/" in k}
    assert refused.isdisjoint({"stylesheet", "font", "image", "media"}), refused
    assert run.stats["govsi/render/browser/refused/out_of_scope"] >= 1
    # A page that hangs the renderer is kept as fetched, with the reason.
    db_url = f"sqlite:///{tmp_path / 'crawldb.sqlite3'}"
    ((was_rendered, error, html),) = query(
        db_url, f"SELECT rendered, fetch_error, html_content FROM page WHERE url = '{S}/visi'"
    )
    assert not was_rendered and error.startswith("rendering failed") and "Visi" in html
    assert run.stats.get("govsi/render/failed") == 1
    # A tab that rendered well rendered the next page of its context; the one that failed
    # was closed at once; contexts were rotated and closed (with their tabs).
    renders = run.stats["govsi/render/pages"] + run.stats["govsi/render/failed"]
    reused = run.stats.get("govsi/render/pages_reused", 0)
    assert run.stats["playwright/page_count"] + reused == renders
    assert run.stats["govsi/render/pages_closed"] == run.stats["govsi/render/failed"]
    assert run.stats.get("govsi/render/contexts_closed", 0) >= renders // 3 - 1
    # The browser ran in its sandbox (as an unprivileged account when the crawl is root).
    assert run.stats["govsi/render/browser/sandbox"] == 1
    assert "WITHOUT its sandbox" not in run.log


def test_auto_renders_the_pages_that_need_it_not_their_hosts(
    js_web: SimWeb, tmp_path: Path
) -> None:
    run, pages = crawl(js_web, tmp_path, "auto")
    assert js_only(pages) == jsweb.JS_ONLY
    assert f"{C}/iz-aplikacije-js" in pages
    # spa.gov.si: the app shell plainly needed a browser; the home page's inline script
    # was sampled and adds a link; a page whose scripts are all elsewhere is not rendered.
    assert {"/app", "/"} <= rendered(pages, S)
    assert "/navadna" not in rendered(pages, S)
    # staticno.gov.si: onclick, javascript: links and JSON-LD never run on load.
    assert rendered(pages, T) == set()
    # cms.gov.si: its template was sampled three times and adds nothing; its app page
    # is rendered, the other pages are not.
    assert "/aplikacija" in rendered(pages, C)
    assert len(rendered(pages, C) - {"/aplikacija"}) == 3
    assert run.stats["govsi/render/decided/plain"] >= 1
    assert run.stats["govsi/render/needed/app_root"] == 2
    assert run.stats["govsi/render/plan/no_scripts"] >= 7
    each_url_requested_once(js_web)
    never_requested(js_web)


def test_a_site_nothing_runs_on_never_starts_the_browser(js_web: SimWeb, tmp_path: Path) -> None:
    run, pages = crawl(js_web, tmp_path, "auto", seeds=[f"{T}/"])
    assert len(pages) == 7 and rendered(pages, T) == set()
    assert "govsi/render/browser/starts" not in run.stats
    assert run.stats["govsi/render/plan/no_scripts"] == 7


def test_the_browser_waits_for_the_delay_and_closes_when_idle(
    js_web: SimWeb, tmp_path: Path
) -> None:
    delay = 0.4
    run, pages = crawl(js_web, tmp_path, "always", DEFAULT_CRAWL_DELAY=delay, RENDER_IDLE_CLOSE=1)
    assert js_only(pages) == jsweb.JS_ONLY
    # Scripts and their fetches went out through the crawler...
    assert {"/a.js", "/b.js", "/app.js", "/api/menu"} <= {h.target for h in js_web.requested()}
    # ...each after the host's delay, counted at the server like every other request.
    for host in ("spa.gov.si", "staticno.gov.si", "cms.gov.si"):
        times = sorted(h.time for h in js_web.requested() if h.host == host)
        gaps = [b - a for a, b in pairwise(times)]
        assert min(gaps) >= delay * 0.95, (host, min(gaps))
    never_requested(js_web)
    assert run.stats["govsi/render/browser/refused/robots"] == 1
    assert run.stats["govsi/render/browser/refused/out_of_scope"] >= 1
    # One page at a time here: a tab that rendered well renders the next page.
    renders = run.stats["govsi/render/pages"] + run.stats.get("govsi/render/failed", 0)
    reused = run.stats.get("govsi/render/pages_reused", 0)
    assert reused >= renders // 2
    assert run.stats["playwright/page_count"] + reused == renders


def test_an_idle_browser_is_closed(js_web: SimWeb, tmp_path: Path) -> None:
    # The app page is rendered first; then come seconds of plain pages, nothing to render:
    # staticno.gov.si's eight requests take 8 x 1.2 s from the start, several seconds more
    # than starting the browser and rendering /app take on a loaded machine (idle checks
    # run every second).
    run, pages = crawl(
        js_web, tmp_path, "auto", seeds=[f"{S}/app", f"{T}/"], DEFAULT_CRAWL_DELAY=1.2,
        RENDER_IDLE_CLOSE=1,
    )  # fmt: skip
    assert pages[f"{S}/app"][1]
    assert run.stats["govsi/render/browser/starts"] == 1
    assert run.stats["govsi/render/browser/idle_closes"] == 1
    assert "closing the browser" in run.log


def test_a_browser_that_dies_is_started_again(js_web: SimWeb, tmp_path: Path) -> None:
    db_url = f"sqlite:///{tmp_path / 'crawldb.sqlite3'}"
    js_web.reset_log()
    running = start_crawl(
        js_web, db_url, tmp_path, jsweb.SEEDS, RENDER_JS="always", RENDER_TIMEOUT=3,
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
    pages = {url: (kind, r) for url, kind, r in rows}
    # Nothing lost: every page is stored, rendered after the restart or kept as fetched.
    assert {f"{S}/", f"{S}/app", f"{S}/navadna", f"{T}/"} <= {
        u for u, (kind, _) in pages.items() if kind == "HTML"
    }
    assert sum(1 for _, r in pages.values() if r) >= 5


class Listener:
    """A loopback port that records every connection made to it."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.connections: list[bytes] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            conn.settimeout(1)
            try:
                self.connections.append(conn.recv(200))
            except OSError:
                self.connections.append(b"")
            conn.close()


def test_a_hostile_page_cannot_take_the_browser_anywhere(tmp_path: Path) -> None:
    if find_chromium() is None:
        pytest.fail("Chromium is missing: scripts/setup.sh installs Debian's chromium")
    trap = Listener()
    web = jsweb.build(trap_port=trap.port).start()
    try:
        # A timeout long enough that a loaded machine fails /velik for its size, not its time.
        run, pages = crawl(
            web, tmp_path, "always", seeds=["http://zlobni.gov.si/"], RENDER_TIMEOUT=20
        )
        time.sleep(1)  # anything still on its way would have arrived
    finally:
        web.stop()
    assert trap.connections == []
    # The page was rendered, from its own document: its script ran, and navigating away
    # did not replace it.
    _, was_rendered, html = pages["http://zlobni.gov.si/"]
    db_url = f"sqlite:///{tmp_path / 'crawldb.sqlite3'}"
    sql = "SELECT fetch_error FROM page WHERE url = 'http://zlobni.gov.si/'"
    why = (query(db_url, sql), [line for line in run.log.splitlines() if "zlobni" in line][-20:])
    assert was_rendered and "Skripta je tekla." in html and "Zlobni" in html, why
    # So was the page that leaves while its picture loads, which never gets a load event.
    _, was_rendered, html = pages["http://zlobni.gov.si/odhod"]
    assert was_rendered and "Odhod je tekel." in html, query(db_url, sql.replace("/'", "/odhod'"))
    # The same-host fetch went through the crawler; its redirect to loopback was refused;
    # the form post, the WebSocket and the service worker never reached the server, and
    # the download was refused (the crawler fetched the file once, as a link of the page).
    targets = Counter(h.target for h in web.requested() if h.host == "zlobni.gov.si")
    assert targets["/skok"] == 1
    assert targets["/oddaj"] == targets["/ws"] == targets["/sw.js"] == 0
    assert targets["/datoteka.bin"] == 1
    stats = run.stats
    assert stats["govsi/render/browser/refused/download"] == 1
    assert stats["govsi/render/browser/refused/websocket"] == 2
    assert stats["govsi/render/browser/popups_closed"] == 1
    assert stats["govsi/render/browser/refused/redirect_out_of_scope"] == 1
    assert stats["govsi/render/browser/refused/method"] == 1
    assert stats["govsi/render/browser/refused/out_of_scope"] >= 2
    assert stats["govsi/render/browser/refused/navigation"] >= 1
    # A page whose script grows it past DOWNLOAD_MAXSIZE is kept as it was fetched.
    _, was_rendered, html = pages["http://zlobni.gov.si/velik"]
    assert not was_rendered and "Velik" in html and len(html) < 100_000
    said = [line for line in run.log.splitlines() if "/velik failed" in line]
    assert stats.get("govsi/render/too_large") == 1, said


def test_a_page_making_thousands_of_requests_gets_its_cap_and_the_host_goes_on(
    tmp_path: Path,
) -> None:
    web = jsweb.build(with_flood=True).start()
    try:
        # A delay, so the render's requests would queue ahead of the host's pages.
        run, pages = crawl(
            web, tmp_path, "auto", seeds=["http://poplava.gov.si/"], DEFAULT_CRAWL_DELAY=0.2,
            # Long enough for the first requests to go out on a busy machine.
            RENDER_MAX_REQUESTS_PER_PAGE=20, RENDER_TIMEOUT=10,
        )  # fmt: skip
    finally:
        web.stop()
    hits = [h.target for h in web.requested() if h.host == "poplava.gov.si"]
    api = [t for t in hits if t.startswith("/api/")]
    stats = run.stats
    # At most the cap went out, none of them past MAX_URL_LENGTH; the rest were refused
    # in the browser, and what was still queued when the render ended was cancelled.
    assert 0 < len(api) <= 20 and all(len(t) < 2000 for t in api)
    assert stats["govsi/render/browser/refused/url_too_long"] >= 1
    assert stats["govsi/render/browser/refused/too_many_requests"] >= 1
    assert stats.get("govsi/render/browser/requests", 0) <= 20
    assert len(api) + stats.get("govsi/render/browser/cancelled", 0) == stats.get(
        "govsi/render/browser/requests", 0
    )
    # The render ended, and the host's ordinary pages were all stored.
    assert "http://poplava.gov.si/" in pages
    for p in jsweb.FLOOD_PAGES:
        assert pages[f"http://poplava.gov.si{p}"][0] == "HTML", p


def test_the_crawl_says_at_start_when_the_browser_cannot_be_sandboxed(
    js_web: SimWeb, tmp_path: Path
) -> None:
    run, pages = crawl(
        js_web, tmp_path, "auto", seeds=[f"{S}/app"], RENDER_BROWSER_USER="no-such-user"
    )
    if os.geteuid() == 0:
        # Root without the account: said once at start, no browser, pages stored plainly.
        assert run.log.count("rendering is OFF") == 1
        assert "no-such-user" in run.log
        assert run.stats["govsi/render/disabled"] == 1
        assert "govsi/render/browser/starts" not in run.stats
        assert f"{S}/app" in pages and not pages[f"{S}/app"][1]
    else:
        assert "rendering is OFF" not in run.log


def test_a_browser_that_cannot_start_sandboxed_is_never_run_without(
    js_web: SimWeb, tmp_path: Path
) -> None:
    # A Chromium that refuses to start unless told --no-sandbox (as one does where user
    # namespaces are restricted), where the unprivileged account can reach it. Every
    # start is noted; one with --no-sandbox would render the page.
    chromium = find_chromium()
    folder = Path(tempfile.mkdtemp(prefix="govsi-test-"))
    starts = folder / "starts"
    try:
        folder.chmod(0o777)
        fake = folder / "chromium"
        fake.write_text(
            f'#!/bin/sh\necho "$*" >> {starts}\ncase " $* " in *" --no-sandbox "*) exec '
            f'{chromium} "$@";; esac\n'
            'echo "FATAL: No usable sandbox! (user namespaces restricted)" >&2; exit 1\n'
        )
        fake.chmod(0o755)
        run, pages = crawl(js_web, tmp_path, "always", seeds=[f"{S}/"], CHROMIUM_PATH=fake)
        started = starts.read_text().splitlines() if starts.exists() else []
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    assert started and not [a for a in started if "--no-sandbox" in a.split()]
    assert run.log.count("rendering is OFF") == 1, run.log[-3000:]
    assert "No usable sandbox" in run.log
    assert run.stats["govsi/render/disabled"] == 1
    assert run.stats["govsi/render/browser/sandbox"] == 0
    assert "govsi/render/pages" not in run.stats
    # The crawl went on: the host's pages, those that waited for the browser included,
    # are stored as fetched.
    spa = {u: v for u, v in pages.items() if u.startswith(S)}
    assert len(spa) >= 3 and not any(v[1] for v in spa.values())
    assert all(v[2] for v in spa.values() if v[0] == "HTML")
