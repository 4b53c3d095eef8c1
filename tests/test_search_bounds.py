"""The search index against values and folders it did not make: dates past Tantivy's
range, in filters and in crawldb's rows; rows that fail, skipped and counted; readers that
never write the index; batches bounded by their characters."""

from __future__ import annotations

import shutil
from datetime import datetime
from pathlib import Path
from urllib.parse import urlencode

import pytest
import tantivy
from sqlalchemy import Engine, text
from sqlalchemy.exc import DBAPIError

from govsi.items import FetchedPage, PageText
from govsi.search import fields as fields_module
from govsi.search.document import SearchDocument
from govsi.search.index import SearchIndex, SearchIndexError
from govsi.search.query import ParsedQuery
from govsi.search.searcher import Searcher
from govsi.search.update import batched, update
from govsi.store.writer import CrawlWriter
from testkit.crawldb import T
from tests.support import searchsite
from tests.support.oldindex import another_versions_index


def doc(pid: int, text: str, date: datetime | None = None) -> SearchDocument:
    return SearchDocument(pid, f"https://www.gov.si/{pid}", "www.gov.si", "HTML", "Naslov",
                          text, "sl", date, 1, "m")  # fmt: skip


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """An index of three pages: dated 2024, 2025, and undated."""
    path = tmp_path / "index"
    index = SearchIndex.open_for_update(path)
    index.write([doc(1, "Uredba ena", datetime(2024, 5, 1)),
                 doc(2, "Uredba dva", datetime(2025, 5, 1)), doc(3, "Uredba tri")], [])  # fmt: skip
    index.close()
    return path


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("uredba after:0001", {1, 2}),
        ("uredba before:9999-12-31", {1, 2}),
        ("uredba after:0001 before:9999", {1, 2}),
        ("uredba after:9999", set()),
        ("uredba before:1000", set()),
        ("uredba after:1677-01-01 before:2262-12", {1, 2}),
        ("after:2025", {2}),
        ("uredba before:2024-12-31", {1}),
        (ParsedQuery([["uredba"]], after=datetime(1, 1, 1)), {1, 2}),
        (ParsedQuery([["uredba"]], before=datetime(9999, 12, 31, 23, 59, 59)), {1, 2}),
        (ParsedQuery([["uredba"]], after=datetime(9999, 1, 1), before=datetime(1, 1, 1)), set()),
    ],
)
def test_a_date_filter_past_the_index_range_asks_its_nearest(
    folder: Path, query: str | ParsedQuery, expected: set[int]
) -> None:
    index = SearchIndex.open(folder)
    try:
        assert {h.page_id for h in Searcher(index).search(query).hits} == expected
    finally:
        index.close()


def test_the_search_page_answers_a_date_filter_past_the_index_range(
    engine: Engine, tmp_path: Path
) -> None:
    from govsi.search.serve import SearchSite

    site = SearchSite(engine, searchsite.build(engine, tmp_path / "index"))
    for query in ("uredba after:0001", "uredba before:9999-12-31", "after:0001-01 before:9999"):
        assert f"{searchsite.PAGES} zadetkov" in site.page(urlencode({"q": query})), query


def test_a_reader_never_makes_an_index(tmp_path: Path) -> None:
    missing = tmp_path / "none"
    with pytest.raises(SearchIndexError, match=r"no search index in .*run scrapy index"):
        SearchIndex.open(missing)
    assert not missing.exists()
    (tmp_path / "empty").mkdir()
    with pytest.raises(SearchIndexError, match="no search index"):
        SearchIndex.open(tmp_path / "empty")
    assert list((tmp_path / "empty").iterdir()) == []


def test_a_reader_of_a_deleted_index_fails_and_leaves_it_deleted(folder: Path) -> None:
    reader = SearchIndex.open(folder)  # as scrapy serve holds one while it searches
    shutil.rmtree(folder)
    with pytest.raises(SearchIndexError):
        SearchIndex.open(folder)
    reader.close()
    assert not folder.exists()


def test_a_reader_refuses_another_versions_index_and_leaves_it_whole(tmp_path: Path) -> None:
    folder = tmp_path / "index"
    another_versions_index(folder)
    before = files(folder)
    with pytest.raises(SearchIndexError, match="another version's fields"):
        SearchIndex.open(folder)
    assert files(folder) == before
    assert tantivy.Index.open(str(folder)).searcher().num_docs == 1


def files(folder: Path) -> dict[str, bytes]:
    """The index's files and what they hold (Tantivy's empty lock files left out)."""
    return {f.name: f.read_bytes() for f in folder.iterdir() if not f.name.endswith(".lock")}


def test_a_reader_writes_nothing(folder: Path) -> None:
    state = (folder / "state.sqlite3").read_bytes()
    index = SearchIndex.open(folder)
    try:
        with pytest.raises(SearchIndexError, match="opened to be read"):
            index.write([doc(4, "Uredba štiri")], [])
        with pytest.raises(SearchIndexError):
            index.set_inlinks({1: 2})
        assert {h.page_id for h in Searcher(index).search("uredba").hits} == {1, 2, 3}
    finally:
        index.close()
    assert (folder / "state.sqlite3").read_bytes() == state


def crawled(engine: Engine, texts: list[str]) -> None:
    """Pages ``/0``, ``/1``, ... of ``texts`` in crawldb, fetched at ``T``."""
    writer = CrawlWriter(engine)
    for i, body in enumerate(texts):
        found = PageText("HTML", "ok", body, None, "Naslov", "sl")
        writer.add(FetchedPage(f"https://www.gov.si/{i}", 1, "HTML", T, 200,
                               html_content=f"<p>{body}</p>", content_hash=f"h{i}",
                               text=found))  # fmt: skip
    assert writer.flush()


def dates(index: SearchIndex) -> dict[str, datetime | None]:
    """Each found page's date (naive UTC) by its number."""
    hits = Searcher(index).search("uredba").hits
    return {h.url.rsplit("/", 1)[1]: h.date and h.date.replace(tzinfo=None) for h in hits}


def test_dates_past_tantivys_range_in_crawldb_leave_the_fetch_time(
    engine: Engine, tmp_path: Path
) -> None:
    # Rows of an older crawldb, or another tool's: stored before dates were checked.
    crawled(engine, ["Uredba ena", "Uredba dva", "Uredba tri", "Uredba štiri"])
    stored = {"0": datetime(9999, 12, 31, 23, 59, 59), "1": datetime(1601, 1, 1),
              "2": datetime(2024, 5, 1)}  # fmt: skip
    with engine.begin() as conn:
        for n, when in stored.items():
            conn.execute(text("UPDATE page_text SET document_date = :d WHERE page_id ="
                              " (SELECT id FROM page WHERE url = :u)"),
                         {"d": when, "u": f"https://www.gov.si/{n}"})  # fmt: skip
    index = SearchIndex.open_for_update(tmp_path / "index")
    done = update(engine, index)
    assert (done.added, done.skipped) == (4, 0)
    assert dates(index) == {"0": T, "1": T, "2": datetime(2024, 5, 1), "3": T}


def test_a_page_that_cannot_be_analysed_is_skipped_logged_and_counted(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:  # fmt: skip
    crawled(engine, ["Uredba ena", "Uredba zlomljena", "Uredba tri"])
    fields_of = fields_module.fields_of

    def analysed(doc: SearchDocument, *args: object) -> object:
        if "zlomljena" in doc.text:
            raise RuntimeError("a text no rule foresaw")
        return fields_of(doc, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(fields_module, "fields_of", analysed)
    index = SearchIndex.open_for_update(tmp_path / "index")
    done = update(engine, index)
    assert (done.added, done.skipped) == (2, 1) and set(dates(index)) == {"0", "2"}
    assert "https://www.gov.si/1) skipped, its analysis failed: RuntimeError" in caplog.text
    again = update(engine, index)  # tried again, not marked done
    assert (again.added, again.skipped, again.unchanged) == (0, 1, 2)
    monkeypatch.undo()
    assert update(engine, index).added == 1 and set(dates(index)) == {"0", "1", "2"}


def test_a_row_the_driver_cannot_read_is_skipped_and_the_rest_read(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from govsi.store import database

    engine = database.make_engine(f"sqlite:///{tmp_path / 'crawldb.sqlite3'}")
    database.migrate(engine)
    crawled(engine, [f"Uredba {n}" for n in range(5)])
    with engine.begin() as conn:  # bytes that are no UTF-8, as another tool may write
        conn.execute(text(
            "UPDATE page_text SET text = CAST(X'55726564626120FF' AS TEXT)"
            " WHERE page_id = (SELECT id FROM page WHERE url LIKE '%/3')"
        ))  # fmt: skip
    index = SearchIndex.open_for_update(tmp_path / "index")
    done = update(engine, index)
    assert (done.added, done.skipped) == (4, 1) and set(dates(index)) == {"0", "1", "2", "4"}
    assert "skipped, not read from crawldb: OperationalError" in caplog.text
    engine.dispose()


def test_crawldb_lost_stops_the_update_rather_than_skipping_every_page(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    crawled(engine, ["Uredba ena", "Uredba dva"])

    def lost(*args: object) -> None:
        raise DBAPIError("SELECT", {}, OSError("server closed the connection"),
                         connection_invalidated=True)  # fmt: skip

    monkeypatch.setattr("govsi.search.source._read", lost)
    index = SearchIndex.open_for_update(tmp_path / "index")
    with pytest.raises(DBAPIError):
        update(engine, index)
    assert index.marks() == {}


def test_a_document_tantivy_refuses_is_skipped_and_the_batch_written(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    index = SearchIndex.open_for_update(tmp_path / "index")
    written = index.write([doc(1, "Uredba ena"), doc(2, "Uredba dva", datetime(9999, 12, 31)),
                           doc(3, "Uredba tri", datetime(1601, 1, 1))], [])  # fmt: skip
    assert (written.added, written.skipped) == (1, 2)
    assert {h.page_id for h in Searcher(index).search("uredba").hits} == {1}
    assert set(index.marks()) == {1}
    assert "page 2 (https://www.gov.si/2) skipped, Tantivy refused it" in caplog.text


@pytest.mark.parametrize(
    ("sizes", "most", "chars", "expected"),
    [
        ([], 3, 100, []),
        ([10, 10, 10, 10], 3, 100, [[10, 10, 10], [10]]),  # by count
        ([40, 40, 40], 10, 100, [[40, 40], [40]]),  # by characters
        ([50, 50, 1], 10, 100, [[50, 50], [1]]),  # exactly the bound fits
        ([500, 10, 500], 10, 100, [[500], [10], [500]]),  # a longer page goes alone
        ([0] * 5, 2, 100, [[0, 0], [0, 0], [0]]),
    ],
)  # fmt: skip
def test_batched_by_pages_and_characters(
    sizes: list[int], most: int, chars: int, expected: list[list[int]]
) -> None:
    # Each page's size: its text's and its title's characters.
    docs = [SearchDocument(i, "u", "h", "HTML", "t" * (n // 2), "x" * (n - n // 2), None, None,
                           None, "m") for i, n in enumerate(sizes)]  # fmt: skip
    got = list(batched(docs, most, chars))
    assert [[len(d.text) + len(d.title) for d in b] for b in got] == expected
    assert [d for b in got for d in b] == docs


def test_an_update_holds_batches_of_bounded_characters(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Texts of 1 000 characters, batches of 2 500: two pages a batch, though 2 000 may.
    crawled(engine, [f"Uredba {n} " + "beseda " * 142 for n in range(5)])
    monkeypatch.setattr("govsi.search.update.BATCH_CHARS", 2_500)
    held: list[int] = []
    analysed = SearchIndex.analysed

    def counted(self: SearchIndex, batch: list[SearchDocument], *args: object) -> object:
        held.append(sum(len(d.text) + len(d.title) for d in batch))
        return analysed(self, batch, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(SearchIndex, "analysed", counted)
    progress: list[tuple[int, int]] = []
    index = SearchIndex.open_for_update(tmp_path / "index")
    assert update(engine, index, lambda *a: progress.append(a)).added == 5
    assert progress == [(2, 5), (4, 5), (5, 5)] and max(held) <= 2_500
