"""The search index against values and folders it did not make: dates past Tantivy's
range, in filters and in crawldb's rows; rows that fail, skipped and counted; readers that
never write the index; batches bounded by their characters."""

from __future__ import annotations

import sqlite3
from datetime import datetime
from pathlib import Path

import pytest
import tantivy

from govsi.search.document import SearchDocument
from govsi.search.index import SearchIndex, SearchIndexError
from govsi.search.query import ParsedQuery
from govsi.search.searcher import Searcher


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
    reader = SearchIndex.open(folder)
    reader.close()
    for f in folder.iterdir():
        f.unlink()
    folder.rmdir()
    with pytest.raises(SearchIndexError):
        SearchIndex.open(folder)
    assert not folder.exists()


def test_a_reader_refuses_another_versions_index_and_leaves_it_whole(tmp_path: Path) -> None:
    folder = tmp_path / "index"
    folder.mkdir()
    other = tantivy.SchemaBuilder()
    other.add_text_field("body", index_option="position")
    writer = tantivy.Index(other.build(), path=str(folder)).writer()
    writer.add_document(tantivy.Document(body="nova"))
    writer.commit()
    writer.wait_merging_threads()
    with sqlite3.connect(folder / "state.sqlite3") as state:
        state.execute("CREATE TABLE indexed (page_id INTEGER PRIMARY KEY, mark TEXT)")
        state.execute("INSERT INTO indexed VALUES (1, 'T')")
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
