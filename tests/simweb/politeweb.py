"""A small web where politeness is the whole story: hosts that share an address, one with
a Crawl-delay longer than the default, one whose robots.txt fails with 503, and one whose
robots.txt redirects (to its https twin's)."""

from __future__ import annotations

from tests.simweb.server import Host, Resource, SimWeb, html, redirect

PAGES_PER_HOST = 6
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
    c = _pages("c")
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
