"""Commands that only read crawldb (report, search, serve, index, warc pack) open it with
``database.reading_engine``: they never create an SQLite file, never change one (journal
mode, contents), and their PostgreSQL sessions refuse writes."""

from __future__ import annotations

import hashlib
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import Engine, text
from sqlalchemy.exc import DBAPIError

from govsi.search.index import SearchIndex
from govsi.store import database
from testkit.crawl import ROOT, project_env


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("url", ["sqlite://", "sqlite:///:memory:"])
def test_an_in_memory_crawldb_cannot_be_read_by_a_command(url: str) -> None:
    with pytest.raises(database.NoCrawldb, match="in-memory"):
        database.reading_engine(url)


def test_a_missing_sqlite_crawldb_is_an_error_and_stays_missing(tmp_path: Path) -> None:
    path = tmp_path / "absent.sqlite3"
    with pytest.raises(database.NoCrawldb, match=f"no crawldb at {path}"):
        database.reading_engine(f"sqlite:///{path}")
    assert list(tmp_path.iterdir()) == []


def test_a_reader_reads_and_refuses_writes(engine: Engine) -> None:
    with engine.begin() as conn:
        conn.execute(text("INSERT INTO page_type (code) VALUES ('PROBE')"))
    reader = database.reading_engine(engine.url.render_as_string(hide_password=False))
    try:
        with reader.connect() as conn:
            codes = {r[0] for r in conn.execute(text("SELECT code FROM page_type"))}
            assert "PROBE" in codes and "HTML" in codes
        with pytest.raises(DBAPIError, match=r"(?i)read-?only"), reader.begin() as conn:
            conn.execute(text("INSERT INTO page_type (code) VALUES ('WRITTEN')"))
    finally:
        reader.dispose()
    with engine.connect() as conn:
        written = text("SELECT count(*) FROM page_type WHERE code = 'WRITTEN'")
        assert conn.execute(written).scalar() == 0


def test_reading_an_sqlite_crawldb_leaves_the_file_as_it_was(tmp_path: Path) -> None:
    # A crawl's file in rollback-journal mode, as another tool may have left it: the crawl's
    # engine would switch it to WAL; a reader must not.
    path = tmp_path / "crawldb.sqlite3"
    writer = database.make_engine(f"sqlite:///{path}")
    database.migrate(writer)
    writer.dispose()
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA journal_mode=DELETE")
    before = _digest(path)
    reader = database.reading_engine(f"sqlite:///{path}")
    try:
        with reader.connect() as conn:
            assert conn.execute(text("SELECT count(*) FROM page")).scalar() == 0
    finally:
        reader.dispose()
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone() == ("delete",)
    assert _digest(path) == before


@pytest.mark.parametrize("command", [["search", "vlada"], ["index"]])
def test_a_reading_command_without_crawldb_says_so_and_creates_none(
    tmp_path: Path, command: list[str]
) -> None:
    index = tmp_path / "index"
    SearchIndex.open_for_update(index).close()
    crawldb = tmp_path / "crawldb.sqlite3"
    done = subprocess.run(
        [sys.executable, "-m", "scrapy", *command, "-s", f"CRAWLDB_URL=sqlite:///{crawldb}",
         "-s", f"SEARCH_INDEX={index}"],
        cwd=ROOT, env=project_env(), capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr[-2000:]
    assert f"no crawldb at {crawldb}" in done.stderr
    assert not crawldb.exists()
