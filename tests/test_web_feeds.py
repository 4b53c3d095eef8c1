"""Feeds: which ones a page declares (autodiscovery), and a feed's entries read within
bounds from hostile input (entities never expanded, nothing loaded, bytes and entries
bounded, malformed and wrong-type bodies answered, never raised)."""

from __future__ import annotations

import time

import pytest

from govsi.web import sitemaps
from govsi.web.extract import extract_links, parse_html
from govsi.web.feeds import feed_links, feed_type, read_feed
from tests.simweb.floodweb import gzipped

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
        (head('<link rel="alternate" type="application/feed+json" href="/feed.json">'), []),
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
     ("APPLICATION/RDF+XML", "rss"), ("text/html", None), ("", None),
     ("application/xml", None)],
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
        (b'{"version": "https://jsonfeed.org/version/1"}', [], sitemaps.NOT_A_SITEMAP),
        (b"", [], sitemaps.NOT_A_SITEMAP),
    ],
    ids=["rss", "atom", "sitemap", "billion-laughs", "external-entity", "cut", "html", "json",
         "empty"],
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


def test_a_50_mb_feed_costs_bounded_work(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sitemaps, "MAX_ELEMENTS", 20_000)  # read as the worker reads it
    first = b"<rss><channel><item><link>https://www.gov.si/n/1</link></item>"
    body = gzipped(first, b"<item/>", 50 * 2**20, b"</channel></rss>")
    started = time.process_time()
    read = read_feed(body, FEED)
    assert read.entries == ["https://www.gov.si/n/1"] and read.truncated
    assert time.process_time() - started < 30  # a guard against hanging, not a goal
