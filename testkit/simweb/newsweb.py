"""Three small sites where news appears every day, for the multi-day test: ``build()`` serves
day 0, ``publish(web, day)`` a day's new items, ``publish_between(web)`` an item named only
by a feed and a page named only by a sitemap.

- ``novice.gov.si``: a news list declaring its RSS feed (``<link rel="alternate">``), the
  feed, news pages, and pages that never change; no sitemap.
- ``urad.gov.si``: a news list without a feed (its only signal is the list), pages that
  never change; no sitemap.
- ``agencija.gov.si``, on novice's address: pages that never change and a sitemap with
  ``<lastmod>``.

Every resource sends an ETag (its bytes' hash) and answers a matching If-None-Match with a
304. Pictures: a coat of arms on every novice page and on urad's list, and one on each
site's never-changing pages.
"""

from __future__ import annotations

import hashlib
import re
import time

from testkit.simweb.server import Host, Resource, SimWeb

N, U, A = "novice.gov.si", "urad.gov.si", "agencija.gov.si"
SEEDS = [f"http://{h}/" for h in (N, U, A)]
FEED = "/novice/rss"
SITEMAP = "/sitemap.xml"
NEWS_LIST = {N: "/novice/", U: "/obvestila/"}
ON_LIST = 5  # a list shows its newest items
FIRST_ITEMS = 3  # items each list has on day 0
# Pages whose bytes never change, by host.
STEADY = {
    N: ("/", "/o-nas", "/kontakt"),
    U: ("/", "/storitve"),
    A: ("/", "/o-agenciji", "/razpisi/"),
}
PICTURE = {N: "/slike/grb.png", U: "/slike/urad.png", A: "/slike/agencija.png"}
STEADY_PICTURE = "/slike/stavba.jpg"  # on each site's second steady page
ONLY_IN_FEED = (N, "/novice/vmes")  # ``publish_between``: the feed names it, no list
ONLY_IN_SITEMAP = (A, "/razpisi/vmes")  # ``publish_between``: the sitemap names it
PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(64))


def _resource(body: bytes, ctype: str) -> Resource:
    etag = '"' + hashlib.sha256(body).hexdigest()[:16] + '"'
    return Resource(body, headers={"Content-Type": ctype, "ETag": etag})


def _page(host: str, title: str, body: str = "", pictures: tuple[str, ...] = ()) -> Resource:
    images = "".join(f'<img src="{p}" alt="slika">' for p in pictures)
    # Each page its own words, or the duplicate detector would rightly merge them.
    text = f"<p>{title} na strani {host}: besedilo o storitvah, postopkih in obrazcih.</p>"
    html = (
        f"<!DOCTYPE html><html><head><title>{title}</title></head><body>"
        f'<nav><a href="/">Domov</a></nav><main><h1>{title}</h1>{text}{body}{images}</main>'
        "</body></html>"
    )
    return _resource(html.encode(), "text/html; charset=utf-8")


def _items(host: str, numbers: range) -> list[str]:
    prefix = NEWS_LIST[host]
    return [f"{prefix}{k}" for k in reversed(numbers)]


def _rss(paths: list[str]) -> Resource:
    items = "".join(
        f"<item><title>{p}</title><link>http://{N}{p}</link><guid>{p}</guid></item>" for p in paths
    )
    text = (
        '<?xml version="1.0" encoding="utf-8"?><rss version="2.0"><channel>'
        f"<title>Novice</title><link>http://{N}/novice/</link>{items}</channel></rss>"
    )
    return _resource(text.encode(), "application/rss+xml")


def _sitemap(entries: list[tuple[str, str]]) -> Resource:
    urls = "".join(f"<url><loc>http://{A}{p}</loc><lastmod>{m}</lastmod></url>" for p, m in entries)
    text = (
        '<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        f"{urls}</urlset>"
    )
    return _resource(text.encode(), "application/xml")


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _list(web: SimWeb, host: str, count: int) -> None:
    """``host``'s news list with items 1..count (its newest ON_LIST) and their pages."""
    resources = web.hosts[host].resources
    newest = _items(host, range(1, count + 1))[:ON_LIST]
    links = "".join(f'<a href="{p}">Novica {p}</a> ' for p in newest)
    head = ""
    if host == N:
        head = f'<link rel="alternate" type="application/rss+xml" title="RSS" href="{FEED}">'
    page = _page(host, "Seznam novic", links, (PICTURE[host],))
    if head:
        page = _resource(
            page.body.replace(b"<head>", f"<head>{head}".encode()), "text/html; charset=utf-8"
        )
    resources[NEWS_LIST[host]] = page
    for path in newest:
        if path not in resources:
            pictures = (PICTURE[N],) if host == N else ()
            resources[path] = _page(host, f"Novica {path}", "", pictures)
    if host == N:
        # The item only the feed names stays in it.
        extra = [ONLY_IN_FEED[1]] if ONLY_IN_FEED[1] in resources else []
        resources[FEED] = _rss(newest + extra)


def build() -> SimWeb:
    robots = _resource(b"User-agent: *\nDisallow:\n", "text/plain")
    n: dict[str, Resource] = {
        "/robots.txt": robots,
        "/": _page(
            N,
            "Novice",
            '<a href="/novice/">Novice</a> <a href="/o-nas">O nas</a> '
            '<a href="/kontakt">Kontakt</a>',
            (PICTURE[N],),
        ),
        "/o-nas": _page(N, "O nas", "", (PICTURE[N], STEADY_PICTURE)),
        "/kontakt": _page(N, "Kontakt", "", (PICTURE[N],)),
        STEADY_PICTURE: _resource(PNG + b"n", "image/jpeg"),
        PICTURE[N]: _resource(PNG + b"grb", "image/png"),
    }
    u: dict[str, Resource] = {
        "/robots.txt": robots,
        "/": _page(
            U, "Urad", '<a href="/obvestila/">Obvestila</a> <a href="/storitve">Storitve</a>'
        ),
        "/storitve": _page(U, "Storitve", "", (STEADY_PICTURE,)),
        STEADY_PICTURE: _resource(PNG + b"u", "image/jpeg"),
        PICTURE[U]: _resource(PNG + b"urad", "image/png"),
    }
    day0 = "2026-11-01"
    a: dict[str, Resource] = {
        "/robots.txt": _resource(
            f"User-agent: *\nDisallow:\n\nSitemap: http://{A}{SITEMAP}\n".encode(), "text/plain"
        ),
        "/": _page(
            A, "Agencija", '<a href="/o-agenciji">O agenciji</a> <a href="/razpisi/">Razpisi</a>'
        ),
        "/o-agenciji": _page(A, "O agenciji", "", (STEADY_PICTURE, PICTURE[A])),
        "/razpisi/": _page(A, "Razpisi", "<p>Ni odprtih razpisov.</p>"),
        STEADY_PICTURE: _resource(PNG + b"a", "image/jpeg"),
        PICTURE[A]: _resource(PNG + b"agencija", "image/png"),
        SITEMAP: _sitemap([(p, day0) for p in STEADY[A]]),
    }
    web = SimWeb([Host(N, 0, n), Host(U, 1, u), Host(A, 0, a)])
    for host in NEWS_LIST:
        _list(web, host, FIRST_ITEMS)
    return web


def publish(web: SimWeb, day: int) -> set[tuple[str, str]]:
    """Day ``day``'s new item on each list (and in the feed); the new pages, as
    (host, path)."""
    count = FIRST_ITEMS + day
    for host in NEWS_LIST:
        _list(web, host, count)
    return {(host, f"{NEWS_LIST[host]}{count}") for host in NEWS_LIST}


def publish_between(web: SimWeb) -> set[tuple[str, str]]:
    """A news item named only by the feed, a page named only by the sitemap (its
    ``<lastmod>`` now); the new pages."""
    host, path = ONLY_IN_FEED
    web.hosts[host].resources[path] = _page(host, "Novica med dnevi", "", (PICTURE[N],))
    feed = web.hosts[N].resources[FEED].body.decode()
    newest = re.findall(r"<guid>([^<]+)</guid>", feed)
    web.hosts[N].resources[FEED] = _rss([path, *newest])
    host, path = ONLY_IN_SITEMAP
    web.hosts[host].resources[path] = _page(host, "Nov razpis")
    entries = [(p, "2026-11-01") for p in STEADY[A]] + [(path, _now())]
    web.hosts[host].resources[SITEMAP] = _sitemap(entries)
    return {ONLY_IN_FEED, ONLY_IN_SITEMAP}


def pictures_on(web: SimWeb, host: str, path: str) -> set[tuple[str, str]]:
    """The pictures a page shows as served now."""
    body = web.lookup(host, path).body.decode(errors="replace")
    return {(host, src) for src in re.findall(r'<img src="([^"]+)"', body)}
