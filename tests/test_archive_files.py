"""WARC files: a gzip member per record, rotation, names, and recovery after a hard stop."""

from __future__ import annotations

import gzip
import io
import os
import re
import zlib
from datetime import datetime
from pathlib import Path

import pytest
from scrapy.settings import Settings
from warcio.archiveiterator import ArchiveIterator

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
    good = gzip_member(b"one", 2) + gzip_member(b"two", 2)
    path.write_bytes(good + b"\x00not gzip at all")
    assert complete_length(path) == len(good)
    recover(tmp_path)
    assert (tmp_path / "pre-1-00001-1~h.warc.gz").read_bytes() == good
    assert gzip.GzipFile(fileobj=io.BytesIO(good)).read() == b"onetwo"


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
