"""WARC files on disk: one gzip member per record, rotated, renamed when closed, and
recovered after a hard stop or a failed write.

A file is written as ``{prefix}-{timestamp}-{serial}-{pid}-{host}.warc.gz.open`` and
renamed without ``.open`` when closed; it starts with its ``warcinfo`` record. A file
that reaches ``max_size`` is closed after the record that crossed it. Each record goes
out in one write, so a ``kill -9`` leaves every complete record readable; a write that
fails part way (a full disk) is cut back at once to the last complete record, and
``close`` checks the file's end and cuts it there whatever happened before, so a closed
file never ends in a torn record. The writer holds an exclusive ``flock`` on its open
file, and ``recover`` (run at start) cuts every ``.open`` file no live writer holds at its
last complete record and closes it.
"""

from __future__ import annotations

import contextlib
import fcntl
import io
import logging
import os
import re
import socket
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from isal import isal_zlib

__all__ = ["OPEN_SUFFIX", "Placed", "WarcFiles", "gzip_member", "recover"]

logger = logging.getLogger(__name__)

OPEN_SUFFIX = ".open"


def _name_safe(text: str) -> str:
    return re.sub(r"[^a-z0-9.-]+", "-", text.lower()).strip("-.") or "host"


def gzip_member(data: bytes, level: int) -> bytes:
    """``data`` as one gzip member (what a ``.warc.gz`` is a series of)."""
    # One call: a compressobj per record cost a small request record many times as much.
    # ISA-L: its level 2 is much faster than zlib's, and as small as zlib's level 6 (slower
    # still): bench/README, bench.archive_cost.
    return isal_zlib.compress(data, level, wbits=zlib.MAX_WBITS + 16)


@dataclass(frozen=True)
class Placed:
    """Where a record was written: its file (as it is named once closed) and offset."""

    filename: str
    offset: int
    length: int


class WarcFiles:
    """The files one writer writes. ``warcinfo(filename)`` gives the first record of each
    new file, serialized, and its id becomes ``warcinfo_id``."""

    def __init__(
        self,
        directory: str | Path,
        prefix: str,
        max_size: int,
        level: int,
        warcinfo: Callable[[str], tuple[str, bytes]],
    ) -> None:
        self.directory = Path(directory)
        self.prefix = prefix
        self.max_size = max_size
        self.level = level
        self._warcinfo = warcinfo
        # WACZ (frictionless) takes file names of [-a-z0-9._] only: no "~" as Heritrix has.
        self.worker = f"{os.getpid()}-{_name_safe(socket.gethostname())}"
        self.serial = 0
        self.warcinfo_id = ""
        self._file: io.FileIO | None = None
        self._name = ""
        # The open file's length up to its last complete record, and where the records
        # of the last write begin (``close`` reads them back).
        self._end = self._last = 0
        self.closed_files: list[str] = []
        self.bytes_written = 0

    @property
    def current(self) -> str:
        """The open file's name once closed ("" when none is open)."""
        return self._name

    def ensure_open(self) -> str:
        """Open a file when none is (its warcinfo written); returns the warcinfo's id,
        which the next records name."""
        if self._file is None:
            self._open()
        return self.warcinfo_id

    def write(self, records: list[bytes]) -> list[Placed]:
        """Write ``records`` (uncompressed, made after ``ensure_open``) into the open
        file; rotate once it has reached ``max_size``. A write that fails (OSError: a
        full disk) leaves the file cut back at its last complete record, then raises."""
        self.ensure_open()
        assert self._file is not None and records
        placed: list[Placed] = []
        offset = start = self._end
        members = [gzip_member(r, self.level) for r in records]
        for member in members:
            placed.append(Placed(self._name, offset, len(member)))
            offset += len(member)
        # One write for an exchange's records: a hard stop keeps both or neither whole.
        self._append(b"".join(members))
        self._last, self._end = start, offset
        self.bytes_written += offset - start
        if self.max_size > 0 and offset >= self.max_size:
            self.close()
        return placed

    def close(self) -> None:
        """Close the open file, checked and cut at its last complete record, and give it
        its final name (removed instead when no record in it is complete). An error
        here is logged, not raised: the file stays ``.open`` for ``recover``."""
        if self._file is None:
            return
        f, name = self._file, self._name
        self._file, self._name = None, ""
        path = self.directory / (name + OPEN_SUFFIX)
        try:
            keep = self._checked_end(path)
            if keep == 0:
                logger.warning("WARC file %s has no complete record: removed", path.name)
                path.unlink()
                return
            os.fsync(f.fileno())
            os.replace(path, self.directory / name)
        except OSError as e:
            logger.error("WARC file %s could not be closed (%s): left for the next run to "
                         "recover", path.name, e)  # fmt: skip
            return
        finally:
            f.close()  # the lock goes with it
        self.closed_files.append(name)

    def _checked_end(self, path: Path) -> int:
        """Cut the open file at its last complete record; its length then. The records
        of the last write are read back; should they, or the size, not be what was
        written, the whole file is read."""
        fd = os.open(path, os.O_RDWR)
        try:
            size = os.fstat(fd).st_size
            keep = self._end
            if size != keep or complete_length(path, self._last) != keep:
                keep = complete_length(path)
            if keep < size:
                os.ftruncate(fd, keep)
                logger.warning("WARC file %s ended in a torn record: cut at %d of %d bytes",
                               path.name, keep, size)  # fmt: skip
            return keep
        finally:
            os.close(fd)

    def _append(self, data: bytes) -> None:
        """``data`` at the end of the open file, all of it or none (cut back)."""
        assert self._file is not None
        view = memoryview(data)
        try:
            while view:
                n = self._file.write(view)
                view = view[n or 0 :]
        except OSError:
            # Cut now, so that the space goes back and nothing can follow the torn part;
            # should that fail too, close and recover cut it.
            with contextlib.suppress(OSError):
                self._file.truncate(self._end)
                self._file.seek(self._end)
            raise

    def _open(self) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        self.serial += 1
        # One reading of the clock: a second read for the millis could pass into the next
        # second and name this file before the ones opened earlier in the same second.
        now = time.time()
        stamp = time.strftime("%Y%m%d%H%M%S", time.gmtime(now))
        millis = f"{int(now * 1000) % 1000:03d}"
        self._name = f"{self.prefix}-{stamp}{millis}-{self.serial:05d}-{self.worker}.warc.gz"
        path = self.directory / (self._name + OPEN_SUFFIX)
        # Unbuffered: a failed write leaves nothing in a buffer to come out later.
        f = open(path, "xb", buffering=0)  # noqa: SIM115 (held open across writes)
        fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        self._file = f
        self._last = self._end = 0
        self.warcinfo_id, info = self._warcinfo(self._name)
        member = gzip_member(info, self.level)
        try:
            self._append(member)
        except OSError:
            self.close()  # not even its warcinfo: removed
            raise
        self._end = len(member)
        self.bytes_written += len(member)


def complete_length(path: Path, start: int = 0) -> int:
    """The bytes of ``path`` up to the end of its last complete record, reading from
    ``start`` (where a record begins); ``start`` itself when none after it is whole.
    Each record is one gzip member: complete when its trailer (CRC, length) checks and
    the record it holds is as long as its ``Content-Length`` says."""
    end = consumed = start
    record = _Record()
    with open(path, "rb") as f:
        f.seek(start)
        while chunk := f.read(1 << 16):
            data = chunk
            while data:
                if not record.feed(data):
                    return end
                if not record.member.eof:
                    consumed += len(data)
                    break
                consumed += len(data) - len(record.member.unused_data)
                if not record.whole():
                    return end
                end = consumed
                data = record.member.unused_data
                record = _Record()
    return end


class _Record:
    """One gzip member read as a WARC record: its headers kept until their end, then
    only the length of the rest and its last four bytes."""

    # Headers longer than this are not a record this writer made.
    HEAD_MAX = 1 << 20

    def __init__(self) -> None:
        self.member = zlib.decompressobj(zlib.MAX_WBITS + 16)
        self.head = bytearray()
        self.length = -1  # the block's Content-Length, once the headers are read
        self.rest = 0  # bytes after the headers: the block and the closing CRLF CRLF
        self.tail = b""

    def feed(self, data: bytes) -> bool:
        """Decompress ``data``; False when it is not gzip or not a WARC record."""
        try:
            out = self.member.decompress(data)
        except zlib.error:
            return False
        if self.length >= 0:
            self.rest += len(out)
            self.tail = (self.tail + out[-4:])[-4:]
            return True
        self.head += out
        split = self.head.find(b"\r\n\r\n")
        if split < 0:
            return len(self.head) <= self.HEAD_MAX
        self.length = _content_length(bytes(self.head[:split]))
        rest = self.head[split + 4 :]
        self.rest, self.tail, self.head = len(rest), bytes(rest[-4:]), bytearray()
        return self.length >= 0

    def whole(self) -> bool:
        return self.length >= 0 and self.rest == self.length + 4 and self.tail == b"\r\n\r\n"


def _content_length(head: bytes) -> int:
    """A WARC record's ``Content-Length`` from its header lines; -1 when it has none."""
    if not head.startswith(b"WARC/"):
        return -1
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            value = value.strip()
            return int(value) if value.isdigit() else -1
    return -1


def recover(directory: str | Path) -> list[str]:
    """Close the ``.open`` files no live writer holds: each cut at its last complete
    record and renamed; returns their final names. A file with no complete record goes."""
    recovered: list[str] = []
    folder = Path(directory)
    if not folder.is_dir():
        return recovered
    for path in sorted(folder.glob(f"*.warc.gz{OPEN_SUFFIX}")):
        with open(path, "r+b") as f:
            try:
                fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                continue  # a live writer's
            size = os.fstat(f.fileno()).st_size
            keep = complete_length(path)
            final = path.with_name(path.name[: -len(OPEN_SUFFIX)])
            if keep == 0:
                logger.warning("WARC file %s has no complete record: removed", path.name)
                path.unlink()
                continue
            if keep < size:
                f.truncate(keep)
                logger.warning(
                    "WARC file %s ended in a torn record: cut at %d of %d bytes",
                    path.name, keep, size,
                )  # fmt: skip
            os.fsync(f.fileno())
            os.replace(path, final)
            recovered.append(final.name)
            logger.info("WARC file %s closed after a hard stop", final.name)
    return recovered
