"""A small news site with a feed, for the feed tests: ``build()`` serves its first version,
``publish(web)`` adds a news item (its page, and an entry in the feed only).

``novice.gov.si``: a home page, a news list declaring its RSS feed (and a second feed under
``/zaprto/``, which robots.txt forbids), news pages, and ``/novice/samo-v-viru``, which only
the feed names. The list also declares a JSON Feed (naming ``/novice/samo-v-json``, which
no other feed or page names), a feed that moved for good (301 to ``/novice/atom.xml``) and
one that is gone (404). robots.txt names two sitemaps: one that never changes, and one that, once
``publish`` has run, says ``/o-nas`` changed (``<lastmod>``: then). The feeds and sitemaps
send an ETag and answer a matching If-None-Match with a 304.
"""

from __future__ import annotations

import time

from testkit.simweb.server import Host, Resource, SimWeb, html

N = "novice.gov.si"
SEEDS = [f"http://{N}/"]
FEED_PATH = "/novice/rss"
FORBIDDEN_FEED = "/zaprto/rss"
ONLY_IN_FEED = "/novice/samo-v-viru"
NEW_ITEM = "/novice/nova"  # published by ``publish``: only the feed names it
SITEMAP = "/sitemap.xml"  # never changes
SITEMAP_CHANGED = "/sitemap-strani.xml"  # names /o-nas, with a lastmod once published
CHANGED_PAGE = "/o-nas"
JSON_FEED = "/novice/feed.json"
ONLY_IN_JSON = "/novice/samo-v-json"
MOVED_FEED = "/novice/atom"  # 301 to MOVED_TO
MOVED_TO = "/novice/atom.xml"
GONE_FEED = "/novice/izginil"  # 404


def _rss(paths: list[str]) -> str:
    items = "".join(
        f"<item><title>{p}</title><link>http://{N}{p}</link><guid>{p}</guid></item>" for p in paths
    )
    return (
        '<?xml version="1.0" encoding="utf-8"?><rss version="2.0"><channel>'
        f"<title>Novice</title><link>http://{N}/novice/</link>{items}</channel></rss>"
    )


def _xml(text: str, etag: str, ctype: str) -> Resource:
    return Resource(text.encode(), headers={"Content-Type": ctype, "ETag": etag})


def _urlset(lastmod: str) -> str:
    when = f"<lastmod>{lastmod}</lastmod>" if lastmod else ""
    return (
        '<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        f"<url><loc>http://{N}{CHANGED_PAGE}</loc>{when}</url></urlset>"
    )


def build() -> SimWeb:
    pages = {
        "/robots.txt": Resource(
            f"User-agent: *\nDisallow: /zaprto/\n\nSitemap: http://{N}{SITEMAP}\n"
            f"Sitemap: http://{N}{SITEMAP_CHANGED}\n".encode(),
            headers={"Content-Type": "text/plain"},
        ),
        "/": html('<html><body><h1>Novice</h1><a href="/novice/">novice</a> '
                  '<a href="/o-nas">o nas</a></body></html>'),
        "/novice/": html(
            '<html><head><link rel="alternate" type="application/rss+xml" title="RSS" '
            f'href="{FEED_PATH}"><link rel="alternate" type="application/atom+xml" '
            f'href="{FORBIDDEN_FEED}"><link rel="alternate" type="application/feed+json" '
            f'href="{JSON_FEED}"><link rel="alternate" type="application/atom+xml" '
            f'href="{MOVED_FEED}"><link rel="alternate" type="application/rss+xml" '
            f'href="{GONE_FEED}"></head><body><h1>Seznam novic</h1>'
            '<a href="/novice/1">1</a> <a href="/novice/2">2</a></body></html>'
        ),
        "/o-nas": html("<html><body><h1>O nas</h1></body></html>"),
        "/novice/1": html("<html><body><h1>Novica 1</h1></body></html>"),
        "/novice/2": html("<html><body><h1>Novica 2</h1></body></html>"),
        ONLY_IN_FEED: html("<html><body><h1>Samo v viru</h1></body></html>"),
        NEW_ITEM: html("<html><body><h1>Nova novica</h1></body></html>"),
        ONLY_IN_JSON: html("<html><body><h1>Samo v JSON</h1></body></html>"),
        JSON_FEED: Resource(
            ('{"version": "https://jsonfeed.org/version/1.1", "title": "Novice", "items": ['
             f'{{"id": "1", "url": "http://{N}{ONLY_IN_JSON}"}}, '
             f'{{"id": "2", "url": "/novice/1"}}]}}').encode(),
            headers={"Content-Type": "application/feed+json"},
        ),
        MOVED_FEED: Resource(b"", status=301, headers={"Location": MOVED_TO}),
        MOVED_TO: _xml(
            '<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"><title>N</title>'
            f'<entry><link href="http://{N}/novice/2"/></entry></feed>',
            '"a1"', "application/atom+xml",
        ),
        FEED_PATH: _xml(_rss(["/novice/2", "/novice/1", ONLY_IN_FEED]), '"v1"',
                        "application/rss+xml"),
        FORBIDDEN_FEED: _xml(_rss(["/zaprto/skrito"]), '"z1"', "application/rss+xml"),
        SITEMAP: _xml(
            '<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
            f"<url><loc>http://{N}/</loc></url><url><loc>http://{N}/o-nas</loc></url></urlset>",
            '"s1"', "application/xml",
        ),
        SITEMAP_CHANGED: _xml(_urlset(""), '"p1"', "application/xml"),
    }  # fmt: skip
    return SimWeb([Host(N, 0, pages)])


def publish(web: SimWeb) -> None:
    """A new item, named only in the feed (whose ETag changes); ``/o-nas`` changes, and
    one sitemap says so (its lastmod: now); the other sitemap stays."""
    resources = web.hosts[N].resources
    resources[FEED_PATH] = _xml(
        _rss([NEW_ITEM, "/novice/2", "/novice/1", ONLY_IN_FEED]), '"v2"', "application/rss+xml"
    )
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    resources[SITEMAP_CHANGED] = _xml(_urlset(now), '"p2"', "application/xml")
    resources[CHANGED_PAGE] = html("<html><body><h1>O nas</h1><p>Nov naslov.</p></body></html>")
