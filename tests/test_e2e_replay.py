"""End-to-end: pywb, the replay tool web archives run, replays the crawl's WARC files as
they are. Every URL the crawl fetched, asked for in identity mode (``id_``), comes back with
the status and the bytes the server sent, rendered pages included (their DOM is a
derivative under its own ``urn:dom:`` URI, never a capture of the page); a rendered page
opened in Chromium through pywb shows the links its scripts make, from the scripts and data
the crawl archived.

pywb lives in ``.venv-replay`` (scripts/test.sh installs it there: it pins older packages
than the crawler's), or where ``PYWB_BIN`` says."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import time
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

import pytest
from warcio.archiveiterator import ArchiveIterator

from govsi.render.engine import find_chromium
from testkit.crawl import ROOT, run_crawl
from testkit.govcrawl import Result
from testkit.pgcluster import free_port
from testkit.simweb import jsweb
from testkit.simweb.expected import E2E_SETTINGS
from testkit.simweb.server import SimWeb

PYWB_BIN = Path(os.environ.get("PYWB_BIN") or ROOT / ".venv-replay" / "bin")
APP = "http://spa.gov.si/app"


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any) -> None:
        return None  # a replayed redirect is checked as it was served, not followed


_opener = urllib.request.build_opener(_NoRedirect)


def get(url: str) -> tuple[int, bytes]:
    """The status and body of ``url``, whatever the status."""
    try:
        with _opener.open(url, timeout=30) as got:
            return got.status, got.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


class Wayback:
    """A pywb collection of ``files`` and its ``wayback`` server on a free port."""

    def __init__(self, root: Path, name: str, files: list[Path]) -> None:
        self.name = name
        tool = PYWB_BIN / "wb-manager"
        subprocess.run([str(tool), "init", name], cwd=root, check=True, capture_output=True)
        subprocess.run([str(tool), "add", name, *map(str, files)], cwd=root, check=True,
                       capture_output=True)  # fmt: skip
        self.port = free_port()
        self.log = open(root / "wayback.log", "w")  # noqa: SIM115 (closed in stop)
        self.proc = subprocess.Popen(
            [str(PYWB_BIN / "wayback"), "-p", str(self.port), "-b", "127.0.0.1"],
            cwd=root, stdout=self.log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{self.port}/", timeout=2)
                return
            except urllib.error.HTTPError:
                return  # answering
            except OSError:
                assert self.proc.poll() is None, (root / "wayback.log").read_text()
                assert time.monotonic() < deadline, "wayback did not start"
                time.sleep(0.2)

    def url(self, stamp: str, modifier: str, target: str) -> str:
        return f"http://127.0.0.1:{self.port}/{self.name}/{stamp}{modifier}/{target}"

    def index(self, target: str) -> list[dict[str, str]]:
        """pywb's index lines for exactly ``target`` (its CDX API)."""
        api = f"http://127.0.0.1:{self.port}/{self.name}/cdx?output=json&url={quote(target)}"
        status, body = get(api)
        assert status == 200, (status, body[:300])
        return [json.loads(line) for line in body.decode().splitlines() if line.strip()]

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=30)
        self.log.close()


@pytest.fixture(scope="module")
def pywb() -> Path:
    if not (PYWB_BIN / "wayback").exists():
        if os.environ.get("CI"):
            pytest.fail(f"pywb is missing from {PYWB_BIN}: scripts/test.sh installs it")
        pytest.skip(f"pywb is not installed in {PYWB_BIN} (scripts/test.sh installs it)")
    return PYWB_BIN


def records(warc_dir: Path) -> Iterator[Any]:
    for path in sorted(warc_dir.glob("*.warc.gz")):
        with open(path, "rb") as f:
            yield from ArchiveIterator(f)


def stamp_of(record: Any) -> str:
    return "".join(c for c in record.rec_headers.get_header("WARC-Date") if c.isdigit())[:14]


def captures(warc_dir: Path) -> Iterator[tuple[str, str, Any]]:
    """(URI, 14-digit timestamp, record) of each response and revisit: what was fetched."""
    for r in records(warc_dir):
        if r.rec_type in ("response", "revisit"):
            yield r.rec_headers.get_header("WARC-Target-URI"), stamp_of(r), r


def served(web: SimWeb, uri: str) -> tuple[int, bytes]:
    """What the simulated web sent for ``uri``: its status and body (a gzip body decoded,
    as pywb hands it)."""
    parts = urlsplit(uri)
    sent = web.lookup(parts.hostname or "", parts.path + (f"?{parts.query}" if parts.query else ""))
    body = sent.body
    if sent.headers.get("Content-Encoding") == "gzip":
        body = gzip.decompress(body)
    return sent.status, body


def replays_as_served(wayback: Wayback, warc_dir: Path, web: SimWeb) -> list[str]:
    """Checks that every URL fetched (its response or revisit) replays in identity mode
    with the status and bytes the server sent, and that pywb's index has nothing else under
    it; returns the URLs checked."""
    fetched: Counter[str] = Counter()
    checked = []
    for uri, stamp, r in captures(warc_dir):
        fetched[uri] += 1
        if r.rec_headers.get_header("WARC-Truncated"):
            continue  # the server sent more than was kept, on purpose
        status, body = served(web, uri)
        assert int(r.http_headers.get_statuscode()) == status, uri
        assert get(wayback.url(stamp, "id_", uri)) == (status, body), uri
        # The latest capture, as a replay of the page without a date shows it.
        assert get(wayback.url("29991231235959", "id_", uri)) == (status, body), uri
        checked.append(uri)
    for uri, n in fetched.items():
        listed = [line for line in wayback.index(uri) if line.get("url") == uri]
        assert len(listed) == n, (uri, listed)
    return checked


def script_made_links(page: Any, wait: float = 30) -> list[str]:
    """The links in ``#app`` of whichever frame has them (the app's script makes them from
    /api/menu, which it fetches from the archive)."""
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        for frame in page.frames:
            found: list[str] = frame.eval_on_selector_all("#app a", "a => a.map(e => e.href)")
            if found:
                return found
        time.sleep(0.2)
    return []


@pytest.mark.parametrize("crawled", ["sqlite"], indirect=True)
def test_every_fetched_url_replays_with_the_bytes_served(
    crawled: Result, gov_web: SimWeb, pywb: Path, tmp_path: Path
) -> None:
    wayback = Wayback(tmp_path, "gov", sorted(crawled.warc_dir.glob("*.warc.gz")))
    try:
        checked = replays_as_served(wayback, crawled.warc_dir, gov_web)
    finally:
        wayback.stop()
    assert len(checked) >= 20
    kinds = {served(gov_web, u)[1][:4] for u in checked}
    assert b"%PDF" in kinds and any(served(gov_web, u)[0] == 404 for u in checked)


@dataclass
class Replayed:
    """A crawl's WARC files in pywb, and the web it crawled."""

    wayback: Wayback
    warc_dir: Path
    web: SimWeb


@pytest.fixture(scope="module")
def rendered(pywb: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Replayed]:
    """The app page crawled and rendered (its DOM archived), its WARC files in pywb."""
    work = tmp_path_factory.mktemp("rendered")
    web = jsweb.build().start()
    try:
        warc = work / "warc"
        run = run_crawl(
            web, f"sqlite:///{work / 'crawldb.sqlite3'}", work / "crawl", [APP],
            RENDER_JS="auto", RENDER_TIMEOUT=3, WARC_DIR=str(warc),
            **{**E2E_SETTINGS, "DEPTH_LIMIT": 0},
        )  # fmt: skip
    finally:
        web.stop()
    assert run.returncode == 0, run.log[-3000:]
    assert run.stats["govsi/render/pages"] >= 1
    assert run.stats["govsi/warc/conversion"] >= 1
    wayback = Wayback(work, "js", sorted(warc.glob("*.warc.gz")))
    yield Replayed(wayback, warc, web)
    wayback.stop()


def test_a_rendered_page_replays_with_the_bytes_served_its_dom_under_its_own_uri(
    rendered: Replayed,
) -> None:
    checked = replays_as_served(rendered.wayback, rendered.warc_dir, rendered.web)
    assert APP in checked and "http://spa.gov.si/app.js" in checked
    (dom,) = [r.rec_headers for r in records(rendered.warc_dir) if r.rec_type == "conversion"]
    assert dom.get_header("WARC-Target-URI") == f"urn:dom:{APP}"
    # Still tied to the response it was rendered from.
    (response,) = [r.rec_headers for u, _, r in captures(rendered.warc_dir) if u == APP]
    assert dom.get_header("WARC-Refers-To") == response.get_header("WARC-Record-ID")
    assert dom.get_header("WARC-Refers-To-Target-URI") == APP
    assert [line["url"] for line in rendered.wayback.index(f"urn:dom:{APP}")] == [f"urn:dom:{APP}"]


def test_a_rendered_page_replays_in_chromium_with_its_script_made_links(
    rendered: Replayed,
) -> None:
    from playwright.sync_api import sync_playwright

    chromium = find_chromium()
    if chromium is None:
        pytest.fail("Chromium is missing: scripts/setup.sh installs Debian's chromium")
    stamp = next(s for u, s, _ in captures(rendered.warc_dir) if u == APP)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        try:
            page = browser.new_page()
            # As a user opens it: pywb's frame around the page, the page in its iframe.
            page.goto(rendered.wayback.url(stamp, "", APP))
            hrefs = script_made_links(page)
        finally:
            browser.close()
    assert any(h.endswith("/storitve-js") for h in hrefs), hrefs
    assert any(h.endswith("/vloge-js") for h in hrefs), hrefs
