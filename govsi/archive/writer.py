"""Writing the archive in a thread of its own: making records (digests, revisits) and
compressing them costs the reactor nothing but a queue append.

``exchange`` calls its ``done`` once the records are written (flushed to the operating
system), so the caller can hold the response until then: a page is never processed, nor
stored in crawldb, before its capture is on disk, and the queue never holds more than the
responses in flight. A failed write (a full disk) is logged with its reason and ``failed``
is set (``done`` still called, for every job dropped): the caller stops the crawl, as an
archive with holes would be worse than a paused one. ``close`` writes what is queued,
then closes the file.
"""

from __future__ import annotations

import logging
import platform
import threading
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

import scrapy

from govsi.archive.config import ArchiveConfig
from govsi.archive.exchange import Exchange
from govsi.archive.files import Placed, WarcFiles, recover
from govsi.archive.payloads import Payloads
from govsi.archive.records import RecordMaker, record_id

__all__ = ["SOFTWARE", "ArchiveWriter", "Written"]

logger = logging.getLogger(__name__)

SOFTWARE = f"govsi/1.0 (Scrapy {scrapy.__version__}; warcio)"
FORMAT = "WARC File Format 1.1"
CONFORMS_TO = "https://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/"


@dataclass(frozen=True)
class Written:
    """Where a job's first record went (the response, revisit or conversion) and its type."""

    placed: Placed
    record_type: str
    record_id: str


# Told where a job was written, or None when it never will be.
Done = Callable[[Written | None], None]


def _nothing(written: Written | None) -> None:
    pass


@dataclass(frozen=True)
class _Dom:
    url: str
    html: str
    refers_to: str | None
    when: datetime


class ArchiveWriter:
    def __init__(self, config: ArchiveConfig, crawl_id: Callable[[], str]) -> None:
        self.config = config
        self.crawl_id = crawl_id
        self.maker = RecordMaker(Payloads(config.revisit_digests))
        self.files = WarcFiles(
            config.directory, config.prefix, config.max_size, config.gzip_level, self._warcinfo
        )
        self.counts: Counter[str] = Counter()
        self.failed: BaseException | None = None
        self.on_failure: Callable[[BaseException], None] = lambda error: None
        self._queue: deque[tuple[Exchange | _Dom, str, Done]] = deque()
        self._closing = False
        self._cond = threading.Condition()
        self._thread = threading.Thread(target=self._run, name="govsi-warc", daemon=True)

    def start(self) -> list[str]:
        """Close files a hard stop left open, then start writing; returns those closed."""
        recovered = recover(self.config.directory)
        self._thread.start()
        return recovered

    # -- the reactor's side -----------------------------------------------------------
    def exchange(self, exchange: Exchange, response_id: str, done: Done = _nothing) -> None:
        """Archive one exchange; ``response_id`` is its response record's id. ``done`` is
        called (from the writing thread) once it is written, or will never be."""
        self._put(exchange, response_id, done)

    def dom(
        self, url: str, html: str, refers_to: str | None, when: datetime, done: Done = _nothing
    ) -> None:
        """Archive a rendered page's DOM, tied to its response record (``refers_to``)."""
        self._put(_Dom(url, html, refers_to, when), record_id(), done)

    def _put(self, job: Exchange | _Dom, response_id: str, done: Done) -> None:
        with self._cond:
            if self.failed is None and not self._closing:
                self._queue.append((job, response_id, done))
                self._cond.notify_all()
                return
        done(None)

    def close(self) -> None:
        """Write what is queued, then close the file (its final name given)."""
        with self._cond:
            self._closing = True
            self._cond.notify_all()
        if self._thread.is_alive():
            self._thread.join()
        try:
            self.files.close()
        except OSError as e:
            self._fail(e)

    # -- the thread ---------------------------------------------------------------------
    def _warcinfo(self, filename: str) -> tuple[str, bytes]:
        c = self.config
        fields = {
            "software": SOFTWARE,
            "format": FORMAT,
            "conformsTo": CONFORMS_TO,
            "isPartOf": self.crawl_id(),
            "robots": "obey" if c.obey_robots else "ignore",
            "http-header-user-agent": c.user_agent,
            "operator": c.operator,
            "hostname": platform.node(),
        }
        return self.maker.warcinfo(filename, fields)

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._queue and not self._closing:
                    self._cond.wait()
                if not self._queue:
                    return
                job, response_id, done = self._queue.popleft()
            written = None
            try:
                written = self._write(job, response_id)
            except Exception as e:  # any failure stops the archive, said
                self._fail(e)
                return
            finally:
                done(written)

    def _write(self, job: Exchange | _Dom, response_id: str) -> Written:
        warcinfo_id = self.files.ensure_open()
        if isinstance(job, _Dom):
            record = self.maker.dom(
                job.url, job.html, job.refers_to, job.when, warcinfo_id, response_id
            )
            (placed,) = self.files.write([record])
            self.counts["conversion"] += 1
            return Written(placed, "conversion", response_id)
        made = self.maker.exchange(job, response_id, warcinfo_id)
        placed, _request = self.files.write(made.records)
        self.counts[made.kind] += 1
        self.counts["request"] += 1
        self.counts["revisit_bytes_saved"] += made.saved
        return Written(placed, made.kind, response_id)

    def _fail(self, error: BaseException) -> None:
        if self.failed is not None:
            return
        self.failed = error
        logger.error("writing the WARC archive failed: %s", error)
        with self._cond:
            dropped = list(self._queue)
            self._queue.clear()
        for _, _, done in dropped:
            done(None)
        self.on_failure(error)
