"""A small web where politeness is the whole story: hosts that share an address, one with
a Crawl-delay longer than the default, one whose robots.txt fails with 503, and one whose
robots.txt redirects (to its https twin's)."""

from __future__ import annotations

import gzip

from testkit.simweb.server import Host, Resource, SimWeb, html, redirect

PAGES_PER_HOST = 6
SITEMAP_ONLY = ("/skrito1", "/skrito2")
SITEMAP_INDEX = """<?xml version="1.0" encoding="UTF-8"?>
<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <sitemap><loc>http://b.gov.si/sitemap-1.xml.gz</loc></sitemap>
</sitemapindex>
"""
SITEMAP_URLS = """<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <url><loc>http://b.gov.si/</loc></url>
  <url><loc>http://b.gov.si/skrito1</loc></url>
  <url><loc>http://b.gov.si/skrito2</loc></url>
  <url><loc>https://www.example.com/not-ours</loc></url>
</urlset>
"""
CRAWL_DELAY = 1.5


def _pages(name: str, extra_links: str = "") -> dict[str, Resource]:
    # A chain with cross links, so that breadth-first reaches every page in a few hops.
    out: dict[str, Resource] = {}
    for i in range(PAGES_PER_HOST):
        links = " ".join(f'<a href="/p{j}">p{j}</a>' for j in (i + 1, i + 2) if j < PAGES_PER_HOST)
        path = "/" if i == 0 else f"/p{i}"
        body = f"<h1>{name} {i}</h1>{links} {extra_links if i == 0 else ''}"
        out[path] = html(f"<html><body>{body}</body></html>")
    return out


def _robots(text: str) -> Resource:
    return Resource(text.encode(), headers={"Content-Type": "text/plain"})


def build() -> SimWeb:
    a = _pages("a", '<a href="http://b.gov.si/">b</a> <a href="http://c.gov.si/">c</a>')
    a["/robots.txt"] = _robots("User-agent: *\nDisallow: /p5\n")
    b = _pages("b", '<a href="http://d.gov.si/">d</a> <a href="http://e.gov.si/">e</a>')
    # Pages only the sitemap knows, behind an index and a gzipped child.
    b["/robots.txt"] = _robots("User-agent: *\nDisallow:\n\nSitemap: /sitemap.xml\n")
    b["/sitemap.xml"] = Resource(SITEMAP_INDEX.encode(), headers={"Content-Type": "text/xml"})
    b["/sitemap-1.xml.gz"] = Resource(
        gzip.compress(SITEMAP_URLS.encode(), mtime=0),
        headers={"Content-Type": "application/x-gzip"},
    )
    for path in SITEMAP_ONLY:
        b[path] = html(f"<html><body><h1>b {path}</h1></body></html>")
    # Pages whose links must not be followed, each the only way to a page of its own.
    a["/p1"] = html(
        '<html><head><meta name="robots" content="noindex, nofollow"></head><body>'
        '<h1>a 1</h1><a href="/p2">p2</a> <a href="/samo-prek-nofollow">x</a></body></html>'
    )
    c = _pages("c")
    c["/p1"] = html(
        '<html><body><h1>c 1</h1><a href="/p2">p2</a> <a href="/samo-prek-glave">x</a>'
        "</body></html>",
        **{"X-Robots-Tag": "nofollow"},
    )
    c["/robots.txt"] = _robots(f"User-agent: govsi-crawler\nCrawl-delay: {CRAWL_DELAY}\n")
    d = _pages("d")
    d["/robots.txt"] = Resource(b"busy", status=503, headers={"Content-Type": "text/plain"})
    e = _pages("e")
    e["/robots.txt"] = redirect("http://e.gov.si/pravila.txt")
    e["/pravila.txt"] = _robots("User-agent: *\nDisallow: /p4\n")
    return SimWeb(
        [
            # a and b share one address; d and e another.
            Host("a.gov.si", 0, a),
            Host("b.gov.si", 0, b),
            Host("c.gov.si", 1, c),
            Host("d.gov.si", 2, d),
            Host("e.gov.si", 2, e),
        ]
    )


SEEDS = ["http://a.gov.si/"]
