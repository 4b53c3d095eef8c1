"""What a complete crawl of the standard simulated web (``govweb``) leaves in crawldb."""

from __future__ import annotations

from testkit.crawl import Snapshot
from testkit.simweb.govweb import KOPIJE_LINKED

K = "http://kopije.gov.si"
W, E, U, P, X, N = (
    "http://www.gov.si",
    "http://evem.gov.si",
    "https://e-uprava.gov.si",
    "http://podatki.e-uprava.gov.si",
    "http://e-prostor.gov.si",
    "http://napake.gov.si",
)
# Small limits so that the hostile pages of napake.gov.si fail fast; velik.pdf (4 MiB)
# still fits. No retries: a timeout's two retries (RETRY_TIMES=2) cost each crawl of this
# web 6 s; tests/test_e2e_crawl.py crawls with the default and checks them.
E2E_SETTINGS = {"DOWNLOAD_TIMEOUT": 3, "DOWNLOAD_MAXSIZE": 6 * 1024 * 1024, "RETRY_TIMES": 0}

# canonical URL -> (page_type_code, http_status_code); every page row there must be.
EXPECTED_PAGES: dict[str, tuple[str, int | None]] = {
    f"{W}/": ("HTML", 200),
    f"{W}/podrocja/": ("HTML", 200),
    f"{W}/podrocja/a/": ("HTML", 200),
    f"{W}/podrocja/a/b/": ("HTML", 200),
    f"{W}/podrocja/a/b/c/": ("HTML", 200),
    f"{W}/o-vladi": ("HTML", 200),
    f"{W}/novice/?a=1&b=2": ("HTML", 200),
    f"{W}/~osebje/": ("HTML", 200),
    f"{W}/dogodki/": ("HTML", 200),
    f"{W}/zemljevid": ("HTML", 200),
    f"{W}/dokumenti/porocilo.pdf": ("BINARY", 200),
    f"{W}/dokumenti/prenos?id=7": ("BINARY", 200),
    f"{W}/dokumenti/navodila.docx": ("BINARY", 200),
    f"{W}/dokumenti/lazni.pdf": ("HTML", 200),
    f"{W}/dokumenti/velik.pdf": ("BINARY", 200),
    f"{W}/dokumenti/vecni.pdf": ("BINARY", 200),
    f"{W}/dokumenti/zapisnik.docx": ("BINARY", 200),
    f"{W}/star-naslov": ("HTML", 301),
    f"{W}/nov-naslov": ("HTML", 200),
    f"{W}/ni-strani": ("HTML", 404),
    f"{W}/napaka": ("HTML", 500),
    f"{W}/zasebno/skrivnost": ("FRONTIER", None),
    f"{E}/": ("HTML", 200),
    f"{E}/storitve/": ("HTML", 200),
    f"{E}/storitve/obrazec": ("HTML", 200),
    f"{E}/pomoc": ("HTML", 200),
    f"{E}/sumniki": ("HTML", 200),
    f"{E}/sumniki-meta": ("HTML", 200),
    f"{E}/zanka1": ("HTML", 302),
    f"{E}/zanka2": ("HTML", 302),
    f"{U}/": ("HTML", 200),
    f"{U}/prijava": ("HTML", 200),
    f"{U}/datoteka.ppt": ("BINARY", 200),
    f"{U}/besedilo.txt": ("OTHER", 200),
    f"{P}/": ("HTML", 200),
    f"{P}/katalog": ("HTML", 200),
    f"{P}/api/v1": ("FRONTIER", None),
    f"{X}/": ("FRONTIER", None),
    f"{N}/": ("HTML", 200),
    f"{N}/neskoncno": ("ERROR", None),
    f"{N}/pocasi": ("ERROR", None),
    f"{N}/brez-tipa": ("HTML", 200),
    f"{N}/napacen-charset": ("HTML", 200),
    f"{N}/pokvarjen": ("HTML", 200),
    f"{N}/najden": ("HTML", 200),
    f"{N}/prazen": ("HTML", 200),
    f"{N}/gzip": ("HTML", 200),
    f"{N}/bomba": ("ERROR", None),
    f"{N}/ven": ("HTML", 302),
    f"{N}/brez-lokacije": ("HTML", 302),
    f"{N}/dolg": ("HTML", 200),
    f"{N}/utf16": ("HTML", 200),
    f"{N}/latin2": ("HTML", 200),
}
# Copies name their original (the first fetched: the index links to it first).
# Exact copies (the same title and text to a reader): DUPLICATE, no content. Near copies
# (the print view, the same main text without the template; an "updated" stamp added to
# the text) are pages of their own, kept whole and flagged.
EXPECTED_DUPLICATES = {f"{K}/clanek-kopija": f"{K}/clanek"}
EXPECTED_NEAR_DUPLICATES = {
    f"{K}/clanek?print=1": f"{K}/clanek",
    f"{K}/clanek-datum": f"{K}/clanek",
}
_KOPIJE = ("/", *KOPIJE_LINKED)
EXPECTED_PAGES.update(
    {f"{K}{p}": ("DUPLICATE" if f"{K}{p}" in EXPECTED_DUPLICATES else "HTML", 200) for p in _KOPIJE}
)
# Redirects with a Location keep no content: the page is the one they lead to.
REDIRECTS = {f"{W}/star-naslov", f"{E}/zanka1", f"{E}/zanka2", f"{N}/ven"}
# Why each ERROR page has no response, as page.fetch_error must say.
EXPECTED_FETCH_ERRORS = {
    f"{N}/neskoncno": "larger than DOWNLOAD_MAXSIZE",
    f"{N}/pocasi": "took longer than 3.0 seconds",
    f"{N}/bomba": "exceeded DOWNLOAD_MAXSIZE",
}

EXPECTED_DOCUMENTS = {
    f"{W}/dokumenti/porocilo.pdf": "PDF",
    f"{W}/dokumenti/prenos?id=7": "PDF",
    f"{W}/dokumenti/navodila.docx": "DOCX",
    f"{W}/dokumenti/velik.pdf": "PDF",
    f"{W}/dokumenti/vecni.pdf": "PDF",  # dated 9999-12-31
    f"{W}/dokumenti/zapisnik.docx": "DOCX",  # dated 1601-01-01
    f"{U}/datoteka.ppt": "PPT",
}

# (page, image URL, filename, content_type) for every <img src> that is not a data: URI.
EXPECTED_IMAGES = {
    (f"{W}/", f"{W}/img/grb.png", "grb.png", "image/png"),
    (f"{W}/", "https://www.google.com/logo.png", "logo.png", None),
    (f"{W}/o-vladi", f"{W}/img/grb.png", "grb.png", "image/png"),
    (f"{E}/", f"{W}/img/grb.png", "grb.png", "image/png"),
    (f"{E}/", f"{E}/slike/logo.gif", "logo.gif", "image/gif"),
    (f"{N}/pokvarjen", f"{N}/slike/manjka.png", "manjka.png", "text/html; charset=utf-8"),
}

_WWW_INDEX_LINKS = [
    "/podrocja/",
    "/o-vladi",
    "/novice/?a=1&b=2",
    "/~osebje/",
    "/",
    "/dogodki/",
    "/dokumenti/porocilo.pdf",
    "/dokumenti/prenos?id=7",
    "/dokumenti/navodila.docx",
    "/dokumenti/lazni.pdf",
    "/dokumenti/velik.pdf",
    "/dokumenti/vecni.pdf",
    "/dokumenti/zapisnik.docx",
    "/star-naslov",
    "/ni-strani",
    "/napaka",
    "/zasebno/skrivnost",
    "/zemljevid",
]
EXPECTED_LINKS = (
    {(f"{W}/", f"{W}{p}") for p in _WWW_INDEX_LINKS}
    | {(f"{W}/", f"{E}/"), (f"{W}/", f"{U}/")}
    | {
        (f"{W}/podrocja/", f"{W}/podrocja/a/"),
        (f"{W}/podrocja/", f"{W}/"),
        (f"{W}/podrocja/a/", f"{W}/podrocja/a/b/"),
        (f"{W}/podrocja/a/b/", f"{W}/podrocja/a/b/c/"),
        (f"{W}/o-vladi", f"{W}/"),
        (f"{W}/star-naslov", f"{W}/nov-naslov"),
        (f"{W}/ni-strani", f"{W}/"),
        (f"{E}/", f"{E}/storitve/obrazec"),
        (f"{E}/", f"{E}/pomoc"),
        (f"{E}/", f"{E}/storitve/"),
        (f"{E}/", f"{E}/sumniki"),
        (f"{E}/", f"{E}/sumniki-meta"),
        (f"{E}/", f"{P}/"),
        (f"{E}/", f"{E}/zanka1"),
        (f"{E}/storitve/", f"{E}/storitve/obrazec"),
        (f"{E}/zanka1", f"{E}/zanka2"),
        (f"{E}/zanka2", f"{E}/zanka1"),
        (f"{U}/", f"{U}/prijava"),
        (f"{U}/", f"{W}/"),
        (f"{U}/", f"{U}/datoteka.ppt"),
        (f"{U}/", f"{U}/besedilo.txt"),
        (f"{U}/prijava", f"{U}/"),
        (f"{P}/", f"{P}/katalog"),
        (f"{P}/", f"{P}/api/v1"),
    }
    | {(f"{N}/", url) for url in EXPECTED_PAGES if url.startswith(N) and url[len(N) :] != "/"}
    - {(f"{N}/", f"{N}/najden")}
    | {(f"{N}/{p}", f"{N}/najden") for p in ("brez-tipa", "pokvarjen", "gzip")}
    | {(f"{N}/dolg", f"{N}/")}
    | {(f"{K}/", f"{K}{p}") for p in _KOPIJE if p != "/"}
    | {(f"{K}{p}", f"{K}/") for p in ("/clanek", "/clanek-datum", "/novica-1", "/novica-2")}
    | set(EXPECTED_DUPLICATES.items())
)

EXPECTED_ROBOTS = {
    "www.gov.si": "User-agent: *\nDisallow: /zasebno/\n",
    "evem.gov.si": None,
    "e-uprava.gov.si": "User-agent: *\nAllow: /\n",
    "podatki.e-uprava.gov.si": "User-agent: govsi-crawler\nDisallow: /api/\n",
    "e-prostor.gov.si": "User-agent: govsi-crawler\nDisallow: /\n\nUser-agent: *\nAllow: /\n",
    "napake.gov.si": "<html><body><h1>Stran ne obstaja</h1></body></html>",
    "kopije.gov.si": None,
}


def assert_complete(crawl: Snapshot) -> None:
    """crawldb holds exactly what a complete crawl of govweb must leave."""
    # Not a test module, so pytest does not explain a failed assert here: say what differs.
    pages = {
        url: (crawl.pages.get(url), EXPECTED_PAGES.get(url))
        for url in crawl.pages.keys() | EXPECTED_PAGES.keys()
        if crawl.pages.get(url) != EXPECTED_PAGES.get(url)
    }
    assert not pages, f"pages (got, expected): {pages}"
    assert crawl.links == EXPECTED_LINKS, (
        f"extra links {crawl.links - EXPECTED_LINKS}, missing {EXPECTED_LINKS - crawl.links}"
    )
    assert crawl.images == EXPECTED_IMAGES, (
        f"extra images {crawl.images - EXPECTED_IMAGES}, missing {EXPECTED_IMAGES - crawl.images}"
    )
    # A near copy names the page it resembles most: of two equally like, either.
    assert crawl.near.keys() == EXPECTED_NEAR_DUPLICATES.keys(), f"near copies: {crawl.near}"
