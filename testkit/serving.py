"""``scrapy serve``'s server in tests: served in a thread at a free port, raw requests
answered, the command as a process of its own, pages in Chromium with their screenshots."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from govsi.render.engine import find_chromium
from govsi.search.serve import Route, SearchSite, make_server, server_url
from testkit.crawl import ROOT, project_env


@contextlib.contextmanager
def running(
    site: SearchSite,
    host: str = "127.0.0.1",
    timeout: float = 10.0,
    connections: int = 16,
    routes: Sequence[Route] = (),
) -> Iterator[str]:
    """``site`` (and ``routes``) served on ``host`` at a free port; its URL without the
    final slash."""
    server = make_server(site, host, 0, timeout=timeout, connections=connections, routes=routes)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server_url(server).rstrip("/")
    finally:
        server.shutdown()
        server.server_close()


def exchange(url: str, request: bytes) -> bytes:
    """What the server at ``url`` answers to the raw ``request``, until it closes (the
    client's own timeout only keeps a broken test from hanging)."""
    host, port = url.removeprefix("http://").rsplit(":", 1)
    with socket.create_connection((host.strip("[]"), int(port)), timeout=30) as conn:
        conn.sendall(request)
        answer = b""
        while chunk := conn.recv(65536):
            answer += chunk
    return answer


def status(answer: bytes) -> int:
    """An answer's status code; 0 for none (the connection closed)."""
    return int(answer.split(b" ", 2)[1]) if answer else 0


@contextlib.contextmanager
def scrapy_serve(db_url: str, index: Path) -> Iterator[str]:
    """``scrapy serve`` over crawldb ``db_url`` and the search index ``index``, in a
    process of its own at a free port, once it accepts connections (within 60 s); its URL
    without the final slash."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cmd = [sys.executable, "-m", "scrapy", "serve", "--bind", f"127.0.0.1:{port}",
           "-s", f"CRAWLDB_URL={db_url}", "-s", f"SEARCH_INDEX={index}"]  # fmt: skip
    server = subprocess.Popen(cmd, cwd=ROOT, env=project_env(), stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=10).close()
                break
            except OSError:
                assert server.poll() is None and time.monotonic() < deadline
                time.sleep(0.3)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.terminate()
        server.wait(timeout=30)


@contextlib.contextmanager
def chromium() -> Iterator[Any]:
    """A headless Chromium (Playwright's ``Browser``); the test fails without one."""
    from playwright.sync_api import sync_playwright

    executable = find_chromium()
    if executable is None:
        pytest.fail("Chromium is missing: scripts/setup.sh installs Debian's chromium")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        try:
            yield browser
        finally:
            browser.close()


def shot(page: Any, path: Path, *keep: Path) -> None:
    """``page``'s screenshot at ``path``, copied into the folders ``keep`` and
    SCREENSHOTS_DIR when set, to be looked at."""
    page.screenshot(path=str(path), full_page=True)
    folders = [*keep, *([Path(d)] if (d := os.environ.get("SCREENSHOTS_DIR")) else [])]
    for folder in folders:
        folder.mkdir(parents=True, exist_ok=True)
        shutil.copy(path, folder / path.name)
