"""End-to-end: ``scrapy crawl govsi`` over the simulated .gov.si web, into SQLite and into a
real PostgreSQL, asserting the exact database contents and the server's request log."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, text

from tests.simweb import govweb
from tests.simweb.server import Hit, SimWeb
from tests.support.crawl import CrawlRun, run_crawl

W, E, U, P, X, N = (
    "http://www.gov.si",
    "http://evem.gov.si",
    "https://e-uprava.gov.si",
    "http://podatki.e-uprava.gov.si",
    "http://e-prostor.gov.si",
    "http://napake.gov.si",
)
# Small limits so that the hostile pages of napake.gov.si fail fast; velik.pdf (4 MiB)
# still fits.
E2E_SETTINGS = {"DOWNLOAD_TIMEOUT": 3, "DOWNLOAD_MAXSIZE": 6 * 1024 * 1024}

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
)

EXPECTED_ROBOTS = {
    "www.gov.si": "User-agent: *\nDisallow: /zasebno/\n",
    "evem.gov.si": None,
    "e-uprava.gov.si": "User-agent: *\nAllow: /\n",
    "podatki.e-uprava.gov.si": "User-agent: govsi-crawler\nDisallow: /api/\n",
    "e-prostor.gov.si": "User-agent: govsi-crawler\nDisallow: /\n\nUser-agent: *\nAllow: /\n",
    "napake.gov.si": "<html><body><h1>Stran ne obstaja</h1></body></html>",
}


@dataclass
class Result:
    run: CrawlRun
    hits: list[Hit]
    db_url: str
    store_binary: bool

    def rows(self, sql: str) -> list[Any]:
        engine = create_engine(self.db_url)
        try:
            with engine.connect() as conn:
                if engine.dialect.name == "postgresql":
                    conn.execute(text("SET search_path TO crawldb"))
                return list(conn.execute(text(sql)))
        finally:
            engine.dispose()


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def crawled(request: pytest.FixtureRequest, gov_web: SimWeb, tmp_path_factory: Any) -> Result:
    work: Path = tmp_path_factory.mktemp(f"crawl-{request.param}")
    store_binary = request.param == "postgresql"
    if request.param == "sqlite":
        db_url = f"sqlite:///{work / 'crawldb.sqlite3'}"
    else:
        db_url = request.getfixturevalue("pg_cluster").create_database("e2e")
    gov_web.reset_log()
    run = run_crawl(
        gov_web, db_url, work, govweb.SEEDS, STORE_BINARY_DATA=store_binary, **E2E_SETTINGS
    )
    assert run.returncode == 0, run.log[-5000:]
    return Result(run, gov_web.requested(), db_url, store_binary)


def page_ids(result: Result) -> dict[int, str]:
    return {pid: url for pid, url in result.rows("SELECT id, url FROM page")}


def test_every_expected_page_with_type_and_status(crawled: Result) -> None:
    got = {
        url: (ptype, status)
        for url, ptype, status in crawled.rows(
            "SELECT url, page_type_code, http_status_code FROM page"
        )
    }
    assert got == EXPECTED_PAGES


def test_fetched_pages_have_time_and_html_only_where_html(crawled: Result) -> None:
    for url, ptype, html, when in crawled.rows(
        "SELECT url, page_type_code, html_content, accessed_time FROM page"
    ):
        if ptype == "FRONTIER":
            assert when is None and html is None, url
            continue
        assert when is not None, url
        if url == f"{N}/prazen":
            assert html == "", url
        elif ptype == "HTML" and url not in REDIRECTS:
            assert html and "<h1>" in html, url
        else:
            assert html is None, url


def test_fetch_errors_say_why(crawled: Result) -> None:
    got = {
        url: error
        for url, error in crawled.rows("SELECT url, fetch_error FROM page")
        if error is not None and url.startswith(N)
    }
    assert set(got) == set(EXPECTED_FETCH_ERRORS)
    for url, reason in EXPECTED_FETCH_ERRORS.items():
        assert reason in got[url], url


def test_hostile_pages_are_recorded_not_fatal(crawled: Result) -> None:
    html = dict(crawled.rows(f"SELECT url, html_content FROM page WHERE url LIKE '{N}/%'"))
    # Links are still found in broken markup and behind gzip; text survives odd encodings.
    for path in ("napacen-charset", "utf16", "latin2"):
        assert govweb.SUMNIKI in html[f"{N}/{path}"], path
    assert "\x00" not in html[f"{N}/pokvarjen"]
    # The link over MAX_URL_LENGTH is dropped and counted, never stored or requested.
    assert crawled.run.stats.get("govsi/url_too_long", 0) >= 1
    assert not [h for h in crawled.hits if "dolga-pot" in h.target]
    long_rows = crawled.rows("SELECT count(*) FROM page WHERE url LIKE '%dolga-pot%'")
    assert long_rows == [(0,)]


def test_windows_1250_pages_keep_their_letters(crawled: Result) -> None:
    rows = dict(
        crawled.rows(
            f"SELECT url, html_content FROM page WHERE url IN ('{E}/sumniki', '{E}/sumniki-meta')"
        )
    )
    for url in (f"{E}/sumniki", f"{E}/sumniki-meta"):
        assert govweb.SUMNIKI in rows[url], url


def test_links_exactly(crawled: Result) -> None:
    ids = page_ids(crawled)
    got = {(ids[a], ids[b]) for a, b in crawled.rows("SELECT from_page, to_page FROM link")}
    assert got == EXPECTED_LINKS


def test_images_one_row_per_page_and_fetched_once(crawled: Result) -> None:
    ids = page_ids(crawled)
    rows = crawled.rows(
        "SELECT page_id, url, filename, content_type, data, accessed_time FROM image"
    )
    got = {(ids[pid], url, fn, ct) for pid, url, fn, ct, _, _ in rows}
    assert got == EXPECTED_IMAGES
    for _, url, _, _, data, when in rows:
        if url.startswith("https://www.google.com"):
            assert data is None and when is None
        elif url.endswith("manjka.png"):
            assert data is None and when is not None  # a 404 page is not the image
        else:
            assert when is not None
            assert bytes(data) == (govweb.PNG if url.endswith(".png") else govweb.GIF)
    grb = [h for h in crawled.hits if h.host == "www.gov.si" and h.target == "/img/grb.png"]
    assert len(grb) == 1


def test_documents_in_page_data(crawled: Result) -> None:
    ids = page_ids(crawled)
    rows = crawled.rows("SELECT page_id, data_type_code, data, size FROM page_data")
    assert {ids[pid]: code for pid, code, _, _ in rows} == EXPECTED_DOCUMENTS
    for pid, _, data, size in rows:
        url = ids[pid]
        if crawled.store_binary:
            assert data is not None and len(bytes(data)) == size, url
        else:
            assert data is None, url
    big = next(h for h in crawled.hits if h.target == "/dokumenti/velik.pdf")
    if crawled.store_binary:
        assert big.bytes_sent == govweb.BIG_PDF_SIZE
    else:
        # The transfer was stopped once the headers said "PDF".
        assert big.bytes_sent < govweb.BIG_PDF_SIZE // 2


def test_sites_and_robots(crawled: Result) -> None:
    got = dict(crawled.rows("SELECT domain, robots_content FROM site"))
    assert got == EXPECTED_ROBOTS


def test_no_url_stored_twice(crawled: Result) -> None:
    urls = [u for (u,) in crawled.rows("SELECT url FROM page")]
    assert len(urls) == len(set(urls))


def test_each_page_requested_once_and_nothing_outside_scope(crawled: Result) -> None:
    hits = crawled.hits
    assert not [h for h in hits if not h.host.endswith(".gov.si")], "left .gov.si"
    pages = Counter((h.host, h.target) for h in hits if h.target != "/robots.txt")
    for (host, target), n in pages.items():
        # A 500 and a timeout are retried (RETRY_TIMES=2); all else is fetched exactly once.
        assert n == (3 if target in ("/napaka", "/pocasi") else 1), (host, target, n)
    robots = Counter(h.host for h in hits if h.target == "/robots.txt")
    assert robots == dict.fromkeys(EXPECTED_ROBOTS, 1)
    never = {
        ("www.gov.si", "/zasebno/skrivnost"),
        ("podatki.e-uprava.gov.si", "/api/v1"),
        ("e-prostor.gov.si", "/"),
    }
    assert not never & set(pages)
    assert all(h.user_agent.startswith("govsi-crawler") for h in hits)


def test_breadth_first_within_host(crawled: Result) -> None:
    www = [h.target for h in crawled.hits if h.host == "www.gov.si"]
    chain = ["/", "/podrocja/", "/podrocja/a/", "/podrocja/a/b/", "/podrocja/a/b/c/"]
    positions = [www.index(p) for p in chain]
    assert positions == sorted(positions)
    # Every depth-1 page is fetched before any depth-2 page.
    depth1 = [www.index(p) for p in ("/o-vladi", "/dogodki/", "/zemljevid", "/ni-strani")]
    assert max(depth1) < www.index("/podrocja/a/")


def test_depth_recorded(crawled: Result) -> None:
    depth = dict(crawled.rows("SELECT url, depth FROM page"))
    assert depth[f"{W}/"] == 0
    assert depth[f"{W}/podrocja/a/b/c/"] == 4
    assert depth[f"{W}/nov-naslov"] == 1  # a redirect target keeps its source's depth
    assert depth[f"{P}/"] == 1
