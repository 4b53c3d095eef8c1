"""The archive's writer and its own process: everything queued is written by close, each
caller told where its records went, and a failure (a write, a lost process) is said and
stops it without leaving a caller waiting."""

from __future__ import annotations

import io
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from warcio.archiveiterator import ArchiveIterator

from govsi.archive.config import ArchiveConfig
from govsi.archive.exchange import Exchange
from govsi.archive.records import record_id
from govsi.archive.writer import ArchiveWriter, Written


def config(directory: Path, **kw: object) -> ArchiveConfig:
    base: dict[str, object] = dict(
        directory=str(directory), prefix="t", max_size=0, gzip_level=2, operator="ops@x",
        revisit_digests=100, user_agent="govsi-crawler/0.1", obey_robots=True,
    )  # fmt: skip
    base.update(kw)
    return ArchiveConfig(**base)  # type: ignore[arg-type]


def exchange(n: int, body: bytes | None = None) -> Exchange:
    return Exchange(
        f"http://a.gov.si/{n}", "GET", (), b"", "HTTP/1.1", 200, (),
        body if body is not None else f"page {n}".encode(), "127.0.0.1", datetime.now(UTC),
    )  # fmt: skip


def records(directory: Path) -> list[tuple[str, str | None]]:
    got = []
    for path in sorted(directory.iterdir()):
        with open(path, "rb") as f:
            got += [(r.rec_type, r.rec_headers.get_header("WARC-Target-URI")) for r in
                    ArchiveIterator(f)]  # fmt: skip
    return got


def wait_for(condition: object, seconds: float = 20) -> None:
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:  # type: ignore[operator]
        time.sleep(0.01)


def test_everything_queued_is_written_by_close(tmp_path: Path) -> None:
    w = ArchiveWriter(config(tmp_path), lambda: "crawl-1")
    w.start()
    for n in range(50):
        w.exchange(exchange(n), record_id())
    w.exchange(exchange(99, b"page 1"), record_id())  # the same payload as page 1
    w.dom("http://a.gov.si/1", "<html></html>", None, datetime.now(UTC))
    w.close()
    got = records(tmp_path)
    assert got[0] == ("warcinfo", None)
    assert [t for t, _ in got].count("request") == 51
    assert [t for t, _ in got].count("response") == 50
    assert ("revisit", "http://a.gov.si/99") in got
    assert got[-1] == ("conversion", "urn:dom:http://a.gov.si/1")
    assert w.figures["revisit"] == 1 and w.figures["revisit_bytes_saved"] == 6
    (path,) = tmp_path.iterdir()
    assert w.figures["files"] == 1 and w.figures["bytes"] == path.stat().st_size
    assert not path.name.endswith(".open")
    with open(path, "rb") as f:
        info = next(iter(ArchiveIterator(f))).content_stream().read().decode()
    assert "isPartOf: crawl-1" in info and "operator: ops@x" in info and "robots: obey" in info


def test_each_caller_is_told_where_its_records_went(tmp_path: Path) -> None:
    w = ArchiveWriter(config(tmp_path), lambda: "c")
    w.start()
    told: list[Written | None] = []
    rids = [record_id() for _ in range(5)]
    for n, rid in enumerate(rids):
        w.exchange(exchange(n), rid, told.append)
    wait_for(lambda: len(told) == 5)
    w.close()
    assert [(t.record_id, t.record_type) for t in told if t] == [(r, "response") for r in rids]
    for where in told:
        assert where is not None
        with open(tmp_path / where.placed.filename, "rb") as f:
            f.seek(where.placed.offset)
            member = f.read(where.placed.length)
        (record,) = list(ArchiveIterator(io.BytesIO(member)))
        assert record.rec_headers.get_header("WARC-Record-ID") == where.record_id
    # After close nothing is queued, but the caller is still told.
    late: list[object] = []
    w.exchange(exchange(9), record_id(), late.append)
    assert late == [None]


def test_a_failed_write_is_said_and_stops_the_archive(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    failures: list[BaseException] = []
    w = ArchiveWriter(config(blocker / "warc"), lambda: "c")
    w.on_failure = failures.append
    w.start()
    told: list[object] = []
    w.exchange(exchange(1), record_id(), told.append)
    # The writer's thread sets ``failed``, tells the jobs, then calls on_failure.
    wait_for(lambda: bool(failures))
    assert "Not a directory" in str(w.failed) and failures == [w.failed]
    assert told == [None]
    w.exchange(exchange(2), record_id(), told.append)  # not queued for ever: told at once
    assert told == [None, None]
    w.close()


def test_a_lost_process_is_said_and_no_caller_waits(tmp_path: Path) -> None:
    failures: list[BaseException] = []
    w = ArchiveWriter(config(tmp_path), lambda: "c")
    w.on_failure = failures.append
    w.start()
    told: list[object] = []
    w.exchange(exchange(1), record_id(), told.append)
    wait_for(lambda: len(told) == 1)
    assert w._process is not None
    w._process.kill()  # killed, as by the out-of-memory killer
    done = threading.Event()
    w.exchange(exchange(2), record_id(), lambda written: (told.append(written), done.set()))
    assert done.wait(20)
    # on_failure follows the callers' dones, from the writer's thread.
    wait_for(lambda: bool(failures))
    assert told[1] is None and "ended" in str(failures[0])
    w.close()
    # Its file is left .open, for the next run to recover.
    assert [p.name.endswith(".open") for p in tmp_path.iterdir()] == [True]


def test_what_is_queued_goes_in_batches_and_callers_are_told_in_order(tmp_path: Path) -> None:
    # One round trip and one call to the reactor per batch, not per job.
    w = ArchiveWriter(config(tmp_path), lambda: "c")
    calls: list[int] = []

    def call_from_thread(fn: Callable[..., None], outcomes: list[Any]) -> None:
        calls.append(len(outcomes))
        fn(outcomes)

    w.call_from_thread = call_from_thread
    told: list[str] = []
    rids = [record_id() for _ in range(200)]
    w.start()
    for n, rid in enumerate(rids):
        w.exchange(exchange(n), rid, lambda written: told.append(written.record_id))
    barrier = threading.Event()
    w.barrier(barrier.set)
    assert barrier.wait(20)
    assert told == rids  # every one, in order, before the barrier
    assert sum(calls) == 201 and len(calls) < 100
    w.close()


def test_a_batch_holds_a_bounded_size_of_bodies(tmp_path: Path) -> None:
    w = ArchiveWriter(config(tmp_path), lambda: "c")
    big = replace(exchange(1), body=b"x" * (3 << 20))
    for _ in range(3):
        w._put(big, record_id(), lambda written: None)
    for n in range(100):
        w._put(exchange(n), record_id(), lambda written: None)
    # Two bodies pass 4 MiB; then the third and small ones up to 64 jobs; then the rest.
    assert [len(w._take()) for _ in range(3)] == [2, 64, 37]


def test_a_backlog_past_the_limit_says_so_until_taken(tmp_path: Path) -> None:
    w = ArchiveWriter(config(tmp_path, queue_max_bytes=1 << 20), lambda: "c")
    page = replace(exchange(1), body=b"x" * (400 << 10))
    for _ in range(2):
        w._put(page, record_id(), lambda written: None)
    assert not w.backlogged()  # 800 KiB
    w._put(page, record_id(), lambda written: None)
    assert w.backlogged()  # 1.2 MiB waiting: crawldb holds new requests
    w._take()
    assert not w.backlogged()  # handed to the archive's process
    assert not ArchiveWriter(config(tmp_path), lambda: "c").backlogged()  # 0: no limit
