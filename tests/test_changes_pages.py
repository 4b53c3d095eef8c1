"""``scrapy serve``'s Changes page, diff pages and Atom feed (govsi.changes.pages, atom,
diffview, showing): the feed valid for a maintained feed library (feedparser) with ids
stable across server runs in two processes and entries newest first; filters narrowing
the page and the feed alike; cursor paging; hostile titles, URLs and texts escaped and
bounded; the search page's server hardening on the new paths. In a real browser:
tests/test_e2e_changes_page.py."""

from __future__ import annotations

import contextlib
import re
import urllib.error
import urllib.request
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import feedparser
import pytest
from lxml import etree
from sqlalchemy import Engine, text

from govsi.changes import atom
from govsi.changes.diff import WordDiff
from govsi.changes.diffview import CONTEXT, inline, side_by_side
from govsi.changes.pages import PER_PAGE, ChangesSite
from govsi.changes.query import ChangeEntry
from govsi.changes.showing import link_target, shown
from govsi.printable import UNPRINTABLE
from govsi.search.config import SearchConfig
from govsi.search.index import SearchIndex
from govsi.search.searcher import Ranking
from govsi.search.serve import PAGE_POLICY, SearchSite
from govsi.search.update import update
from govsi.store import database
from testkit import serving
from tests.support import changesdb

Built = tuple[Engine, changesdb.Changes, Path]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Built]:
    """An SQLite crawldb of changes and its (small) search index, for the module."""
    folder = tmp_path_factory.mktemp("changes")
    engine = database.make_engine(f"sqlite:///{folder / 'crawldb.sqlite3'}")
    database.migrate(engine)
    ids = changesdb.build(engine)
    index = SearchIndex.open_for_update(folder / "index")
    try:
        update(engine, index)
    finally:
        index.close()
    yield engine, ids, folder
    engine.dispose()


@pytest.fixture(scope="module")
def site(built: Built) -> ChangesSite:
    return ChangesSite(built[0], now=lambda: changesdb.NOW)


def running(built: Built, site: ChangesSite) -> contextlib.AbstractContextManager[str]:
    """The search page with the changes pages as ``scrapy serve`` wires them, at a free
    port; its URL without the final slash."""
    config = SearchConfig(built[2] / "index", False, Ranking(), 1, 1_000_000)
    search = SearchSite(built[0], config, links=(("Spremembe", "/changes"),))
    return serving.running(search, timeout=0.5, connections=4, routes=(site.route,))


@pytest.fixture(scope="module")
def served(built: Built, site: ChangesSite) -> Iterator[str]:
    with running(built, site) as url:
        yield url


def get(url: str) -> tuple[int, dict[str, str], bytes]:
    try:
        with urllib.request.urlopen(url, timeout=30) as got:
            return got.status, dict(got.headers), got.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


def listed(html: str) -> list[int]:
    """The change ids a Changes page lists, in order."""
    return [int(n) for n in re.findall(r'<article class="change" id="change-(\d+)"', html)]


# The feed ----------------------------------------------------------------------------


def parsed(body: bytes) -> feedparser.FeedParserDict:
    feed = feedparser.parse(body)
    assert not feed.bozo, feed.get("bozo_exception")
    assert feed.version == "atom10"
    return feed


def test_the_feed_is_valid_atom_newest_first_with_links_and_summaries(
    served: str, built: Built
) -> None:
    status, headers, body = get(f"{served}/changes.atom?q=uredba")
    assert status == 200 and headers["Content-Type"] == "application/atom+xml; charset=utf-8"
    feed = parsed(body)
    ids = built[1]
    tag = f"tag:govsi,2026:{ids.crawl_id}"
    assert feed.feed.id == f"{tag}/changes?q=uredba"
    assert [e.id for e in feed.entries] == [
        f"{tag}/change/{n}" for n in (ids.hostile, ids.uredba_changed, ids.uredba_new)
    ]
    times = [e.updated_parsed for e in feed.entries]
    assert times == sorted(times, reverse=True)
    uredba = feed.entries[1]
    assert uredba.updated == "2026-11-22T14:00:00Z"
    assert uredba.title == "spremenjena: Uredba o občinah"
    links = {link.rel: link.href for link in uredba.links}
    assert links == {
        "alternate": "https://www.gov.si/uredba-o-obcinah",
        "related": f"{served}/changes/{ids.uredba_changed}",
    }
    assert uredba.summary.startswith("Stran spremenjena. Dodano: 60")
    assert "Odstranjeno: 30" in uredba.summary
    assert [t.term for t in uredba.tags] == ["changed", "html"]
    # Links to itself and to the Changes page of the same filter.
    feed_links = {link.rel: link.href for link in feed.feed.links}
    assert feed_links == {"self": f"{served}/changes.atom?q=uredba",
                          "alternate": f"{served}/changes?q=uredba"}  # fmt: skip


def test_feed_ids_are_stable_across_server_runs_and_processes(
    served: str, built: Built, site: ChangesSite
) -> None:
    first = parsed(get(f"{served}/changes.atom?type=pdf,html&kind=changed")[2])
    # Another server in this process, over a new site object.
    with running(built, ChangesSite(built[0], now=lambda: changesdb.NOW)) as url:
        again = parsed(get(f"{url}/changes.atom?type=pdf,html&kind=changed")[2])
    # `scrapy serve` itself, in a process of its own; the filter spelt another way.
    folder = built[2]
    with serving.scrapy_serve(f"sqlite:///{folder / 'crawldb.sqlite3'}", folder / "index") as url:
        spelt = "/changes.atom?kind=changed&type=HTML,+PDF,pdf"
        other = parsed(get(url + spelt)[2])
        # The search page links to the Changes page there.
        assert '<a href="/changes">Spremembe</a>' in get(url + "/")[2].decode()
    entries = [[(e.id, e.updated) for e in f.entries] for f in (first, again, other)]
    assert entries[0] == entries[1] == entries[2] and len(entries[0]) == 4
    assert first.feed.id == again.feed.id == other.feed.id


def test_scrapy_serve_without_a_search_index_serves_the_changes(built: Built) -> None:
    # A user following a topic by its feed needs no search index.
    folder = built[2]
    crawldb = f"sqlite:///{folder / 'crawldb.sqlite3'}"
    with serving.scrapy_serve(crawldb, folder / "no-index-yet") as url:
        assert len(parsed(get(url + "/changes.atom?kind=changed")[2]).entries) == 4
        assert get(url + "/changes")[0] == 200
        code, _, body = get(url + "/?q=uredba")  # a search: not until scrapy index
        assert code == 503 and b"scrapy index" in body
    assert not (folder / "no-index-yet").exists()


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ("kind=gone", ["gone"]),
        ("kind=gone,moved", ["moved", "gone"]),
        ("type=pdf", ["pdf_changed", "pdf_new"]),
        ("type=pdf&kind=changed", ["pdf_changed"]),
        ("host=www.gov.si&since=2026-11-22T15:30", ["hostile", "moved", "gone"]),
        ("since=20h", ["hostile", "moved", "gone"]),  # NOW - 20 h = T + 4 h, inclusive
        (
            "since=2026-11-22T13:00&until=2026-11-22T16:00",
            ["pdf_changed", "uredba_changed", "unkept"],
        ),
        ("q=narocilih", ["uredba_changed"]),  # the added words, typed without diacritics
        ("q=javnih+naročil", ["uredba_changed"]),  # another form of the word
        ("q=odlok", ["gone"]),  # a gone page by its last text
        ("q=sofinanciranje&type=pdf", ["pdf_changed", "pdf_new"]),
        ("host=nobody.gov.si", []),
    ],
)
def test_filters_narrow_the_page_and_the_feed_alike(
    site: ChangesSite, built: Built, params: str, expected: list[str]
) -> None:
    ids = built[1]
    names = {getattr(ids, f): f for f in ("uredba_new", "uredba_changed", "pdf_changed",
                                          "gone", "moved", "unkept", "hostile")}  # fmt: skip
    names[ids.pdf_changed - 1] = "pdf_new"
    status, _, html = site.route("/changes", params, "127.0.0.1") or (0, "", "")
    assert status == 200
    assert [names.get(n, n) for n in listed(html)] == expected
    status, _, xml = site.route("/changes.atom", params, "127.0.0.1") or (0, "", "")
    feed = parsed(xml.encode())
    assert [names.get(int(e.id.rsplit("/", 1)[1]), 0) for e in feed.entries] == expected


def test_a_bad_filter_says_why(site: ChangesSite) -> None:
    status, ctype, html = site.route("/changes", "since=yesterday", "h") or (0, "", "")
    assert status == 400 and ctype.startswith("text/html")
    assert "Napačen filter" in html and "say a duration" in html and listed(html) == []
    status, ctype, body = site.route("/changes.atom", "kind=deleted", "h") or (0, "", "")
    assert status == 400 and ctype.startswith("text/plain") and "no change kind" in body


def test_the_feed_needs_a_crawl_id(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    engine = database.make_engine(f"sqlite:///{tmp_path / 'crawldb.sqlite3'}")
    database.migrate(engine)
    try:
        with engine.begin() as conn:
            conn.execute(text("DELETE FROM crawl_meta"))
        status, _, body = ChangesSite(engine).feed("", "127.0.0.1")
        # Fails closed: no feed with ids that would change once a crawl makes its id.
        assert status == 503 and "no crawl id" in body
        assert "crawldb has no crawl id" in caplog.text
        assert ChangesSite(engine).listing("")[0] == 200  # the page needs none
    finally:
        engine.dispose()


# The Changes page ----------------------------------------------------------------------


def test_the_page_pages_by_cursor_newest_first(site: ChangesSite, built: Built) -> None:
    total = changesdb.OLD + 8
    status, _, html = site.listing("")
    first = listed(html)
    assert status == 200 and len(first) == PER_PAGE and first[0] == built[1].hostile
    assert "« najnovejše" not in html
    more = re.search(r'href="(/changes\?before=(\d+))" rel="next"', html)
    assert more is not None and int(more.group(2)) == first[-1]
    status, _, html = site.listing(more.group(1).split("?", 1)[1])
    second = listed(html)
    assert len(second) == total - PER_PAGE and not set(first) & set(second)
    assert 'rel="next"' not in html and 'href="/changes">« najnovejše' in html
    # Every change once, in the order of their visits, newest first.
    with built[0].connect() as conn:
        order = [r[0] for r in conn.execute(
            text("SELECT id FROM page_change ORDER BY visit_time DESC, id DESC"))]  # fmt: skip
    assert first + second == order
    # A cursor that is not one is ignored; the filter stays in the links.
    assert listed(site.listing("before=-1")[2]) == first
    narrowed = site.listing("host=evem.gov.si")[2]
    assert 'href="/changes?host=evem.gov.si&amp;before=' in narrowed
    assert 'href="/changes.atom?host=evem.gov.si"' in narrowed


def test_an_entry_shows_time_kind_url_title_and_excerpts(site: ChangesSite, built: Built) -> None:
    html = site.listing("kind=changed&host=www.gov.si&q=uredba")[2]
    entry = html[html.index(f'id="change-{built[1].uredba_changed}"') :]
    entry = entry[: entry.index("</article>")]
    assert f'<a href="/changes/{built[1].uredba_changed}">Uredba o občinah</a>' in entry
    assert '<a href="https://www.gov.si/uredba-o-obcinah" rel="noreferrer noopener">' in entry
    assert '<time datetime="2026-11-22T14:00:00Z">2026-11-22 14:00 UTC</time>' in entry
    assert '<span class="kind kind-changed">spremenjena</span>' in entry
    added = re.search(r'class="excerpt added">\+ <ins>(.*?)</ins>', entry)
    assert added is not None and added.group(1).startswith("60 … ")
    assert "Dodan je nov člen o javnih naročilih" in added.group(1)
    assert "\N{MINUS SIGN} <del>30</del>" in entry


def _hostile_free(markup: str) -> None:
    """No markup of the hostile strings made, no control character or XML-forbidden one
    sent as it is."""
    assert "<script" not in markup and "<img" not in markup and "<svg" not in markup
    assert not re.search(f"[{UNPRINTABLE}\ufffe\uffff]", markup.replace("\n", " "))


def test_hostile_titles_urls_and_texts_are_escaped_and_bounded(
    site: ChangesSite, built: Built
) -> None:
    ids = built[1]
    html = site.listing("")[2]
    _hostile_free(html)
    entry = html[html.index(f'id="change-{ids.hostile}"') :]
    entry = entry[: entry.index("</article>")]
    # The title (50 copies of the hostile one) cut to 300 characters, its escapes visible.
    title = re.search(r'<h3><a href="/changes/\d+">(.*?)</a></h3>', entry)
    assert title is not None and title.group(1).endswith("…")
    assert "&lt;script&gt;document.title=&#39;pwned&#39;&lt;/script&gt;\\x1b]52;" in title.group(1)
    assert "\\u202eevil" in title.group(1) and len(title.group(1)) < 3000
    # The URL is not one a link may go to: shown, escaped, not linked.
    assert "https://www.gov.si/a?b=&lt;script&gt;alert(1)&lt;/script&gt;&amp;c=&#34;x&#34;" in entry
    assert 'href="https://www.gov.si/a?b' not in entry
    # The added words' markup shown, their controls visible.
    assert "&lt;svg onload" in entry and "\\x1b[31m\\x02" in entry
    assert len(html) < 200_000
    # The diff page of its 300 000-character texts: cut to the bound, and says so.
    status, _, page = site.detail(ids.hostile, "")
    assert status == 200 and len(page) < 100_000
    _hostile_free(page)
    assert 'class="note truncated"' in page and "200 000 znakov" in page
    assert "znakov brez sprememb" in page  # the long unchanged run folded
    # The feed: its title and summary bounded, escaped by the XML library, still valid.
    xml = site.feed("", "127.0.0.1")[2]
    _hostile_free(xml)
    feed = parsed(xml.encode())
    hostile = next(e for e in feed.entries if e.id.endswith(f"/change/{ids.hostile}"))
    assert hostile.title.startswith("spremenjena: <script>document.title='pwned'</script>\\x1b]")
    assert len(hostile.title) < 2000 and "alternate" not in {link.rel for link in hostile.links}
    assert "\\x1b[2J" in hostile.summary
    root = etree.fromstring(xml.encode())
    assert root.tag == "{http://www.w3.org/2005/Atom}feed"


# The diff page -------------------------------------------------------------------------


def test_the_diff_page_inline_and_side_by_side(site: ChangesSite, built: Built) -> None:
    ids = built[1]
    status, _, html = site.detail(ids.uredba_changed, "")
    assert status == 200 and "Uredba o občinah" in html
    assert "Rok za pripombe je <del>30</del>" in html and "<ins>60</ins>" in html
    assert "Dodan je nov člen o javnih naročilih" in "".join(re.findall("<ins>(.*?)</ins>", html))
    assert 'href="?view=side"' in html and "ni več shranjeno" not in html
    html = site.detail(ids.uredba_changed, "view=side")[2]
    before = html[html.index('class="diff before"') : html.index('class="diff after"')]
    after = html[html.index('class="diff after"') :]
    assert "<del>30</del>" in before and "<ins>" not in before
    assert "<ins>60</ins>" in after and "<del>" not in after


@pytest.mark.parametrize(
    ("change", "says", "marked"),
    [
        # A new page: all its text added.
        (
            "uredba_new",
            [],
            f"<ins>{changesdb.BEFORE}</ins>",
        ),
        # A gone page: its last text removed, and said.
        (
            "gone",
            ["Stran ni več dosegljiva"],
            "<del>Odlok o ukinitvi sveta. Velja do preklica.</del>",
        ),
        ("moved", ["Stran je preusmerjena drugam"], "<del>Ta stran se je preselila.</del>"),
        # The text before is not known: no diff, said plainly.
        ("unkept", ["Besedilo pred to spremembo ni več shranjeno"], None),
    ],
)
def test_what_the_diff_page_says_of_each_kind(
    site: ChangesSite, built: Built, change: str, says: list[str], marked: str | None
) -> None:
    status, _, html = site.detail(getattr(built[1], change), "")
    assert status == 200
    for words in says:
        assert words in html
    if marked is None:
        assert 'class="diff' not in html
    else:
        assert marked in html


def test_an_unknown_change_is_not_found(site: ChangesSite) -> None:
    assert site.route("/changes/999999", "", "h") == (
        404,
        "text/plain; charset=utf-8",
        "no such change",
    )
    assert site.route("/changes/x", "", "h") is None and site.route("/other", "", "h") is None


# The server's hardening on the new paths --------------------------------------------------


@pytest.mark.parametrize(
    ("request_head", "status"),
    [
        (b"GET /changes HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 200),
        (b"GET /changes.atom?q=uredba HTTP/1.1\r\nHost: localhost:9000\r\n\r\n", 200),
        (b"HEAD /changes.atom HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 200),
        # DNS rebinding: another name for this address.
        (b"GET /changes HTTP/1.1\r\nHost: attacker.example\r\n\r\n", 421),
        (b"GET /changes.atom HTTP/1.1\r\nHost: attacker.example:8080\r\n\r\n", 421),
        (b"GET /changes/1 HTTP/1.1\r\nHost: attacker.example\r\n\r\n", 421),
        (b"GET /changes.atom HTTP/1.0\r\n\r\n", 400),
        # Only GET and HEAD.
        (b"POST /changes HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n", 501),
        (b"PUT /changes.atom HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n", 501),
        (b"DELETE /changes/1 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 501),
        # Ids crawldb cannot hold, or not digits; paths of no page.
        (b"GET /changes/" + b"9" * 30 + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 404),
        (b"GET /changes/%31 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 404),
        (b"GET /changes/ HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 404),
        (b"GET /changes.atom/x HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 404),
        (b"GET /changes?" + b"a=1&" * 5000 + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 200),
        (b"GET /changes?since=" + b"9" * 400 + b"d HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 400),
    ],
)
def test_the_new_paths_are_served_as_the_search_page(
    served: str, request_head: bytes, status: int
) -> None:
    answer = serving.exchange(served, request_head)
    assert serving.status(answer) == status
    if request_head.startswith(b"HEAD"):
        assert answer.endswith(b"\r\n\r\n")  # the head only


def test_the_pages_send_the_page_policy(served: str, built: Built) -> None:
    for path in ("/changes", f"/changes/{built[1].uredba_changed}", "/changes.atom"):
        status, headers, _ = get(served + path)
        assert status == 200 and headers["Content-Security-Policy"] == PAGE_POLICY
        assert headers["X-Content-Type-Options"] == "nosniff"


# Pure parts --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("params", "canonical"),
    [
        ({}, {}),
        ({"q": "  uredba   o  občinah ", "page": "2", "before": "5"}, {"q": "uredba o občinah"}),
        ({"type": "PDF, html,pdf,,", "kind": "new"}, {"kind": "new", "type": "html,pdf"}),
        ({"host": "www.gov.si,EVEM.gov.si"}, {"host": "evem.gov.si,www.gov.si"}),
        ({"since": " 7d ", "until": ""}, {"since": "7d"}),
        ({"q": "x" * 600}, {"q": "x" * 500}),
    ],
)
def test_canonical_params(params: dict[str, str], canonical: dict[str, str]) -> None:
    assert atom.canonical_params(params) == canonical


def test_feed_and_entry_ids() -> None:
    crawl = "0b7d4c8e-1f2a-4c3b-9d5e-6f7a8b9c0d1e"
    assert atom.feed_id(crawl, {}) == f"tag:govsi,2026:{crawl}/changes"
    assert atom.feed_id(crawl, {"type": "pdf", "q": "javna naročila"}) == (
        f"tag:govsi,2026:{crawl}/changes?q=javna%20naro%C4%8Dila&type=pdf"
    )
    assert atom.feed_id(crawl, {"type": "PDF,html", "q": " javna  naročila"}) == atom.feed_id(
        crawl, {"q": "javna naročila", "type": "html,pdf", "before": "7"}
    )
    assert atom.entry_id(crawl, 42) == f"tag:govsi,2026:{crawl}/change/42"


def test_a_feed_of_rows_crawldb_should_not_hold_is_still_valid() -> None:
    odd = ChangeEntry(
        7, 1, "javascript:alert(1)", "h", "weird\x1b", datetime(2026, 1, 2, 3, 4, 5),  # type: ignore[arg-type]
        "\x00\x1f\ud800\ufffe" + "<" * 10_000, "\x85pdf", "\x00" * 3000, "\u202e",
    )  # fmt: skip
    xml = atom.feed_document([odd], crawl_id="c", params={"q": "\x00"}, base="http://h",
                             now=datetime(2026, 1, 1))  # fmt: skip
    _hostile_free(xml.decode())
    feed = parsed(xml)
    (entry,) = feed.entries
    assert entry.title.startswith("weird\\x1b: \\x00\\x1f\\ud800<<<") and len(entry.title) < 400
    assert [link.rel for link in entry.links] == ["related"]  # no link to javascript:
    assert entry.updated == "2026-01-02T03:04:05Z" and len(entry.summary) < 7000
    assert [t.term for t in entry.tags] == ["weird\\x1b", "\\x85pdf"]


@pytest.mark.parametrize(
    ("raw", "limit", "lines", "expected"),
    [
        (None, 10, False, ""),
        ("Uredba o občinah", 100, False, "Uredba o občinah"),
        ("Uredba o občinah", 6, False, "Uredba…"),
        ("a\x1b]52;c;x\x07b", 100, False, "a\\x1b]52;c;x\\x07b"),
        ("a\nb\tc", 100, False, "a\\x0ab\tc"),
        ("a\nb", 100, True, "a\nb"),
        ("\u202eevil\u2066", 100, False, "\\u202eevil\\u2066"),
        ("a\ufffeb\uffffc", 100, False, "abc"),
        ("<b>&</b>", 100, False, "<b>&</b>"),  # markup is the template's to escape
        ("\x9b31m", 100, False, "\\x9b31m"),
    ],
)
def test_shown(raw: str | None, limit: int, lines: bool, expected: str) -> None:
    assert shown(raw, limit, lines) == expected


@pytest.mark.parametrize(
    ("url", "linked"),
    [
        ("https://www.gov.si/uredba-o-obcinah", True),
        ("http://evem.gov.si/a?b=1&c=%20", True),
        ("HTTPS://WWW.GOV.SI/Š", True),
        ("javascript:alert(1)", False),
        ("data:text/html,<script>", False),
        ("https://www.gov.si/a?b=<script>", False),
        ('https://www.gov.si/a"onmouseover="x', False),
        ("https://www.gov.si/a b", False),
        ("https://www.gov.si/\x1b[2J", False),
        ("https://www.gov.si/\u202e", False),
        ("https://www.gov.si/" + "a" * 9000, False),
        ("", False),
    ],
)
def test_link_target(url: str, linked: bool) -> None:
    assert (link_target(url) == url) is linked


def test_long_unchanged_runs_are_folded_at_word_edges() -> None:
    words = " ".join(f"beseda{n}" for n in range(400)) + " "
    diff = WordDiff((("equal", words), ("delete", "staro "), ("insert", "<novo> "),
                     ("equal", words), ("insert", "konec")))  # fmt: skip
    html = str(inline(diff))
    assert html.count("znakov brez sprememb") == 2
    assert "<del>staro </del><ins>&lt;novo&gt; </ins>" in html
    # The kept context either side is at most CONTEXT characters, whole words.
    kept = re.split(r'<span class="skip">.*?</span>|<del>|<ins>', html)
    assert all(len(k) <= CONTEXT + 20 for k in kept[1:3])
    assert re.search(r"</span>beseda\d+ ", html) and "beseda399 <del>" in html
    before, after = side_by_side(diff)
    assert "<ins>" not in before and "<del>" not in after and "konec" in after
    # A short unchanged run is shown whole; a diff with no change shows its start.
    short = WordDiff((("equal", "a b "), ("insert", "c")))
    assert str(inline(short)) == "a b <ins>c</ins>"
    same = str(inline(WordDiff((("equal", words),))))
    assert same.startswith("beseda0 ") and "znakov brez sprememb" in same
