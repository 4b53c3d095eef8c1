"""The search page (govsi.search.serve) as HTML: results, marked snippets, facets, paging,
stored copies; everything shown escaped. The page in a real browser:
tests/test_e2e_search_page.py."""

from __future__ import annotations

import re
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine, text

from govsi.search.serve import COPY_POLICY, PAGE_POLICY, SearchSite, make_server
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


@pytest.fixture
def served(site: SearchSite) -> Iterator[str]:
    server = make_server(site, "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


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
