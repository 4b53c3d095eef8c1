"""Search end to end, on the shared crawl of the simulated web (SQLite and PostgreSQL): the
crawl (SEARCH_INDEX set) indexed crawldb's text as it ended, and ``scrapy index`` into a
new folder builds the same; ``scrapy search`` finds pages and documents by inflected forms,
without diacritics, by phrases and filters; another ``scrapy index`` has nothing to redo."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from testkit.crawl import ROOT, project_env
from testkit.govcrawl import Result
from testkit.serving import scrapy_serve
from testkit.simweb.expected import EXPECTED_DOCUMENTS, U, W

pytestmark = pytest.mark.e2e


def scrapy(result: Result, folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "scrapy", *args, "-s", f"CRAWLDB_URL={result.db_url}",
           "-s", f"SEARCH_INDEX={folder}"]  # fmt: skip
    return subprocess.run(cmd, cwd=ROOT, env=project_env(), capture_output=True, text=True,
                          timeout=300, check=False)  # fmt: skip


@pytest.fixture(scope="module")
def indexed(crawled: Result, tmp_path_factory: pytest.TempPathFactory) -> tuple[Result, Path]:
    texts = crawled.rows("SELECT count(*) FROM page_text WHERE status = 'ok'")[0][0]
    assert f"search index {crawled.search_index} updated: {texts} pages" in crawled.run.log
    folder = tmp_path_factory.mktemp("index") / "search-index"
    done = scrapy(crawled, folder, "index")
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"{texts} pages (re)indexed, 0 dropped, 0 unchanged" in done.stderr
    return crawled, folder


def search(indexed: tuple[Result, Path], query: str) -> list[dict[str, Any]]:
    done = scrapy(*indexed, "search", "--json", query)
    assert done.returncode == 0, done.stderr[-3000:]
    found: list[dict[str, Any]] = json.loads(done.stdout)
    return found


PDF, PDF_AGAIN, DOCX, PPT = (f"{W}/dokumenti/porocilo.pdf", f"{W}/dokumenti/prenos?id=7",
                             f"{W}/dokumenti/navodila.docx", f"{U}/datoteka.ppt")  # fmt: skip


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        # Inflected forms other than the document's.
        ("javno naročilo", {PDF, PDF_AGAIN}),
        ("uredbe ministrstvom", {PDF, PDF_AGAIN}),
        # Without diacritics, in another case.
        ("prebivalisca", {DOCX}),
        ("POTRDILO O STALNEM PREBIVALISCU", {DOCX}),
        ('"stalnem prebivališču"', {DOCX}),
        # Inside a PowerPoint 97 file, and the filters.
        ("storitev drzavljanom", {PPT}),
        ("storitve type:ppt", {PPT}),
        ("storitve type:pdf", set()),
        ("naročila site:gov.si host:www.gov.si type:pdf after:2025-01", {PDF, PDF_AGAIN}),
        ("naročila before:2024", set()),
    ],
)
def test_search_finds_pages_and_documents(
    indexed: tuple[Result, Path], query: str, expected: set[str]
) -> None:
    found = search(indexed, query)
    assert {r["url"] for r in found} == expected
    for r in found:
        assert set(r) == {"url", "title", "score", "snippet", "type", "host", "date"}
        assert r["type"] == EXPECTED_DOCUMENTS[r["url"]] and "**" in r["snippet"]


FOREVER, OLD = f"{W}/dokumenti/vecni.pdf", f"{W}/dokumenti/zapisnik.docx"


def test_documents_dated_9999_and_1601_keep_their_text_not_their_date(
    indexed: tuple[Result, Path],
) -> None:
    # Past Tantivy's range (1677 to 2262), such dates made every index update fail.
    rows = indexed[0].rows(
        "SELECT p.url, t.status, t.document_date, p.accessed_time FROM page_text t"
        f" JOIN page p ON p.id = t.page_id WHERE p.url IN ('{FOREVER}', '{OLD}')"
    )
    assert {(url, status, date) for url, status, date, _ in rows} == {
        (FOREVER, "ok", None), (OLD, "ok", None),
    }  # fmt: skip
    fetched = {url: str(accessed)[:10] for url, *_, accessed in rows}
    for query, url in (("roka veljavnosti", FOREVER), ("seje sveta after:0001", OLD),
                       ("seje sveta before:9999-12-31", OLD)):  # fmt: skip
        found = search(indexed, query)
        assert [(r["url"], r["date"]) for r in found] == [(url, fetched[url])], query


def test_a_pages_snippet_marks_the_words_as_written(indexed: tuple[Result, Path]) -> None:
    (best, *_) = search(indexed, "cestitke obcanom")
    assert "sumniki" in best["url"] and "**Čestitke**" in best["snippet"]
    assert "**občanom**" in best["snippet"]


def test_the_terminal_shows_title_url_type_and_snippet(indexed: tuple[Result, Path]) -> None:
    done = scrapy(*indexed, "search", "potrdilo")
    assert done.returncode == 0 and "1 results for 'potrdilo'" in done.stdout
    assert "Navodila" in done.stdout and DOCX in done.stdout and "DOCX · " in done.stdout
    assert "**potrdilo**" in done.stdout


def test_another_index_run_has_nothing_to_redo(indexed: tuple[Result, Path]) -> None:
    for folder in (indexed[1], indexed[0].search_index):  # this test's, the crawl's own
        done = scrapy(indexed[0], folder, "index")
        assert done.returncode == 0 and "0 pages (re)indexed, 0 dropped" in done.stderr


def test_scrapy_serve_answers_on_its_address(indexed: tuple[Result, Path]) -> None:
    result, folder = indexed
    with scrapy_serve(result.db_url, folder) as served:
        url = f"{served}/?q=potrdilo+prebivalisca"
        with urllib.request.urlopen(url, timeout=10) as got:
            html = got.read().decode()
    assert DOCX in html and "<mark>" in html and "1 zadetkov" in html
