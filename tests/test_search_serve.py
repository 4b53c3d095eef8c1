"""The search page (govsi.search.serve) as HTML: results, marked snippets, facets, paging,
stored copies; everything shown escaped. The page in a real browser:
tests/test_e2e_search_page.py."""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import re
import socket
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine, text

from govsi.search.serve import COPY_POLICY, PAGE_POLICY, SearchSite
from govsi.store import database
from testkit import serving
from testkit.serving import exchange, status
from tests.support import searchsite


@pytest.fixture
def site(engine: Engine, tmp_path: Path) -> SearchSite:
    return SearchSite(engine, searchsite.build(engine, tmp_path / "index"))


def test_results_with_marked_snippets_facets_and_paging(site: SearchSite) -> None:
    html = site.page("q=obcina")
    assert "14 zadetkov" in html and html.count('class="hit"') == 10
    # The text's words as written, marked; its markup shown, not made.
    assert "<mark>občinah</mark>" in html and "&lt;b&gt;ni oznaka&lt;/b&gt; &amp; več" in html
    assert 'href="/?q=obcina+type%3Apdf"' in html and 'href="/?q=obcina+host%3Awww.gov.si"' in html
    assert 'href="/?q=obcina&amp;page=2"' in html and "prejšnja" not in html
    second = site.page("q=obcina&page=2")
    assert second.count('class="hit"') == 4 and 'href="/?q=obcina"' in second
    assert "naslednja" not in second
    assert site.page("q=obcina+type%3Apdf").count('class="hit"') == 5


def test_a_hostile_title_and_query_are_shown_escaped(site: SearchSite) -> None:
    html = site.page("q=" + "uredba 0 <script>alert(1)</script>".replace(" ", "+"))
    assert "<script>" not in html and "<img src=x" not in html
    # The title's words the query asked for are marked (<mark>script</mark>), each piece
    # escaped.
    assert "&lt;<mark>script</mark>&gt;document.title=&#39;pwned&#39;&lt;/" in html
    shown = re.sub(r"</?mark>", "", html)
    assert "&lt;script&gt;document.title=&#39;pwned&#39;&lt;/script&gt;" in shown
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_the_words_asked_for_are_marked_in_titles_and_snippets(site: SearchSite) -> None:
    html = site.page("q=obcina")
    assert 'noopener">Uredba o <mark>občinah</mark> 1</a></h3>' in html
    assert html.count("<mark>") >= 20  # a title and a snippet of each of 10 results


def test_bad_paging_and_empty_queries(site: SearchSite) -> None:
    assert 'class="hit"' not in site.page("")
    assert "Ni zadetkov" in site.page("q=nekaj+neznanega")
    assert site.page("q=obcina&page=x").count('class="hit"') == 10
    assert site.page("q=obcina&page=999999").count('class="hit"') == 0


def test_the_stored_copy(site: SearchSite, engine: Engine) -> None:
    with engine.connect() as conn:
        html_id = conn.execute(text("SELECT id FROM page WHERE url LIKE '%stran-1'")).scalar()
        pdf_id = conn.execute(text("SELECT id FROM page WHERE url LIKE '%stran-3'")).scalar()
    assert site.copy(html_id) == ("text/html; charset=utf-8", searchsite.HOSTILE_HTML)
    ctype, body = site.copy(pdf_id) or ("", "")
    assert ctype.startswith("text/plain") and "številka 3" in body
    assert site.copy(10**9) is None


TIMEOUT = 0.5  # SEARCH_SERVE_TIMEOUT in these tests


@pytest.fixture(scope="module")
def one_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SearchSite]:
    """A site over an SQLite crawldb, for the module's tests of the server itself."""
    folder = tmp_path_factory.mktemp("serve")
    engine = database.make_engine(f"sqlite:///{folder / 'crawldb.sqlite3'}")
    database.migrate(engine)
    yield SearchSite(engine, searchsite.build(engine, folder / "index"))
    engine.dispose()


def running(site: SearchSite, host: str = "127.0.0.1") -> contextlib.AbstractContextManager[str]:
    """``site`` served on ``host`` at a free port, its URL without the final slash."""
    return serving.running(site, host, timeout=TIMEOUT, connections=4)


@pytest.fixture(scope="module")
def server(one_site: SearchSite) -> Iterator[str]:
    with running(one_site) as url:
        yield url


@pytest.fixture
def served(site: SearchSite) -> Iterator[str]:
    with running(site) as url:
        yield url


def test_the_server_is_read_only_and_sends_its_policies(served: str) -> None:
    with urllib.request.urlopen(f"{served}/?q=obcina", timeout=10) as got:
        assert got.headers["Content-Security-Policy"] == PAGE_POLICY
        assert got.headers["X-Content-Type-Options"] == "nosniff"
        assert "<mark>" in got.read().decode()
    copy_id = re.search(r'href="/copy/(\d+)"', urllib.request.urlopen(
        f"{served}/?q=obcina+type%3Ahtml", timeout=10).read().decode())  # fmt: skip
    assert copy_id is not None
    with urllib.request.urlopen(f"{served}/copy/{copy_id.group(1)}", timeout=10) as got:
        assert got.headers["Content-Security-Policy"] == COPY_POLICY
    for path, method in (("/", "POST"), ("/copy/x", "GET"), ("/../etc/passwd", "GET")):
        request = urllib.request.Request(
            served + path, method=method, data=b"" if method == "POST" else None
        )
        with pytest.raises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(request, timeout=10)
        assert e.value.code in (404, 501)


def _served_again(url: str) -> bool:
    """Whether the server at ``url`` answers a request again, once its busy connections
    end (tried for up to 10 s)."""
    for _ in range(100):
        if status(exchange(url, b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")) == 200:
            return True
        threading.Event().wait(0.1)
    return False


@pytest.mark.parametrize(
    ("request_head", "expected"),
    [
        (b"GET /?q=obcina HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 200),
        (b"GET / HTTP/1.1\r\nHost: localhost:9000\r\n\r\n", 200),
        # DNS rebinding: another name for this address.
        (b"GET /?q=obcina HTTP/1.1\r\nHost: attacker.example:8080\r\n\r\n", 421),
        (b"GET /copy/1 HTTP/1.1\r\nHost: attacker.example\r\n\r\n", 421),
        # No Host, two, or not one.
        (b"GET / HTTP/1.0\r\n\r\n", 400),
        (b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: attacker.example\r\n\r\n", 400),
        (b"GET / HTTP/1.1\r\nHost: a b\r\n\r\n", 400),
        # Page ids crawldb cannot hold, or not digits: not found.
        (b"GET /copy/" + b"9" * 30 + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 404),
        (b"GET /copy/99999999999999999999 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 404),
        (b"GET /copy/\xc2\xb2 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 404),
        (b"GET /copy/%31 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 404),
        (b"GET /copy/-1 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 404),
        (b"GET /?q=obcina&page=" + b"9" * 40 + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 200),
        (b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX: " + b"y" * 70_000 + b"\r\n\r\n", 431),
    ],
)
def test_bad_requests_get_4xx_answers(server: str, request_head: bytes, expected: int) -> None:
    assert status(exchange(server, request_head)) == expected


def test_a_half_sent_request_is_closed_after_the_timeout(
    server: str, caplog: pytest.LogCaptureFixture
) -> None:
    served = server
    # Without the timeout the server waits for the rest forever, a thread held for it.
    with caplog.at_level(logging.DEBUG, "govsi.search.serve"):
        assert exchange(served, b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n") == b""
        assert exchange(served, b"") == b""
        # A byte at a time, each within the timeout, is cut off too.
        host, port = served.removeprefix("http://").rsplit(":", 1)
        with socket.create_connection((host, int(port)), timeout=30) as conn:
            closed = False
            for byte in b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX: " + b"y" * 10_000:
                try:
                    conn.sendall(bytes([byte]))
                    threading.Event().wait(TIMEOUT / 5)
                except OSError:  # closed by the server
                    closed = True
                    break
            assert closed
    assert "Traceback" not in caplog.text


def test_connections_are_bounded_and_a_gone_client_is_one_quiet_line(
    server: str, caplog: pytest.LogCaptureFixture
) -> None:
    served = server
    host, port = served.removeprefix("http://").rsplit(":", 1)
    with caplog.at_level(logging.DEBUG, "govsi.search.serve"):
        held = [socket.create_connection((host, int(port)), timeout=30) for _ in range(4)]
        try:
            # The fifth is closed at once, while the four are held.
            assert exchange(served, b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n") == b""
        finally:
            for conn in held:
                conn.close()
        # The slots come back when the held connections end.
        assert _served_again(served)
        # A client gone before its answer (reset while the search page is written).
        for _ in range(5):
            conn = socket.create_connection((host, int(port)), timeout=30)
            conn.sendall(b"GET /?q=obcina HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            conn.setsockopt(
                socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00"
            )
            conn.close()
        assert _served_again(served)
    assert "connections open: one more from 127.0.0.1 closed" in caplog.text
    assert "Traceback" not in caplog.text and "failed" not in caplog.text


def test_the_server_listens_on_ipv6(one_site: SearchSite) -> None:
    try:
        with socket.socket(socket.AF_INET6) as probe:
            probe.bind(("::1", 0))
    except OSError:
        pytest.skip("no IPv6 loopback here")
    with running(one_site, "::1") as url:
        assert url.startswith("http://[::1]:")
        with urllib.request.urlopen(f"{url}/?q=obcina", timeout=10) as got:
            assert "<mark>" in got.read().decode()
        request = b"GET / HTTP/1.1\r\nHost: evil.example\r\n\r\n"
        assert status(exchange(url, request)) == 421


def test_an_index_gone_under_the_server_is_a_503_and_stays_gone(
    one_site: SearchSite, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    gone = tmp_path / "gone"
    site = SearchSite(one_site.engine, dataclasses.replace(one_site.config, folder=gone))
    with running(site) as url:
        answer = exchange(url, b"GET /?q=obcina HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    assert status(answer) == 503 and b"run scrapy index" in answer
    assert not gone.exists()  # never made again by a reader
    assert "Traceback" not in caplog.text
