"""The archive's own process: records made, digested, compressed and written, a batch of
jobs per message, so that none of that costs the crawl's process its GIL (``ArchiveWriter`` starts
it and talks to it over two pipes, ``govsi.workers.frames``).

The first message is the ``ArchiveConfig``, the crawl's id and the software's name (the
crawl's: this process imports no Scrapy, to start quickly); then each message is a list
of jobs, each an ``Exchange`` or a ``Dom`` with its record id, and each reply
``(Written of each job written, in order; the error that stopped the rest or None;
figures)``; ``None`` closes the file and ends the process, as does stdin's end (the
crawl gone, killed with -9 included): a file left ``.open`` is recovered by the next run.
"""

from __future__ import annotations

import contextlib
import errno
import pickle
import platform
from collections import Counter
from dataclasses import dataclass
from datetime import datetime

from govsi.archive.config import ArchiveConfig
from govsi.archive.exchange import Exchange
from govsi.archive.files import Placed, WarcFiles
from govsi.archive.payloads import Payloads
from govsi.archive.records import RecordMaker
from govsi.workers.frames import helper_streams, read_frame, write_frame

__all__ = ["Archivist", "Dom", "Written", "failure", "serve"]

FORMAT = "WARC File Format 1.1"
CONFORMS_TO = "https://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/"


@dataclass(frozen=True)
class Dom:
    """A rendered page's DOM, to be tied to its response record (``refers_to``)."""

    url: str
    html: str
    refers_to: str | None
    when: datetime


@dataclass(frozen=True)
class Written:
    """Where a job's first record went (the response, revisit or conversion) and its type."""

    placed: Placed
    record_type: str
    record_id: str


class Archivist:
    """The records and files of one writer; ``figures`` what it has written."""

    def __init__(self, config: ArchiveConfig, crawl_id: str, software: str = "govsi") -> None:
        self.config = config
        self.crawl_id = crawl_id
        self.software = software
        self.maker = RecordMaker(Payloads(config.revisit_digests))
        self.files = WarcFiles(
            config.directory, config.prefix, config.max_size, config.gzip_level, self._warcinfo
        )
        self.counts: Counter[str] = Counter()

    def write(self, job: Exchange | Dom, rid: str) -> Written:
        warcinfo_id = self.files.ensure_open()
        if isinstance(job, Dom):
            record = self.maker.dom(job.url, job.html, job.refers_to, job.when, warcinfo_id, rid)
            (placed,) = self.files.write([record])
            self.counts["conversion"] += 1
            return Written(placed, "conversion", rid)
        made = self.maker.exchange(job, rid, warcinfo_id)
        placed, _request = self.files.write(made.records)
        self.counts[made.kind] += 1
        self.counts["request"] += 1
        self.counts["revisit_bytes_saved"] += made.saved
        return Written(placed, made.kind, rid)

    def figures(self) -> dict[str, int]:
        """Records by type, bytes saved by revisits, files begun and bytes written."""
        return {**self.counts, "files": self.files.serial, "bytes": self.files.bytes_written}

    def _warcinfo(self, filename: str) -> tuple[str, bytes]:
        c = self.config
        fields = {
            "software": self.software,
            "format": FORMAT,
            "conformsTo": CONFORMS_TO,
            "isPartOf": self.crawl_id,
            "robots": "obey" if c.obey_robots else "ignore",
            "http-header-user-agent": c.user_agent,
            "operator": c.operator,
            "hostname": platform.node(),
        }
        return self.maker.warcinfo(filename, fields)


def failure(error: Exception, directory: str) -> str:
    """What stopped the archive, in words: a full disk (or quota) named as such."""
    if isinstance(error, OSError) and error.errno in (errno.ENOSPC, errno.EDQUOT):
        return f"no space left for WARC_DIR {directory} ({error.strerror})"
    return f"{type(error).__name__}: {error}"


def serve() -> None:
    """Write the jobs read from stdin until ``None`` or stdin's end."""
    jobs, replies = helper_streams()
    first = read_frame(jobs)
    if first is None:
        return
    config, crawl_id, software = pickle.loads(first)
    archivist = Archivist(config, crawl_id, software)
    try:
        while (frame := read_frame(jobs)) is not None:
            batch = pickle.loads(frame)
            if batch is None:
                break
            written: list[Written] = []
            error = None
            for job, rid in batch:
                try:
                    written.append(archivist.write(job, rid))
                except Exception as e:  # said to the crawl, which stops: no hole in the archive
                    error = failure(e, config.directory)
                    break
            write_frame(replies, pickle.dumps((written, error, archivist.figures())))
            if error is not None:
                return
    finally:
        archivist.files.close()
        with contextlib.suppress(OSError):  # the crawl is gone: nobody to tell
            write_frame(replies, pickle.dumps(([], None, archivist.figures())))
