"""End-to-end: ``scrapy crawl govsi`` over the simulated .gov.si web, into SQLite and into a
real PostgreSQL, asserting the exact database contents and the server's request log."""

from __future__ import annotations

from collections import Counter

from testkit.govcrawl import Result
from testkit.simweb import govweb
from testkit.simweb.expected import (
    EXPECTED_DOCUMENTS,
    EXPECTED_DUPLICATES,
    EXPECTED_FETCH_ERRORS,
    EXPECTED_IMAGES,
    EXPECTED_LINKS,
    EXPECTED_PAGES,
    EXPECTED_ROBOTS,
    REDIRECTS,
    E,
    N,
    P,
    U,
    W,
)


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
        "SELECT page_id, url, filename, content_type, data, accessed_time, id FROM image"
    )
    got = {(ids[pid], url, fn, ct) for pid, url, fn, ct, _, _, _ in rows}
    assert got == EXPECTED_IMAGES
    first = {url: min(i for _, u, _, _, _, _, i in rows if u == url) for _, url, *_ in rows}
    for _, url, _, _, data, when, row_id in rows:
        if url.startswith("https://www.google.com"):
            assert data is None and when is None
        elif url.endswith("manjka.png"):
            assert data is None and when is not None  # a 404 page is not the image
        elif row_id != first[url]:
            assert data is None and when is not None  # the bytes are on the first row
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
    # Read whole either way: revisits are on (REVISIT=due), and a revisit tells a replaced
    # document by its bytes' hash, kept or not. (With REVISIT=off and STORE_BINARY_DATA off
    # the transfer stops after the headers: tests/test_spider_revisits.py.)
    big = next(h for h in crawled.hits if h.target == "/dokumenti/velik.pdf")
    assert big.bytes_sent == govweb.BIG_PDF_SIZE
    hashes = crawled.rows("SELECT content_hash FROM page WHERE page_type_code = 'BINARY'")
    assert len(hashes) == len(EXPECTED_DOCUMENTS) and all(len(h) == 64 for (h,) in hashes)


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
    assert depth[f"{W}/nov-naslov"] == 2  # a redirect is a hop: one below its source
    assert depth[f"{P}/"] == 1


def test_duplicates_name_their_original(crawled: Result) -> None:
    ids = page_ids(crawled)
    rows = crawled.rows(
        "SELECT url, duplicate_of, html_content, http_status_code, accessed_time FROM page "
        "WHERE page_type_code = 'DUPLICATE'"
    )
    assert {url: ids[orig] for url, orig, _, _, _ in rows} == EXPECTED_DUPLICATES
    for url, _, html, status, when in rows:
        assert html is None and status == 200 and when is not None, url
    # A copy's own links are not followed: the page only the copy links to is unknown.
    assert not [h for h in crawled.hits if h.target == "/samo-v-kopiji"]
    # Originals carry what later copies are found by.
    hashes = crawled.rows(
        "SELECT count(*) FROM page WHERE page_type_code = 'HTML' AND content_hash IS NOT NULL"
    )
    assert hashes[0][0] > 20


def test_text_of_pages_and_documents(crawled: Result) -> None:
    """page_text: one row per HTML page fetched with success and per document, none for
    copies, errors, redirects or other types; documents' text, title and date read, the
    unreadable one recorded with its reason; pages' main text without the template."""
    rows = crawled.rows(
        "SELECT p.url, p.page_type_code, p.http_status_code, t.kind, t.status, t.reason, "
        "t.title, t.language, t.text, t.document_date FROM page_text t "
        "JOIN page p ON p.id = t.page_id"
    )
    got = {r[0]: r[1:] for r in rows}
    html_ok = {u for u, (t, s) in EXPECTED_PAGES.items() if t == "HTML" and 200 <= (s or 0) < 300}
    assert html_ok <= set(got)
    assert set(got) - html_ok == set(EXPECTED_DOCUMENTS)
    for url, (ptype, status, kind, *_rest) in got.items():
        assert (ptype, kind) in (("HTML", "HTML"), ("BINARY", EXPECTED_DOCUMENTS.get(url))), url
        assert 200 <= status < 300, url
    pdf = got[f"{W}/dokumenti/porocilo.pdf"]
    assert pdf[3:7] == ("ok", None, "Letno poročilo o javnih naročilih", "sl")
    assert "Uredba o javnem naročanju velja za vse občine" in pdf[7]
    assert str(pdf[8])[:19] == "2025-03-01 08:00:00"  # +01:00 in the PDF, UTC here
    assert got[f"{W}/dokumenti/prenos?id=7"][7] == pdf[7]
    docx = got[f"{W}/dokumenti/navodila.docx"]
    assert docx[3] == "ok" and "potrdilo o stalnem prebivališču" in docx[7]
    assert "Storitve za državljane" in got[f"{U}/datoteka.ppt"][7]
    big = got[f"{W}/dokumenti/velik.pdf"]
    assert big[3] == "failed" and big[4].startswith("not a readable PDF")
    assert got[f"{W}/"][5] == "GOV.SI"
    # The pages' Slovenian letters as served, whatever their encoding.
    assert all(r[7] and "Čestitke vsem občanom" in r[7] for u, r in got.items() if "sumniki" in u)
