"""Spill files (govsi.store.spill): what could not be written is saved privately, replayed
oldest first into the crawldb it belongs to, a damaged line costs that line only, and two
processes never load one file twice."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine
from sqlalchemy.exc import OperationalError

from govsi.items import DiscoveredPage, FetchedPage
from govsi.store import schema
from govsi.store.spill import (
    default_spill_dir,
    replay,
    replay_spills,
    save_spill,
    set_spills_aside,
    spill_files,
)
from govsi.store.writer import CrawlWriter
from testkit.crawldb import T, q


def test_spills_are_replayed_oldest_first_and_removed(engine: Engine, tmp_path: Path) -> None:
    older = CrawlWriter(engine)
    older.add(DiscoveredPage("http://a.gov.si/", 0))
    first = older.spill(tmp_path)
    newer = CrawlWriter(engine)
    # The later file records the fetch of the page the earlier one discovered.
    newer.add(FetchedPage("http://a.gov.si/", 0, "HTML", T, 200, html_content="x"))
    second = newer.spill(tmp_path)
    assert spill_files(tmp_path) == [first, second]
    assert replay_spills(tmp_path, CrawlWriter(engine)) == 2
    assert spill_files(tmp_path) == []
    assert q(engine, "SELECT page_type_code FROM page") == [("HTML",)]


def test_a_spill_stays_when_crawldb_is_still_away(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    w = CrawlWriter(engine)
    w.add(DiscoveredPage("http://a.gov.si/", 0))
    path = w.spill(tmp_path)
    down = CrawlWriter(engine, retries=0)

    def broken(conn, batch):  # type: ignore[no-untyped-def]
        raise OperationalError("INSERT", {}, Exception("connection refused"))

    monkeypatch.setattr(down, "_apply", broken)
    with pytest.raises(RuntimeError):
        replay_spills(tmp_path, down)
    assert spill_files(tmp_path) == [path]


def test_fresh_start_sets_spills_aside(engine: Engine, tmp_path: Path) -> None:
    w = CrawlWriter(engine)
    w.add(DiscoveredPage("http://a.gov.si/", 0))
    w.spill(tmp_path)
    moved = set_spills_aside(tmp_path)
    assert spill_files(tmp_path) == [] and len(moved) == 1 and moved[0].exists()


def _spill(tmp_path: Path, crawl_id: str, n: int = 3) -> Path:
    items = [DiscoveredPage(f"http://a.gov.si/{i}", 1) for i in range(n)]
    return save_spill(tmp_path, items, crawl_id)


def test_a_spill_file_is_private_whole_and_names_its_crawldb(tmp_path: Path) -> None:
    path = _spill(tmp_path, "crawl-1")
    assert path.stat().st_mode & 0o777 == 0o600
    assert [p.name for p in tmp_path.iterdir()] == [path.name]  # no temporary left
    header = path.read_text().splitlines()[0]
    assert '"crawl_id": "crawl-1"' in header


def test_spill_of_another_crawldb_is_refused_and_kept(
    engine: Engine, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = _spill(tmp_path, "some-other-crawl")
    mine = schema.crawl_id(engine)
    assert replay_spills(tmp_path, CrawlWriter(engine), mine) == 0
    assert path.exists()
    assert "belongs to another crawldb (crawl some-other-crawl" in caplog.text
    assert q(engine, "SELECT count(*) FROM page") == [(0,)]
    ours = _spill(tmp_path, mine)
    assert replay_spills(tmp_path, CrawlWriter(engine), mine) == 3
    assert not ours.exists() and path.exists()


def test_a_damaged_line_loses_that_line_only(
    engine: Engine, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = _spill(tmp_path, "c", n=4)
    lines = path.read_text().splitlines()
    lines[2] = lines[2][:-7] + "#garbage"
    # ...and the file was cut short in the middle of its last line.
    path.write_text("\n".join(lines[:-1]) + "\n" + lines[-1][: len(lines[-1]) // 2])
    assert replay(path, CrawlWriter(engine), "c") == 2
    assert sorted(u for (u,) in q(engine, "SELECT url FROM page")) == [
        "http://a.gov.si/0", "http://a.gov.si/2",
    ]  # fmt: skip
    assert caplog.text.count("damaged, skipped") == 2


def test_processes_starting_together_load_each_spill_once(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = _spill(tmp_path, "c"), _spill(tmp_path, "c")
    # The other process claims the second file between our listing and our claim.
    real = Path.rename

    def racing(self: Path, target: Any) -> Any:
        if self == second and ".claimed-" in str(target):
            real(second, second.with_name(second.name + ".claimed-999999"))
            raise FileNotFoundError(self)
        return real(self, target)

    monkeypatch.setattr(Path, "rename", racing)
    assert replay_spills(tmp_path, CrawlWriter(engine), "c") == 3
    assert not first.exists()


def test_a_claim_left_by_a_dead_process_is_taken_up(engine: Engine, tmp_path: Path) -> None:
    path = _spill(tmp_path, "c")
    path.rename(path.with_name(path.name + ".claimed-4194999"))  # no such process
    assert replay_spills(tmp_path, CrawlWriter(engine), "c") == 3
    assert list(tmp_path.glob("crawldb-unwritten-*")) == []


def test_spill_folder_is_never_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    assert default_spill_dir(f"sqlite:///{tmp_path}/x/crawldb.sqlite3") == tmp_path / "x"
    assert default_spill_dir("postgresql+psycopg2://u:p@h/db") == tmp_path / "state" / "govsi"
    monkeypatch.delenv("XDG_STATE_HOME")
    assert default_spill_dir("postgresql://h/db") == Path.home() / ".local/state/govsi"
