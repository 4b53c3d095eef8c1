"""crawldb's writer process (govsi.store.writerprocess): batches written there reach
crawldb, its log lines are logged here, and a process that dies costs only the batch it had,
which is kept (the caller's outage path) while a new process takes the next one."""

from __future__ import annotations

import logging
import os
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from scrapy.settings import Settings
from sqlalchemy import Engine

from govsi.items import DiscoveredPage, FetchedPage, Item
from govsi.store import database
from govsi.store.config import StoreConfig
from govsi.store.writerprocess import WriterProcess
from testkit.crawldb import T, q
from testkit.imports import loaded_after


def config(**settings: Any) -> StoreConfig:
    s = Settings()
    s.setmodule("govsi.settings")
    s.update(settings)
    return StoreConfig.from_settings(s)


class Dies:
    """Ends the process that unpickles it, as an out-of-memory kill would."""

    def __reduce__(self) -> tuple[Any, ...]:
        return (os._exit, (3,))


@pytest.fixture
def crawldb(tmp_path: Path) -> Iterator[tuple[str, Engine]]:
    url = f"sqlite:///{tmp_path / 'crawldb.sqlite3'}"
    engine = database.make_engine(url)
    database.migrate(engine)
    yield url, engine
    engine.dispose()


@pytest.fixture
def process(crawldb: tuple[str, Engine]) -> Iterator[WriterProcess]:
    p = WriterProcess(crawldb[0], config(), "crawl-1")
    yield p
    p.close()


def urls(engine: Engine) -> set[str]:
    return {url for (url,) in q(engine, "SELECT url FROM page")}


def test_batches_written_in_the_process_reach_crawldb(
    process: WriterProcess, crawldb: tuple[str, Engine]
) -> None:
    process.start()
    assert process.write([DiscoveredPage("http://a.gov.si/", 0)])
    page = FetchedPage("http://a.gov.si/", 0, "HTML", T, 200, html_content="<p>x</p>",
                       links=["http://a.gov.si/b"])  # fmt: skip
    assert process.write([page])
    assert urls(crawldb[1]) == {"http://a.gov.si/", "http://a.gov.si/b"}
    assert q(crawldb[1], "SELECT html_content FROM page WHERE page_type_code = 'HTML'") == [
        ("<p>x</p>",)
    ]
    assert process.write([])  # nothing to send


def test_a_process_that_dies_in_a_write_fails_that_batch_only(
    process: WriterProcess, crawldb: tuple[str, Engine], caplog: pytest.LogCaptureFixture
) -> None:
    lost: list[Item] = [DiscoveredPage("http://a.gov.si/1", 0), Dies()]  # type: ignore[list-item]
    assert not process.write(lost)
    assert "crawldb's writer process ended (status -9) during a write" in caplog.text or (
        "crawldb's writer process ended (status 3) during a write" in caplog.text
    )
    assert "its 2 items are kept" in caplog.text
    # The next batch gets a new process, and the kept one can be written again.
    assert process.write([DiscoveredPage("http://a.gov.si/2", 0)])
    assert urls(crawldb[1]) == {"http://a.gov.si/2"}


def test_a_process_gone_between_writes_is_replaced_before_the_next(
    process: WriterProcess, crawldb: tuple[str, Engine], caplog: pytest.LogCaptureFixture
) -> None:
    assert process.write([DiscoveredPage("http://a.gov.si/1", 0)])
    assert process._process is not None
    process._process.kill()
    process._process.wait()
    assert process.write([DiscoveredPage("http://a.gov.si/2", 0)])
    assert "ended (status -9) between writes" in caplog.text
    assert urls(crawldb[1]) == {"http://a.gov.si/1", "http://a.gov.si/2"}


def test_the_processs_log_lines_are_logged_here_under_their_loggers_name(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # A crawldb without its tables: every write fails there, and says so.
    p = WriterProcess(f"sqlite:///{tmp_path / 'empty.sqlite3'}", config(DB_WRITE_RETRIES=0), "")
    try:
        with caplog.at_level(logging.INFO):
            assert not p.write([DiscoveredPage("http://a.gov.si/", 0)])
    finally:
        p.close()
    said = {(r.name, r.levelno, r.getMessage().split(":")[0]) for r in caplog.records}
    assert ("govsi.store.writer", logging.WARNING,
            "crawldb write of 1 items failed (attempt 1/1)") in said  # fmt: skip
    assert ("govsi.store.writer", logging.ERROR,
            "crawldb unreachable") in said  # fmt: skip


def test_revisit_changes_and_settled_copies_are_summed_over_writes(
    process: WriterProcess, crawldb: tuple[str, Engine]
) -> None:
    for n, text in enumerate(("one", "two", "three")):
        visit = FetchedPage("http://a.gov.si/", 0, "HTML", T, 200,
                            html_content=f"<p>{text}</p>", content_hash=text)  # fmt: skip
        assert process.write([visit])
        assert sum(process.changes.values()) == n  # the first visit is no change


def test_close_ends_the_process_and_needs_no_start(crawldb: tuple[str, Engine]) -> None:
    idle = WriterProcess(crawldb[0], config(), "")
    idle.close()
    p = WriterProcess(crawldb[0], config(), "")
    p.start()
    running = p._process
    assert running is not None
    p.close()
    assert running.poll() == 0


def test_the_process_dies_with_a_crawl_killed_mid_write(
    crawldb: tuple[str, Engine], tmp_path: Path
) -> None:
    # A crawl killed with -9 must not leave a writer that commits later, behind the next
    # run's read of the frontier: the write under way is rolled back.
    held = sqlite3.connect(tmp_path / "crawldb.sqlite3")
    held.execute("BEGIN EXCLUSIVE")  # the write waits for the lock
    crawl = subprocess.Popen(
        [sys.executable, "-c", (
            "import sys; from govsi.store.writerprocess import WriterProcess; "
            "from govsi.items import DiscoveredPage; "
            "from tests.test_store_writerprocess import config; "
            "p = WriterProcess(sys.argv[1], config(), ''); p.start(); "
            "print(p._process.pid, flush=True); "
            "p.write([DiscoveredPage('http://a.gov.si/late', 0)])"
        ), crawldb[0]],
        stdout=subprocess.PIPE,
    )  # fmt: skip
    assert crawl.stdout is not None
    writer = int(crawl.stdout.readline())
    time.sleep(1.5)  # the batch is sent and waits for the lock
    crawl.kill()
    crawl.wait()
    deadline = time.monotonic() + 5
    while _state(writer) not in ("gone", "Z"):
        assert time.monotonic() < deadline, "the writer process outlived its crawl"
        time.sleep(0.05)
    held.rollback()
    held.close()
    assert urls(crawldb[1]) == set()


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "gone"


def environment(pid: int) -> dict[str, str]:
    raw = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    return dict(v.decode().split("=", 1) for v in raw if b"=" in v)


@pytest.mark.parametrize("own", [None, "65536"])
def test_the_writer_runs_with_fixed_allocator_thresholds_unless_set_already(
    crawldb: tuple[str, Engine], monkeypatch: pytest.MonkeyPatch, own: str | None
) -> None:
    if own is not None:
        monkeypatch.setenv("MALLOC_MMAP_THRESHOLD_", own)
    else:
        monkeypatch.delenv("MALLOC_MMAP_THRESHOLD_", raising=False)
    p = WriterProcess(crawldb[0], config(), "crawl-1")
    try:
        p.start()
        assert p.write([DiscoveredPage("http://a.gov.si/", 0)])
        assert p._process is not None
        env = environment(p._process.pid)
    finally:
        p.close()
    assert env["MALLOC_MMAP_THRESHOLD_"] == (own or "131072")
    assert env["MALLOC_TRIM_THRESHOLD_"] == os.environ.get("MALLOC_TRIM_THRESHOLD_", "131072")
    assert env.get("PATH") == os.environ.get("PATH")


def test_the_writer_process_loads_no_crawling_libraries() -> None:
    # What serve() imports: Scrapy would bring Twisted, pyOpenSSL, cryptography and lxml,
    # ~30 MB resident in a process that only writes rows; SQLAlchemy's ORM ~6 MB more.
    code = (
        "import govsi.store.writerprocess;"
        "from govsi.store.database import make_engine;"
        "from govsi.store.writer import CrawlWriter"
    )
    heavy = ["scrapy", "twisted", "OpenSSL", "lxml", "numpy", "alembic", "sqlalchemy.orm"]
    assert loaded_after(code, heavy) == []
