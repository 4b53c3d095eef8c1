"""WARC files: a gzip member per record, rotation, names, and recovery after a hard stop."""

from __future__ import annotations

import errno
import gzip
import io
import os
import re
import subprocess
import sys
import zlib
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

import pytest
from scrapy.settings import Settings
from warcio.archiveiterator import ArchiveIterator

from govsi.archive.child import failure
from govsi.archive.config import ArchiveConfig
from govsi.archive.files import OPEN_SUFFIX, WarcFiles, complete_length, gzip_member, recover
from govsi.archive.payloads import Payloads
from govsi.archive.records import RecordMaker

NAME = re.compile(r"^pre-\d{17}-\d{5}-\d+-[-a-z0-9.]+\.warc\.gz$")


def files(tmp_path: Path, max_size: int = 0) -> tuple[WarcFiles, RecordMaker]:
    maker = RecordMaker(Payloads(0))
    return WarcFiles(tmp_path, "pre", max_size, 2, lambda name: maker.warcinfo(name, {})), maker


def record(maker: RecordMaker, n: int, size: int = 100) -> bytes:
    return maker.dom(f"http://a.gov.si/{n}", "x" * size, None, datetime(2026, 1, 1), "<urn:x>")


def types(path: Path) -> list[str]:
    with open(path, "rb") as f:
        return [r.rec_type for r in ArchiveIterator(f)]


def test_records_go_to_an_open_file_renamed_when_closed(tmp_path: Path) -> None:
    w, maker = files(tmp_path)
    placed = w.write([record(maker, 1), record(maker, 2)])
    (open_file,) = tmp_path.iterdir()
    assert open_file.name.endswith(OPEN_SUFFIX)
    assert NAME.match(open_file.name[: -len(OPEN_SUFFIX)])
    w.close()
    (closed,) = tmp_path.iterdir()
    assert closed.name == placed[0].filename and NAME.match(closed.name)
    assert types(closed) == ["warcinfo", "conversion", "conversion"]
    # Each record is a gzip member of its own, found where it was placed.
    data = closed.read_bytes()
    for p in placed:
        member = gzip.decompress(data[p.offset : p.offset + p.length])
        assert member.startswith(b"WARC/1.1\r\n")


def test_files_rotate_once_they_reach_the_size(tmp_path: Path) -> None:
    w, maker = files(tmp_path, max_size=2000)
    for n in range(30):
        w.write([record(maker, n, size=400)])
    w.close()
    names = sorted(p.name for p in tmp_path.iterdir())
    assert len(names) > 3 and names == sorted(w.closed_files)
    assert [int(n.split("-")[2]) for n in names] == list(range(1, len(names) + 1))
    for name in names:
        kinds = types(tmp_path / name)
        assert kinds[0] == "warcinfo" and kinds.count("warcinfo") == 1
        # Closed after the record that crossed the size: never much beyond it.
        assert os.path.getsize(tmp_path / name) < 2000 + 600
    assert sum(types(tmp_path / n).count("conversion") for n in names) == 30


def test_names_sort_in_the_order_files_were_opened_when_a_second_turns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Each file is named at a clock reading just before a second turns and just after;
    # a name whose second and millis came from two readings sorted first.
    import time as real_time

    readings = iter([100.9995, 101.0005, 101.9999, 102.0001, 102.5, 102.6])

    class Clock:
        gmtime = staticmethod(real_time.gmtime)
        strftime = staticmethod(real_time.strftime)

        @staticmethod
        def time() -> float:
            return next(readings)

    monkeypatch.setattr("govsi.archive.files.time", Clock)
    w, maker = files(tmp_path, max_size=300)
    for n in range(3):
        w.write([record(maker, n, size=400)])
    w.close()
    names = sorted(p.name for p in tmp_path.iterdir())
    assert [int(n.split("-")[2]) for n in names] == [1, 2, 3]


def test_recovery_cuts_a_torn_record_and_closes_the_file(tmp_path: Path) -> None:
    w, maker = files(tmp_path)
    w.write([record(maker, 1)])
    w.write([record(maker, 2)])
    open_path = next(tmp_path.iterdir())
    whole = open_path.stat().st_size
    torn = gzip_member(record(maker, 3, size=5000), 2)
    with open(open_path, "ab") as f:
        f.write(torn[: len(torn) // 2])
    # The writer is gone (kill -9): its lock went with it.
    w._file.close()  # type: ignore[union-attr]
    assert complete_length(open_path) == whole
    assert recover(tmp_path) == [open_path.name[: -len(OPEN_SUFFIX)]]
    (closed,) = tmp_path.iterdir()
    assert closed.stat().st_size == whole
    assert types(closed) == ["warcinfo", "conversion", "conversion"]


def test_recovery_leaves_a_live_writers_file_alone(tmp_path: Path) -> None:
    w, maker = files(tmp_path)
    w.write([record(maker, 1)])
    before = sorted(tmp_path.iterdir())
    assert recover(tmp_path) == []
    assert sorted(tmp_path.iterdir()) == before
    w.close()


def test_a_file_with_no_complete_record_is_removed(tmp_path: Path) -> None:
    path = tmp_path / f"pre-1-00001-1~h.warc.gz{OPEN_SUFFIX}"
    path.write_bytes(gzip_member(b"WARC/1.1\r\n" * 100, 2)[:20])
    assert recover(tmp_path) == []
    assert list(tmp_path.iterdir()) == []


def test_garbage_after_records_is_cut(tmp_path: Path) -> None:
    path = tmp_path / f"pre-1-00001-1~h.warc.gz{OPEN_SUFFIX}"
    maker = RecordMaker(Payloads(0))
    good = gzip_member(record(maker, 1), 2) + gzip_member(record(maker, 2), 2)
    path.write_bytes(good + b"\x00not gzip at all")
    assert complete_length(path) == len(good)
    recover(tmp_path)
    assert (tmp_path / "pre-1-00001-1~h.warc.gz").read_bytes() == good
    assert gzip.GzipFile(fileobj=io.BytesIO(good)).read().count(b"WARC/1.1\r\n") == 2


def _flip(data: bytes, at: int) -> bytes:
    return data[:at] + bytes([data[at] ^ 0xFF]) + data[at + 1 :]


_MAKER = RecordMaker(Payloads(0))
R1 = gzip_member(record(_MAKER, 1), 2)
R2 = gzip_member(record(_MAKER, 2, size=5000), 2)
_RAW = record(_MAKER, 3)
_HEAD, _, _BLOCK = _RAW.partition(b"\r\n\r\n")

# (the file's bytes, where reading starts, the length kept): a file is cut at the end of
# its last complete record, read from a record's start.
CUT_CASES: dict[str, tuple[bytes, int, int]] = {
    "two whole records": (R1 + R2, 0, len(R1 + R2)),
    "an empty file": (b"", 0, 0),
    "the second member torn in half": (R1 + R2[: len(R2) // 2], 0, len(R1)),
    "the second member without its trailer": (R1 + R2[:-8], 0, len(R1)),
    "the second member one byte short": (R1 + R2[:-1], 0, len(R1)),
    "only the second member's gzip header": (R1 + R2[:10], 0, len(R1)),
    "the first member torn": (R1[: len(R1) // 2], 0, 0),
    "garbage after the records": (R1 + R2 + b"\x00junk", 0, len(R1 + R2)),
    "the second member's CRC wrong": (R1 + _flip(R2, len(R2) - 6), 0, len(R1)),
    "the second member's length wrong": (R1 + _flip(R2, len(R2) - 2), 0, len(R1)),
    "a whole member holding a short record": (R1 + gzip_member(_RAW[:-100], 2), 0, len(R1)),
    "a whole member holding a record with its end cut":
        (R1 + gzip_member(_RAW[:-4], 2), 0, len(R1)),
    "a record longer than its Content-Length":
        (R1 + gzip_member(_RAW[:-4] + b"more\r\n\r\n", 2), 0, len(R1)),
    "a record without Content-Length": (
        R1 + gzip_member(re.sub(rb"\r\nContent-Length: \d+", b"", _HEAD) + b"\r\n\r\n"
                         + _BLOCK, 2), 0, len(R1),
    ),
    "a member that is no WARC record": (R1 + gzip_member(b"one", 2), 0, len(R1)),
    "read from the second record on": (R1 + R2 + R2[:30], len(R1), len(R1 + R2)),
    "read from a torn second record": (R1 + R2[:30], len(R1), len(R1)),
}  # fmt: skip


@pytest.mark.parametrize("case", CUT_CASES)
def test_a_file_is_cut_at_its_last_complete_record(tmp_path: Path, case: str) -> None:
    data, start, kept = CUT_CASES[case]
    path = tmp_path / "f.warc.gz"
    path.write_bytes(data)
    assert complete_length(path, start) == kept


class Filling:
    """An open file on a disk with ``room`` bytes left: a write past it writes what fits,
    then fails as a full disk does (ENOSPC)."""

    def __init__(self, f: io.FileIO, room: int) -> None:
        self.f = f
        self.room = room

    def write(self, data: memoryview) -> int:
        if self.room <= 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        n = self.f.write(data[: self.room]) or 0
        self.room -= n
        return n

    def __getattr__(self, name: str) -> object:
        return getattr(self.f, name)


def valid(path: Path) -> bool:
    """``warcio check`` and ``gzip -t`` both pass."""
    check = subprocess.run([sys.executable, "-m", "warcio.cli", "check", str(path)])
    return check.returncode == 0 and subprocess.run(["gzip", "-t", str(path)]).returncode == 0


# Bytes left on the disk for a record (the room of its gzip member): none, its header, half
# of it, all but its last byte.
ROOM: dict[str, Callable[[int], int]] = {
    "none": lambda n: 0, "one byte": lambda n: 1, "the gzip header": lambda n: 10,
    "half": lambda n: n // 2, "all but one byte": lambda n: n - 1,
}  # fmt: skip


@pytest.mark.parametrize("room", ROOM)
def test_a_write_on_a_full_disk_leaves_the_last_complete_record(tmp_path: Path, room: str) -> None:
    w, maker = files(tmp_path)
    second = record(maker, 2, size=5000)
    first = w.write([record(maker, 1)])
    open_path = next(tmp_path.iterdir())
    whole = open_path.stat().st_size
    w._file = Filling(w._file, ROOM[room](len(gzip_member(second, 2))))  # type: ignore[arg-type, assignment]
    with pytest.raises(OSError, match="No space left"):
        w.write([second])
    assert open_path.stat().st_size == whole  # cut back at once
    # Space again: the next record follows the last complete one.
    w._file.room = 1 << 30  # type: ignore[union-attr]
    (third,) = w.write([record(maker, 3)])
    assert third.offset == whole
    w.close()
    closed = tmp_path / first[0].filename
    assert valid(closed)
    with open(closed, "rb") as f:
        uris = [r.rec_headers.get_header("WARC-Target-URI") for r in ArchiveIterator(f)]
    assert [u and u.rsplit("/", 1)[1] for u in uris] == [None, "1", "3"]


def test_a_file_torn_behind_the_writers_back_is_cut_when_closed(tmp_path: Path) -> None:
    # The cut after a failed write failed too (or anything else tore the end): close
    # checks the end of the file and cuts it at its last complete record.
    w, maker = files(tmp_path)
    (placed,) = w.write([record(maker, 1)])
    open_path = next(tmp_path.iterdir())
    whole = open_path.stat().st_size
    torn = gzip_member(record(maker, 2, size=5000), 2)
    with open(open_path, "ab") as f:
        f.write(torn[: len(torn) // 2])
    w.close()
    closed = tmp_path / placed.filename
    assert closed.stat().st_size == whole and valid(closed)


def test_a_file_whose_warcinfo_does_not_fit_is_removed(tmp_path: Path) -> None:
    w, maker = files(tmp_path)
    real_open = open

    def full_disk_open(path: Path, mode: str = "r", buffering: int = -1) -> object:
        f = real_open(path, mode, buffering)
        return Filling(f, 50) if mode == "xb" else f  # type: ignore[arg-type]

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("builtins.open", full_disk_open)
        with pytest.raises(OSError, match="No space left"):
            w.write([record(maker, 1)])
    assert list(tmp_path.iterdir()) == []
    # Space again: a new file, whole.
    (placed,) = w.write([record(maker, 2)])
    w.close()
    assert valid(tmp_path / placed.filename)


@pytest.mark.parametrize("level", [0, 1, 2, 3])
def test_each_level_writes_a_gzip_member_any_reader_reads(level: int) -> None:
    data = b"<html>" + b"ministrstvo za javno upravo " * 2000 + b"</html>"
    member = gzip_member(data, level)
    assert gzip.decompress(member) == data
    assert zlib.decompressobj(zlib.MAX_WBITS + 16).decompress(member) == data
    assert len(member) < len(data) // 10


@pytest.mark.parametrize(
    ("level", "ok"), [(-1, False), (0, True), (3, True), (4, False), (9, False)]
)
def test_the_level_setting_is_isa_ls_range(tmp_path: Path, level: int, ok: bool) -> None:
    settings = Settings({"WARC_DIR": str(tmp_path), "WARC_GZIP_LEVEL": level})
    if ok:
        config = ArchiveConfig.from_settings(settings)
        assert config is not None and config.gzip_level == level
    else:
        with pytest.raises(ValueError, match="WARC_GZIP_LEVEL must be 0-3"):
            ArchiveConfig.from_settings(settings)


# What stops the archive, in the words the crawl's log line gives it.
FAILURES: dict[str, tuple[Exception, str]] = {
    "a full disk": (OSError(errno.ENOSPC, os.strerror(errno.ENOSPC)),
                    "no space left for WARC_DIR /w (No space left on device)"),
    "a quota reached": (OSError(errno.EDQUOT, os.strerror(errno.EDQUOT)),
                        "no space left for WARC_DIR /w (Disk quota exceeded)"),
    "permission denied": (PermissionError(errno.EACCES, "Permission denied"),
                          "PermissionError: [Errno 13] Permission denied"),
    "a bug": (ValueError("bad record"), "ValueError: bad record"),
}  # fmt: skip


@pytest.mark.parametrize("case", FAILURES)
def test_a_failure_is_said_in_words(case: str) -> None:
    error, said = FAILURES[case]
    assert failure(error, "/w") == said
