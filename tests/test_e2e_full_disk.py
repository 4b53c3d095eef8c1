"""Full disks: a crawl whose SQLite crawldb, one whose WARC folder and one whose PostgreSQL
tables run out of space on a small filesystem the test mounts (a tmpfs), then go on once
space is freed.

crawldb's disk full (its spill folder beside it, as by default): the crawl pauses with one
line (no new requests), keeps what it holds, and goes on by itself when the ballast goes;
nothing is fetched twice. PostgreSQL's data disk full (the spill folder elsewhere): the
crawl goes on, saving what crawldb does not take, written back once it has room. The WARC
folder's disk full: the crawl stops with one line, every file closed at its last complete
record; the next run goes on, fetching again only the pages whose records never reached
the disk. Either way every WARC file passes ``warcio check`` and ``gzip -t``, every
capture crawldb points at is whole, and crawldb ends as a crawl with room all along would
leave it."""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import os
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy.exc import OperationalError
from warcio.archiveiterator import ArchiveIterator

from testkit.archive import Target, check_archive, target_of
from testkit.crawl import (
    ROOT,
    RunningCrawl,
    project_env,
    query,
    run_crawl,
    snapshot,
    start_crawl,
    wait_for_requests,
)
from testkit.pgcluster import PgCluster
from testkit.simweb import govweb
from testkit.simweb.expected import E2E_SETTINGS, assert_complete
from testkit.simweb.server import SimWeb
from testkit.smallfs import (
    SmallFs,
    in_namespace,
    mount_refused,
    namespace_refused,
    small_fs,
)

# Spread out, so that the disk fills half-way; flushed often.
SETTINGS: dict[str, object] = {
    **E2E_SETTINGS, "DEFAULT_CRAWL_DELAY": 0.25, "DB_FLUSH_INTERVAL": 0.5,
}  # fmt: skip
HELD = "cannot take it either"
WARC_FULL = "no space left for WARC_DIR"


@pytest.fixture
def mountable() -> None:
    reason = mount_refused()
    if reason is not None:
        # Run as root of a user namespace instead (the last test); never a silent pass.
        pytest.skip(f"{reason}: run in a user namespace by the last test")


@pytest.fixture
def started() -> Iterator[list[RunningCrawl]]:
    """The crawls a test starts: any still running when it ends (a failed assertion) is
    killed, or a crawl paused on a full disk would wait for room for ever."""
    crawls: list[RunningCrawl] = []
    yield crawls
    for crawl in crawls:
        if crawl.proc.poll() is None:
            crawl.proc.kill()
            crawl.proc.communicate()


def wait_for_line(crawl: RunningCrawl, text: str, timeout: float = 60) -> None:
    log = crawl.workdir / "crawl.log"
    deadline = time.monotonic() + timeout
    while not (log.exists() and text in log.read_text(encoding="utf-8")):
        assert crawl.proc.poll() is None, f"the crawl ended before saying {text!r}"
        assert time.monotonic() < deadline, f"never said {text!r}"
        time.sleep(0.05)


def assert_whole(warc: Path, db_url: str, served: Counter[Target]) -> None:
    """Every WARC file closed and valid (``warcio check``, ``gzip -t``), every page
    crawldb holds as fetched captured, and every capture it points at whole."""
    files = check_archive(warc, db_url, served)
    assert subprocess.run(["gzip", "-t", *map(str, files)]).returncode == 0
    rows = query(db_url, "SELECT p.url, c.warc_file, c.warc_offset, c.warc_length "
                         "FROM warc_capture c JOIN page p ON p.id = c.page_id")  # fmt: skip
    assert rows
    for url, name, offset, length in rows:
        with open(warc / name, "rb") as f:
            f.seek(offset)
            member = f.read(length)
        assert gzip.decompress(member).startswith(b"WARC/1.1\r\n")  # one whole member
        records = ArchiveIterator(io.BytesIO(member), check_digests=True)
        record = next(records)
        assert target_of(record.rec_headers.get_header("WARC-Target-URI")) == target_of(url)
        record.content_stream().read()
        assert record.digest_checker.passed is not False, url


def wait_for_stored(db_url: str, timeout: float = 60) -> None:
    """Until crawldb holds a fetched page (a row other than FRONTIER)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(OperationalError):  # not made yet, or locked a moment
            if query(db_url, "SELECT 1 FROM page WHERE page_type_code <> 'FRONTIER' LIMIT 1"):
                return
        time.sleep(0.1)
    raise AssertionError(f"no page stored in crawldb within {timeout} s")


def scrapy_command(db_url: str, index: Path, *args: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "scrapy", *args, "-s", f"CRAWLDB_URL={db_url}",
           "-s", f"SEARCH_INDEX={index}"]  # fmt: skip
    return subprocess.run(cmd, cwd=ROOT, env=project_env(), capture_output=True, text=True,
                          timeout=300, check=False)  # fmt: skip


# Words of the simulated web's pages and documents: no page has them all, so the search
# finds every page with any of them.
WORDS = "vladi novice koledar karta seznam storitve pomoč naročila prebivalisca obrazec domov"


def found(db_url: str, index: Path) -> set[str]:
    """The URLs ``scrapy search`` finds for WORDS."""
    done = scrapy_command(db_url, index, "search", "--json", "-n", "500", WORDS)
    assert done.returncode == 0, done.stderr[-3000:]
    return {r["url"] for r in json.loads(done.stdout)}


def targets(web: SimWeb) -> Counter[Target]:
    return Counter((h.host, h.target) for h in web.requested())


def test_crawldb_on_a_full_disk_pauses_and_goes_on_once_space_is_freed(
    mountable: None, started: list[RunningCrawl], gov_web: SimWeb, tmp_path: Path
) -> None:
    warc = tmp_path / "warc"
    with small_fs(tmp_path / "disk", "16m") as disk:
        db_url = f"sqlite:///{disk.path / 'crawldb.sqlite3'}"
        gov_web.reset_log()
        crawl = start_crawl(gov_web, db_url, tmp_path / "run", govweb.SEEDS, **SETTINGS,
                            DB_SPILL_DIR=str(disk.path), WARC_DIR=str(warc))  # fmt: skip
        started.append(crawl)
        wait_for_requests(gov_web, 10)
        disk.fill()
        # SQLite writes on while it reuses its own free pages; once it needs more, this.
        wait_for_line(crawl, HELD)
        # Paused: nothing new goes out while neither crawldb nor its spills have room (or,
        # had the frontier run dry meanwhile, the crawl waits for room before it ends).
        time.sleep(0.5)
        held = len(gov_web.requested())
        time.sleep(2)
        assert len(gov_web.requested()) == held, "requests went out while crawldb was full"
        disk.free()
        run = crawl.wait()
        assert run.returncode == 0, run.log[-3000:]
        assert run.log.count(HELD) == 1 and "takes items again" in run.log, run.log[-3000:]
        assert "Traceback" not in run.log
        assert run.stats["finish_reason"] == "finished"
        assert not list(disk.path.glob("crawldb-unwritten-*"))
        assert_complete(snapshot(db_url))
        served = targets(gov_web)
        assert max(served.values()) == 1, "fetched twice"
        assert_whole(warc, db_url, served)


def test_the_warc_folder_on_a_full_disk_stops_the_crawl_and_the_next_run_goes_on(
    mountable: None, started: list[RunningCrawl], gov_web: SimWeb, tmp_path: Path
) -> None:
    db_url = f"sqlite:///{tmp_path / 'crawldb.sqlite3'}"
    with small_fs(tmp_path / "disk", "4m") as disk:
        warc = disk.path / "warc"
        gov_web.reset_log()
        crawl = start_crawl(gov_web, db_url, tmp_path / "run1", govweb.SEEDS, **SETTINGS,
                            WARC_DIR=str(warc))  # fmt: skip
        started.append(crawl)
        wait_for_requests(gov_web, 10)
        # Filled once crawldb holds a page: before that, a run that stores nothing proves
        # nothing about pages stored without their records.
        wait_for_stored(db_url)
        disk.fill()
        run = crawl.wait()
        assert run.returncode == 0, run.log[-3000:]
        assert run.stats["finish_reason"] == "warc_failed"
        said = [line for line in run.log.splitlines() if WARC_FULL in line]
        assert len(said) == 2 and "ERROR" in said[0], said  # the line, and in the stats
        assert "Traceback" not in run.log
        first = targets(gov_web)
        recorded = {url for url, t in query(db_url, "SELECT url, page_type_code FROM page")
                    if t != "FRONTIER"}  # fmt: skip
        assert recorded, "nothing was stored before the disk filled: this proves little"
        # Closed at the last complete record while the disk is still full: nothing torn.
        assert not list(warc.glob("*.open"))
        assert_whole(warc, db_url, first)

        disk.free()
        index = disk.path / "search-index"
        built = scrapy_command(db_url, index, "index")
        assert built.returncode == 0, built.stderr[-3000:]
        before = found(db_url, index)
        assert before

        gov_web.reset_log()
        again = run_crawl(gov_web, db_url, tmp_path / "run2", govweb.SEEDS, **SETTINGS,
                          WARC_DIR=str(warc))  # fmt: skip
        assert again.returncode == 0, again.log[-3000:]
        assert "Traceback" not in again.log
        assert_complete(snapshot(db_url))
        second = targets(gov_web)
        assert any(t != "/robots.txt" for _, t in second), "the first run was complete"
        # Fetched again: only pages whose records never reached the disk (never stored).
        again_fetched = {target_of(url) for url in recorded} & set(second)
        assert again_fetched <= {(h, "/robots.txt") for h, _ in again_fetched}, again_fetched
        assert_whole(warc, db_url, first + second)

        # The search index on a full disk: an update fails, says so in one line, and the
        # index it had still answers; with room again the update goes through.
        disk.fill()
        failed = scrapy_command(db_url, index, "index")
        assert failed.returncode == 1
        assert "not brought up to date: no space left on its disk" in failed.stderr
        assert "Traceback" not in failed.stderr, failed.stderr[-3000:]
        assert found(db_url, index) == before
        disk.free()
        updated = scrapy_command(db_url, index, "index")
        assert updated.returncode == 0, updated.stderr[-3000:]
        after = found(db_url, index)
        # Up to date: what an index built afresh finds. The second run may have stored no
        # new page with these words (when the first run stored them all), so not "more".
        rebuilt = tmp_path / "rebuilt-index"
        assert scrapy_command(db_url, rebuilt, "index").returncode == 0
        assert before <= after == found(db_url, rebuilt)


def wait_for_line_or_end(crawl: RunningCrawl, text: str, timeout: float = 60) -> None:
    log = crawl.workdir / "crawl.log"
    deadline = time.monotonic() + timeout
    while not (log.exists() and text in log.read_text(encoding="utf-8")):
        if crawl.proc.poll() is not None:
            return
        assert time.monotonic() < deadline, f"never said {text!r}"
        time.sleep(0.05)


def test_postgresql_on_a_full_disk_spills_and_writes_back_once_space_is_freed(
    mountable: None,
    started: list[RunningCrawl],
    pg_cluster: PgCluster,
    gov_web: SimWeb,
    tmp_path: Path,
) -> None:
    # The spill folder is on another disk (as by default: ~/.local/state/govsi): the
    # crawl goes on, saving what crawldb does not take, written back once it has room.
    warc = tmp_path / "warc"
    with small_fs(pg_cluster.tmp / "disk", "16m", owner=pg_cluster.user) as disk:
        # The tables on the small disk, the write-ahead log elsewhere: PostgreSQL's data
        # disk fills, not the one it needs to stay up.
        db_url = pg_cluster.create_database("full_disk", disk.path)
        try:
            _full_postgresql(db_url, disk, started, gov_web, tmp_path, warc)
        finally:
            # Its tablespace goes with the disk: left behind, the cluster's next restart
            # (the outage tests') would fail to recover it.
            pg_cluster.drop_database("full_disk")


def _full_postgresql(
    db_url: str,
    disk: SmallFs,
    started: list[RunningCrawl],
    gov_web: SimWeb,
    tmp_path: Path,
    warc: Path,
) -> None:
    gov_web.reset_log()
    crawl = start_crawl(gov_web, db_url, tmp_path / "run1", govweb.SEEDS, **SETTINGS,
                        DB_SPILL_DIR=str(tmp_path), WARC_DIR=str(warc))  # fmt: skip
    started.append(crawl)
    # Filled once crawldb is open and before its first pages are written (a crawl cannot
    # start on a full disk): every page needs room, however fast the machine crawls.
    wait_for_requests(gov_web, 1)
    disk.fill()
    wait_for_line_or_end(crawl, "unwritten items to")  # a spill file saved
    disk.free()
    run = crawl.wait()
    assert run.returncode == 0, run.log[-3000:]
    assert "No space left on device" in run.log and "Traceback" not in run.log
    served = targets(gov_web)
    if list(tmp_path.glob("crawldb-unwritten-*.jsonl")):
        # The crawl ended before the disk had room again: the next run loads them.
        gov_web.reset_log()
        again = run_crawl(gov_web, db_url, tmp_path / "run2", govweb.SEEDS, **SETTINGS,
                          DB_SPILL_DIR=str(tmp_path), WARC_DIR=str(warc))  # fmt: skip
        assert again.returncode == 0, again.log[-3000:]
        assert not {k for k in targets(gov_web) if k[1] != "/robots.txt"} & set(served)
        served += targets(gov_web)
    else:
        assert "crawldb answers again" in run.log
    assert not list(tmp_path.glob("crawldb-unwritten-*.jsonl"))
    assert_complete(snapshot(db_url))
    assert max(n for (_, t), n in served.items() if t != "/robots.txt") == 1
    assert_whole(warc, db_url, served)


def test_the_full_disks_as_root_of_a_user_namespace() -> None:
    # Mounting takes root: as another user the tests above run again in a user namespace,
    # where this process is root; CI never passes by skipping them.
    if mount_refused() is None:
        pytest.skip("run directly (root)")
    reason = namespace_refused()
    if reason is not None:
        if os.environ.get("CI"):
            pytest.fail(f"the full-disk tests cannot mount a tmpfs: {reason}")
        pytest.skip(reason)
    # PostgreSQL's server runs under an account of its own, which no namespace of this
    # user maps: its full disk is tested as root only.
    done = in_namespace(__file__, 600, "-k", "not postgresql")
    assert done.returncode == 0, done.stdout[-5000:] + done.stderr[-3000:]
    assert " passed" in done.stdout and " skipped" in done.stdout
