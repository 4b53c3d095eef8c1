"""Feeds: which ones a page declares (autodiscovery: RSS, Atom, JSON Feed), and a feed's
entries read within bounds from hostile input (entities never expanded, nothing loaded,
bytes and entries bounded and counted, malformed and wrong-type bodies answered, never
raised)."""

from __future__ import annotations

import gzip

import pytest

from govsi.web import feeds, sitemaps
from govsi.web.extract import extract_links, parse_html
from govsi.web.feeds import feed_links, feed_type, read_feed
from testkit.simweb.floodweb import gzipped

PAGE = "https://www.gov.si/novice/"
FEED = "https://www.gov.si/novice/rss"


def head(*links: str, base: str = "") -> str:
    return f"<html><head>{base}{''.join(links)}</head><body><a href='/a'>a</a></body></html>"


@pytest.mark.parametrize(
    ("html", "feeds"),
    [
        (head('<link rel="alternate" type="application/rss+xml" href="rss">'), [FEED]),
        (head('<link rel="alternate" type="application/atom+xml" href="/atom.xml">'),
         ["https://www.gov.si/atom.xml"]),
        (head('<link rel="alternate" type="application/rdf+xml" href="rdf">'),
         ["https://www.gov.si/novice/rdf"]),
        # Case, parameters and other rel tokens do not matter.
        (head('<LINK REL="Alternate Feed" TYPE=" Application/RSS+XML; charset=utf-8" '
              'HREF="rss">'), [FEED]),
        # Resolved against <base href>, as a browser does.
        (head('<link rel="alternate" type="application/rss+xml" href="rss">',
              base='<base href="https://www.gov.si/drugo/">'), ["https://www.gov.si/drugo/rss"]),
        # Not feeds: another type, another rel, a stylesheet, no href, not http(s).
        (head('<link rel="alternate" type="text/html" href="/en/">'), []),
        (head('<link rel="alternate" hreflang="en" href="/en/">'), []),
        (head('<link rel="stylesheet alternate" type="application/rss+xml" href="x">'), []),
        (head('<link rel="canonical" type="application/rss+xml" href="x">'), []),
        (head('<link rel="alternate" type="application/rss+xml">'), []),
        (head('<link rel="alternate" type="application/rss+xml" href="javascript:x()">'), []),
        # JSON Feed: 1.1's type; 1.0's plain JSON only when it says it is a feed.
        (head('<link rel="alternate" type="application/feed+json" href="/feed.json">'),
         ["https://www.gov.si/feed.json"]),
        (head('<link rel="alternate" type="application/json" title="JSON Feed" href="/j">'),
         ["https://www.gov.si/j"]),
        (head('<link rel="alternate" type="application/json" href="/novice/feed.json">'),
         ["https://www.gov.si/novice/feed.json"]),
        (head('<link rel="alternate" type="application/json" href="/wp-json/wp/v2/pages/12">'),
         []),
        # Each once, document order.
        (head('<link rel="alternate" type="application/rss+xml" href="rss">',
              '<link rel="alternate" type="application/atom+xml" href="/a.xml">',
              '<link rel="alternate" type="application/rss+xml" href="/novice/rss">'),
         [FEED, "https://www.gov.si/a.xml"]),
    ],
)  # fmt: skip
def test_feeds_a_page_declares(html: str, feeds: list[str]) -> None:
    root = parse_html(html)
    assert root is not None
    assert extract_links(html, PAGE, root).feeds == feeds


def test_a_page_declares_at_most_ten_feeds() -> None:
    links = [f'<link rel="alternate" type="application/rss+xml" href="/f{i}">' for i in range(50)]
    root = parse_html(head(*links))
    assert root is not None
    assert len(feed_links(root, PAGE)) == 10


@pytest.mark.parametrize(
    ("declared", "kind"),
    [("application/rss+xml", "rss"), ("application/atom+xml; charset=utf-8", "atom"),
     ("APPLICATION/RDF+XML", "rss"), ("application/feed+json", "json"), ("text/html", None),
     ("", None), ("application/xml", None), ("application/json", None)],
)  # fmt: skip
def test_feed_types(declared: str, kind: str | None) -> None:
    assert feed_type(declared) == kind


RSS = b"""<?xml version="1.0" encoding="utf-8"?>
<rss version="2.0"><channel><title>Novice</title><link>https://www.gov.si/novice/</link>
<item><title>A</title><link>https://www.gov.si/novice/a</link><guid>1</guid></item>
<item><title>B</title><link> https://www.gov.si/novice/b </link></item>
<item><title>rel</title><link>/novice/relative</link></item>
</channel></rss>"""
ATOM = b"""<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom">
<title>N</title><link rel="self" href="https://www.gov.si/atom.xml"/>
<entry><title>A</title><link href="https://www.gov.si/novice/a"/></entry>
<entry><title>E</title><link rel="enclosure" href="https://www.gov.si/x.pdf"/>
<link rel="alternate" href="https://www.gov.si/novice/c"/></entry>
</feed>"""
JSON = b"""\xef\xbb\xbf {"version": "https://jsonfeed.org/version/1.1", "title": "Novice",
 "home_page_url": "https://www.gov.si/novice/", "items": [
 {"id": "1", "url": "https://www.gov.si/novice/a", "date_published": "2026-11-28T10:00:00Z",
  "content_html": "<p>{\\"not\\": [\\"the end\\"]}</p>", "tags": ["a", {"b": []}]},
 {"id": "2", "url": "b", "date_published": "2026-11-28T09:00:00Z",
  "date_modified": "2026-11-29T08:00:00+01:00"},
 {"id": "3", "url": "https://www.gov.si/novice/a"}, {"id": "4"}, {"id": "5", "url": 7},
 {"id": "6", "url": "javascript:alert(1)"}, "not an item"]}"""
LAUGHS = (
    b'<?xml version="1.0"?><!DOCTYPE rss ['
    + b"".join(
        f'<!ENTITY l{i} "{f"&l{i - 1};" * 10}">'.encode() if i else b'<!ENTITY l0 "lol">'
        for i in range(10)
    )
    + b"]><rss><channel><item><link>https://www.gov.si/ok</link></item>"
    b"<item><link>&l9;</link></item></channel></rss>"
)
EXTERNAL = (
    b'<?xml version="1.0"?><!DOCTYPE rss [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
    b"<rss><channel><item><link>&x;</link></item>"
    b"<item><link>https://www.gov.si/ok</link></item></channel></rss>"
)


@pytest.mark.parametrize(
    ("body", "entries", "error"),
    [
        (RSS, ["https://www.gov.si/novice/a", "https://www.gov.si/novice/b"], None),
        (ATOM, ["https://www.gov.si/novice/a", "https://www.gov.si/novice/c"], None),
        # A sitemap served where a feed was declared is read as one.
        (b"<urlset><url><loc>https://www.gov.si/s</loc></url></urlset>",
         ["https://www.gov.si/s"], None),
        # Entities are never expanded, external ones never loaded.
        # libxml2 stops at the amplification; what came before the bomb is kept.
        (LAUGHS, ["https://www.gov.si/ok"], "xml: "),
        (EXTERNAL, ["https://www.gov.si/ok"], None),
        # Malformed: what was read before the break is kept, and the break named.
        (RSS[: RSS.index(b"<item><title>B")], ["https://www.gov.si/novice/a"],
         "xml: premature end of document"),
        # Wrong content: an HTML page, JSON, nothing.
        (b"<html><body>Napaka</body></html>", [], sitemaps.NOT_A_SITEMAP),
        (b"", [], sitemaps.NOT_A_SITEMAP),
        # JSON Feed: items' url, relative ones resolved against the feed, each once.
        (JSON, ["https://www.gov.si/novice/a", "https://www.gov.si/novice/b"], None),
        (gzip.compress(JSON),
         ["https://www.gov.si/novice/a", "https://www.gov.si/novice/b"], None),
        (JSON.replace(b"version/1.1", b"version/1"), ["https://www.gov.si/novice/a",
                                                      "https://www.gov.si/novice/b"], None),
        # JSON that is no JSON Feed: another version, none, an array, not JSON at all.
        (JSON.replace(b"jsonfeed.org", b"example.org"), [], feeds.NOT_A_JSON_FEED),
        (b'{"items": [{"url": "https://www.gov.si/x"}]}', [], feeds.NOT_A_JSON_FEED),
        (b'[{"url": "https://www.gov.si/x"}]', [], feeds.NOT_A_JSON_FEED),
        (b"{version: 1, items: [}", [], feeds.NOT_A_JSON_FEED),
        # Broken after its items: what was read is kept, the break named.
        (JSON[:-1] + b", }", ["https://www.gov.si/novice/a", "https://www.gov.si/novice/b"],
         "json: "),
    ],
    ids=["rss", "atom", "sitemap", "billion-laughs", "external-entity", "cut", "html", "empty",
         "json-feed", "json-feed-gzip", "json-feed-1.0", "json-other-version",
         "json-no-version", "json-array", "json-garbage", "json-broken-end"],
)  # fmt: skip
def test_a_feeds_entries(body: bytes, entries: list[str], error: str | None) -> None:
    read = read_feed(body, FEED)
    assert read.entries == entries
    assert (read.error or "").startswith(error or "") and (error is None) == (read.error is None)
    assert not read.truncated or error is not None


def test_entries_past_the_bound_are_not_read() -> None:
    items = b"".join(b"<item><link>https://www.gov.si/n/%d</link></item>" % i for i in range(900))
    read = read_feed(b"<rss><channel>" + items + b"</channel></rss>", FEED, max_entries=500)
    assert len(read.entries) == 500 and read.truncated


def test_a_json_feeds_dates() -> None:
    read = read_feed(JSON, FEED)
    assert read.lastmod == {"https://www.gov.si/novice/a": "2026-11-28T10:00:00Z",
                            "https://www.gov.si/novice/b": "2026-11-29T08:00:00+01:00"}  # fmt: skip


def json_feed(items: int, pad: int = 0) -> bytes:
    entries = b",".join(
        b'{"url": "https://www.gov.si/n/%d", "content_html": "%s"}' % (i, b"x" * pad)
        for i in range(items)
    )
    return b'{"version": "https://jsonfeed.org/version/1.1", "items": [' + entries + b"]}"


def test_json_entries_past_the_bound_are_not_read() -> None:
    read = read_feed(json_feed(900), FEED, max_entries=500)
    assert len(read.entries) == 500 and read.truncated and read.error is None
    assert read.entries[-1] == "https://www.gov.si/n/499"


def test_a_json_feed_is_read_within_its_byte_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(feeds, "JSON_MAX_BYTES", 10_000)
    body = json_feed(100, pad=500)  # 100 items of about 560 bytes: 17 whole ones fit
    read = read_feed(body, FEED)
    assert read.read_bytes == 10_000 < len(body)
    assert read.entries == [f"https://www.gov.si/n/{i}" for i in range(17)]
    assert read.truncated and read.error is None
    # Gzipped, the same: never inflated past the bound.
    assert read_feed(gzip.compress(body), FEED) == read


def test_a_json_feed_is_read_within_its_item_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    """Counted, not timed: linkless items count toward JSON_MAX_ITEMS, and reading stops
    there with the entries taken before it."""
    monkeypatch.setattr(feeds, "JSON_MAX_ITEMS", 100)
    seen: list[int] = []
    real = feeds._JsonItems._take

    def counted(self: feeds._JsonItems, item: dict[str, object]) -> bool:
        seen.append(1)
        return real(self, item)

    monkeypatch.setattr(feeds._JsonItems, "_take", counted)
    items = b'{"url": "/n/1"},' + b"{}," * 20_000 + b'{"url": "/n/2"}'
    body = b'{"version": "https://jsonfeed.org/version/1.1", "items": [' + items + b"]}"
    read = read_feed(body, FEED)
    assert read.entries == ["https://www.gov.si/n/1"] and read.truncated
    assert read.error is None and len(seen) == 100  # the bound, not the 20 002 items
    # A feed of exactly the bound's items is read whole.
    whole = read_feed(json_feed(100), FEED)
    assert len(whole.entries) == 100 and not whole.truncated


def test_a_50_mb_feed_is_read_within_its_bounds(monkeypatch: pytest.MonkeyPatch) -> None:
    """Counted, not timed: the XML reader stops at its element bound, having taken the one
    entry before it; a 50 MB JSON Feed is looked at only up to JSON_MAX_BYTES."""
    monkeypatch.setattr(sitemaps, "MAX_ELEMENTS", 20_000)  # read as the worker reads it
    first = b"<rss><channel><item><link>https://www.gov.si/n/1</link></item>"
    seen: list[int] = []
    real = sitemaps._take

    def counted(*args: object) -> bool:
        seen.append(1)
        return real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(sitemaps, "_take", counted)
    body = gzipped(first, b"<item/>", 50 * 2**20, b"</channel></rss>")
    read = read_feed(body, FEED)
    assert read.entries == ["https://www.gov.si/n/1"] and read.truncated
    assert len(seen) <= 20_000  # elements looked at: the bound, not the 7 M in the body
    assert read.read_bytes <= sitemaps.MAX_BYTES

    huge = json_feed(1, pad=50 * 2**20)
    read = read_feed(huge, FEED)
    assert read.read_bytes == feeds.JSON_MAX_BYTES and read.truncated
    assert read.entries == [] and read.error is None
