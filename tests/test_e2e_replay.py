"""End-to-end: pywb, the replay tool web archives run, replays the crawl's WARC files as
they are. Every archived HTML page and document, asked for in identity mode (``id_``),
comes back with the bytes the server sent; a rendered page opened in Chromium through pywb
shows the links its scripts make, from the scripts and data the crawl archived.

pywb lives in ``.venv-replay`` (scripts/test.sh installs it there: it pins older packages
than the crawler's), or where ``PYWB_BIN`` says."""

from __future__ import annotations

import gzip
import os
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from warcio.archiveiterator import ArchiveIterator

from govsi.render.engine import find_chromium
from tests.simweb import jsweb
from tests.simweb.expected import E2E_SETTINGS
from tests.simweb.server import SimWeb
from tests.support.crawl import ROOT, run_crawl
from tests.support.govcrawl import Result
from tests.support.pgcluster import free_port

PYWB_BIN = Path(os.environ.get("PYWB_BIN") or ROOT / ".venv-replay" / "bin")


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


def captures(warc_dir: Path) -> Iterator[tuple[str, str, Any]]:
    """(URI, 14-digit timestamp, record) of each response and revisit."""
    for path in sorted(warc_dir.glob("*.warc.gz")):
        with open(path, "rb") as f:
            for r in ArchiveIterator(f):
                if r.rec_type in ("response", "revisit"):
                    date = r.rec_headers.get_header("WARC-Date")
                    stamp = "".join(c for c in date if c.isdigit())[:14]
                    yield r.rec_headers.get_header("WARC-Target-URI"), stamp, r


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
def test_every_archived_page_and_document_replays_with_the_bytes_served(
    crawled: Result, gov_web: SimWeb, pywb: Path, tmp_path: Path
) -> None:
    wanted: list[tuple[str, str, bytes]] = []
    for uri, stamp, r in captures(crawled.warc_dir):
        parts = urlsplit(uri)
        path = parts.path + (f"?{parts.query}" if parts.query else "")
        sent = gov_web.lookup(parts.hostname or "", path)
        kind = sent.headers.get("Content-Type", "")
        if sent.status != 200 or r.rec_headers.get_header("WARC-Truncated"):
            continue
        if not (kind.startswith("text/html") or "pdf" in kind or "officedocument" in kind
                or "msword" in kind or "powerpoint" in kind):  # fmt: skip
            continue
        body = sent.body
        if sent.headers.get("Content-Encoding") == "gzip":
            body = gzip.decompress(body)  # pywb hands the payload decoded
        wanted.append((uri, stamp, body))
    assert len(wanted) >= 20 and any(b.startswith(b"%PDF") for _, _, b in wanted)
    wayback = Wayback(tmp_path, "gov", sorted(crawled.warc_dir.glob("*.warc.gz")))
    try:
        for uri, stamp, body in wanted:
            with urllib.request.urlopen(wayback.url(stamp, "id_", uri), timeout=30) as got:
                assert got.read() == body, uri
    finally:
        wayback.stop()


def test_a_rendered_page_replays_in_chromium_with_its_script_made_links(
    pywb: Path, tmp_path: Path
) -> None:
    from playwright.sync_api import sync_playwright

    chromium = find_chromium()
    if chromium is None:
        pytest.fail("Chromium is missing: scripts/setup.sh installs Debian's chromium")
    web = jsweb.build().start()
    try:
        warc = tmp_path / "warc"
        run = run_crawl(
            web, f"sqlite:///{tmp_path / 'crawldb.sqlite3'}", tmp_path / "crawl",
            ["http://spa.gov.si/app"], RENDER_JS="auto", RENDER_TIMEOUT=3, WARC_DIR=str(warc),
            **{**E2E_SETTINGS, "DEPTH_LIMIT": 0},
        )  # fmt: skip
    finally:
        web.stop()
    assert run.returncode == 0, run.log[-3000:]
    assert run.stats["govsi/render/pages"] >= 1
    stamp = next(s for u, s, _ in captures(warc) if u == "http://spa.gov.si/app")
    wayback = Wayback(tmp_path, "js", sorted(warc.glob("*.warc.gz")))
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
            try:
                page = browser.new_page()
                # As a user opens it: pywb's frame around the page, the page in its iframe.
                page.goto(wayback.url(stamp, "", "http://spa.gov.si/app"))
                hrefs = script_made_links(page)
            finally:
                browser.close()
    finally:
        wayback.stop()
    assert any(h.endswith("/storitve-js") for h in hrefs), hrefs
    assert any(h.endswith("/vloge-js") for h in hrefs), hrefs
