"""Real gov.si pages (tests/data/realpages) crawled end to end with the default settings
(but the delay): every distinct page keeps its HTML, a DUPLICATE is an exact copy of its
original, near copies are flagged and kept whole, and no page a reader sees as text has
an empty main text.

The held-out part of every site (313 pages, never tuned on) is crawled, from its URLs as
seeds; robots.txt allows those alone, so the links to the rest are refused unasked. A crawl
of all 1 128 takes a minute and a half, most of it one host's pages one after another
(``bench.real_duplicates --crawl`` does it)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from govsi.text.maintext import main_text, whole_text
from testkit import realpages
from testkit.crawl import query, run_crawl
from testkit.simweb import realweb
from testkit.simweb.expected import E2E_SETTINGS

pytestmark = pytest.mark.e2e

# A page of fewer words than this is no text to a reader (a redirect stub, an empty app).
READER_WORDS = 30


@pytest.fixture(scope="module")
def crawled(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, str]]]:
    corpus = {p.url: p.html for p in realpages.pages()}
    seeds = [p.url for p in realpages.pages(part="heldout")]
    web = realweb.build(allow=seeds).start()
    tmp = tmp_path_factory.mktemp("realpages")
    db_url = f"sqlite:///{tmp / 'crawldb.sqlite3'}"
    try:
        run = run_crawl(web, db_url, tmp / "run", seeds, timeout=600,
                        DEFAULT_CRAWL_DELAY=0.01, **E2E_SETTINGS)  # fmt: skip
    finally:
        web.stop()
    assert run.returncode == 0, run.log[-3000:]
    assert "Traceback" not in run.log, run.log[-3000:]
    yield db_url, corpus


def test_the_held_out_pages_are_crawled(crawled: tuple[str, dict[str, str]]) -> None:
    db_url, _ = crawled
    fetched = {u for (u,) in query(db_url, "SELECT url FROM page WHERE http_status_code = 200")}
    heldout = {p.url for p in realpages.pages(part="heldout")}
    # Nearly every seed is fetched under its own URL; a few under another spelling of their
    # query, which robots.txt's rules, written for the corpus' spelling, refuse.
    assert len(fetched & heldout) >= 0.85 * len(heldout)


def test_a_duplicate_is_an_exact_copy_and_every_other_page_keeps_its_html(
    crawled: tuple[str, dict[str, str]],
) -> None:
    db_url, corpus = crawled
    rows = query(db_url, "SELECT p.url, p.page_type_code, p.html_content IS NOT NULL, o.url "
                         "FROM page p LEFT JOIN page o ON o.id = p.duplicate_of "
                         "WHERE p.http_status_code = 200")  # fmt: skip
    for url, kind, has_html, original in rows:
        if kind == "DUPLICATE":
            assert not has_html and original is not None
            if url in corpus and original in corpus:
                assert main_text(corpus[url]) == main_text(corpus[original]), (url, original)
        elif kind == "HTML":
            assert has_html, url


def test_near_copies_are_flagged_and_kept(crawled: tuple[str, dict[str, str]]) -> None:
    db_url, _ = crawled
    flagged = query(db_url, "SELECT p.page_type_code, p.html_content IS NOT NULL, p.similarity "
                            "FROM page p WHERE p.near_duplicate_of IS NOT NULL")  # fmt: skip
    # evem's activity pages share one template and most of their text, podatki's listings
    # theirs: they resemble one another, and each is kept.
    assert len(flagged) >= 10
    assert all(kind == "HTML" and has and 0.5 <= score <= 1 for kind, has, score in flagged)


def test_no_page_a_reader_sees_as_text_has_an_empty_main_text(
    crawled: tuple[str, dict[str, str]],
) -> None:
    db_url, _ = crawled
    html = {u: h for u, h in query(db_url, "SELECT url, html_content FROM page "
                                           "WHERE page_type_code = 'HTML'") if h}  # fmt: skip
    empty = [u for u, h in html.items()
             if not main_text(h) and len(whole_text(h).split()) >= READER_WORDS]  # fmt: skip
    assert empty == []
