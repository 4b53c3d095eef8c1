"""The archive's writing thread: everything queued is written by close, a failure is
said and stops it, and a full queue waits rather than drops."""

from __future__ import annotations

import io
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

from warcio.archiveiterator import ArchiveIterator

from govsi.archive.config import ArchiveConfig
from govsi.archive.exchange import Exchange
from govsi.archive.records import record_id
from govsi.archive.writer import ArchiveWriter, Written


def config(directory: Path, **kw: object) -> ArchiveConfig:
    base: dict[str, object] = dict(
        directory=str(directory), prefix="t", max_size=0, gzip_level=6, operator="ops@x",
        revisit_digests=100, user_agent="govsi-crawler/0.1",
        obey_robots=True,
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
    assert got[-1] == ("conversion", "http://a.gov.si/1")
    assert w.counts["revisit"] == 1 and w.counts["revisit_bytes_saved"] == 6
    assert not any(p.name.endswith(".open") for p in tmp_path.iterdir())
    with open(next(tmp_path.iterdir()), "rb") as f:
        info = next(iter(ArchiveIterator(f))).content_stream().read().decode()
    assert "isPartOf: crawl-1" in info and "operator: ops@x" in info and "robots: obey" in info


def test_a_failed_write_is_said_and_stops_the_archive(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    failures: list[BaseException] = []
    w = ArchiveWriter(config(blocker / "warc"), lambda: "c")
    w.on_failure = failures.append
    w.start()
    w.exchange(exchange(1), record_id())
    deadline = time.monotonic() + 10
    while w.failed is None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert isinstance(w.failed, OSError) and failures == [w.failed]
    told: list[object] = []
    w.exchange(exchange(2), record_id(), told.append)  # not queued for ever: told at once
    assert told == [None]
    w.close()


def test_done_is_said_once_the_records_are_written_or_never_will_be(tmp_path: Path) -> None:
    w = ArchiveWriter(config(tmp_path), lambda: "c")
    gate = threading.Event()
    real = w.files.write

    def slow(records: list[bytes]) -> object:
        gate.wait(10)
        return real(records)

    w.files.write = slow  # type: ignore[method-assign]
    w.start()
    done = threading.Event()
    told: list[Written | None] = []

    def written(w: Written | None) -> None:
        told.append(w)
        done.set()

    rid = record_id()
    w.exchange(exchange(1), rid, written)
    time.sleep(0.2)
    assert not done.is_set()  # the disk has not taken it yet
    gate.set()
    assert done.wait(10)
    w.close()
    # Where the response record lies: its file, offset and length find it.
    (where,) = told
    assert where is not None and (where.record_id, where.record_type) == (rid, "response")
    with open(tmp_path / where.placed.filename, "rb") as f:
        f.seek(where.placed.offset)
        member = f.read(where.placed.length)
    (record,) = list(ArchiveIterator(io.BytesIO(member)))
    assert record.rec_headers.get_header("WARC-Record-ID") == rid
    # After close nothing is queued, but the caller is still told.
    late: list[object] = []
    w.exchange(exchange(2), record_id(), late.append)
    assert late == [None]
