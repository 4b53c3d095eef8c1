"""Writing the archive off the crawl's process: the reactor appends each job to a queue;
a thread here hands what is queued, as one message, to the archive's own process
(``govsi.archive.child``), which makes the records (digests, revisits), compresses and
writes them, so none of that holds the crawl's GIL. One round trip, and one call to the
reactor's thread, per batch: per job, their GIL hand-overs cost the crawl dearly
(bench/README, bench.archive_cost).

``exchange`` calls its ``done`` (on the reactor's thread when ``call_from_thread`` is set,
else from that thread) with where the records went once they
are written (flushed to the operating system); ``barrier`` calls its ``done`` once every
job queued before it is written, which crawldb's writer waits for before each batch: a
page is never stored in crawldb before its capture is on disk. A failed write (a full disk) or a
lost process is logged with its reason and ``failed`` is set (``done`` still called, with
None, for every job dropped): the caller stops the crawl, as an archive with holes would
be worse than a paused one; the file ends at its last complete record (``WarcFiles``).
``close`` writes what is queued, then closes the file.
"""

from __future__ import annotations

import contextlib
import logging
import pickle
import subprocess
import threading
from collections import deque
from collections.abc import Callable, Iterable
from datetime import datetime
from typing import IO, Any

import scrapy

from govsi.archive.child import Dom, Written
from govsi.archive.config import ArchiveConfig
from govsi.archive.exchange import Exchange
from govsi.archive.files import recover
from govsi.archive.records import record_id
from govsi.workers.frames import read_frame, spawn, write_frame

__all__ = ["SOFTWARE", "ArchiveWriter", "Done", "Written"]

logger = logging.getLogger(__name__)

SOFTWARE = f"govsi/1.0 (Scrapy {scrapy.__version__}; warcio)"

# Told where a job was written, or None when it never will be.
Done = Callable[[Written | None], None]
# A job for the process; None: a barrier.
Job = Exchange | Dom | None

# At most this many jobs, and about this many bytes of bodies, go to the process at once.
_BATCH_JOBS = 64
_BATCH_BYTES = 4 << 20
# Seconds a batch waits for more jobs before it goes (unless full, or ended by a barrier).
_GATHER = 0.05


def _nothing(written: Written | None) -> None:
    pass


class ArchiveWriter:
    def __init__(self, config: ArchiveConfig, crawl_id: Callable[[], str]) -> None:
        self.config = config
        self.crawl_id = crawl_id
        # What the archive's process has written: records by type, revisit_bytes_saved,
        # files (begun) and bytes; replaced whole with each reply.
        self.figures: dict[str, int] = {}
        self.failed: BaseException | None = None
        self.on_failure: Callable[[BaseException], None] = lambda error: None
        # How the thread hands the callers' ``done`` calls to the reactor's thread, one
        # call per batch (``reactor.callFromThread``); None: it calls them itself.
        self.call_from_thread: Callable[..., Any] | None = None
        # Jobs in order; None: a barrier, done once every job before it is written.
        self._queue: deque[tuple[Job, str, Done]] = deque()
        # Bytes of bodies and DOMs in the queue (``backlogged``).
        self._queued_bytes = 0
        self._closing = False
        self._cond = threading.Condition()
        self._thread = threading.Thread(target=self._run, name="govsi-warc", daemon=True)
        self._process: subprocess.Popen[bytes] | None = None

    def start(self) -> list[str]:
        """Close files a hard stop left open, then start the archive's process; returns
        the files closed."""
        recovered = recover(self.config.directory)
        self._process = spawn("govsi.archive.child")
        self._thread.start()
        return recovered

    # -- the reactor's side -----------------------------------------------------------
    def exchange(self, exchange: Exchange, response_id: str, done: Done = _nothing) -> None:
        """Archive one exchange; ``response_id`` is its response record's id. ``done`` is
        called (through ``call_from_thread`` when set, else from the writing thread) once
        it is written, or will never be."""
        self._put(exchange, response_id, done)

    def dom(
        self, url: str, html: str, refers_to: str | None, when: datetime, done: Done = _nothing
    ) -> None:
        """Archive a rendered page's DOM, tied to its response record (``refers_to``)."""
        self._put(Dom(url, html, refers_to, when), record_id(), done)

    def barrier(self, done: Callable[[], None]) -> None:
        """Call ``done`` (as ``exchange``'s) once every job queued before this call is
        written, or will never be."""
        self._put(None, "", lambda written: done())

    def _put(self, job: Job, rid: str, done: Done) -> None:
        with self._cond:
            if self.failed is None and not self._closing:
                self._queue.append((job, rid, done))
                self._queued_bytes += _size(job)
                # The thread is woken when it may be idle, for a barrier (crawldb waits)
                # and for a full batch; else the job joins the batch it gathers: each
                # wake-up takes the GIL from the reactor at once.
                if len(self._queue) in (1, _BATCH_JOBS) or job is None:
                    self._cond.notify_all()
                return
            if self.failed is not None:
                # Told the way the failure told the jobs it dropped, and after them: a
                # barrier must not fire before the pages whose records were lost are known.
                self._deliver([(done, None)])
                return
        done(None)  # closing: told at once, the reactor may no longer run what is queued

    def backlogged(self) -> bool:
        """More bodies wait for the archive's process than ``queue_max_bytes``."""
        limit = self.config.queue_max_bytes
        return 0 < limit <= self._queued_bytes

    def close(self) -> None:
        """Write what is queued, then close the file (its final name given)."""
        with self._cond:
            self._closing = True
            self._cond.notify_all()
        if self._thread.is_alive():
            self._thread.join()

    # -- the thread ---------------------------------------------------------------------
    def _run(self) -> None:
        assert self._process is not None and self._process.stdin and self._process.stdout
        sending, replies = self._process.stdin, self._process.stdout
        try:
            write_frame(sending, pickle.dumps((self.config, self.crawl_id(), SOFTWARE)))
            while True:
                with self._cond:
                    while not self._queue and not self._closing:
                        self._cond.wait()
                    if self._gathering():
                        self._cond.wait(_GATHER)
                    if not self._queue:
                        break
                    taken = self._take()
                written, lost = self._write(sending, replies, taken)
                outcomes = iter(written)
                told = [(done, None if job is None else next(outcomes, None))
                        for job, _, done in taken]  # fmt: skip
                if lost is not None:
                    self._fail(lost, told)
                    return
                self._deliver(told)
            write_frame(sending, pickle.dumps(None))
            self._drain(replies)
        except Exception as e:  # a lost process, a broken pipe: said, and the crawl stops
            self._fail(e)
        finally:
            with contextlib.suppress(OSError):
                sending.close()
            self._process.wait()

    def _gathering(self) -> bool:
        # A batch still small, no barrier at its end and no close: it may wait for more.
        q = self._queue
        return not self._closing and 0 < len(q) < _BATCH_JOBS and q[-1][0] is not None

    def _take(self) -> list[tuple[Job, str, Done]]:
        # What is queued, in order, as one message: one round trip and one call to the
        # reactor for them all; bounded, so that a batch of large bodies stays small.
        taken = [self._queue.popleft()]
        size = _size(taken[0][0])
        while self._queue and len(taken) < _BATCH_JOBS and size < _BATCH_BYTES:
            taken.append(self._queue.popleft())
            size += _size(taken[-1][0])
        self._queued_bytes -= size
        return taken

    def _write(
        self, sending: IO[bytes], replies: IO[bytes], taken: list[tuple[Job, str, Done]]
    ) -> tuple[list[Written], BaseException | None]:
        """The jobs written, in order, and what stopped the rest (None: nothing did)."""
        jobs = [(job, rid) for job, rid, _ in taken if job is not None]
        if not jobs:
            return [], None
        frame = None
        with contextlib.suppress(OSError):  # a broken pipe: the process is gone, said below
            write_frame(sending, pickle.dumps(jobs, pickle.HIGHEST_PROTOCOL))
            frame = read_frame(replies)
        if frame is None:
            return [], OSError(f"the archive's process ended (status {self._process_status()})")
        written: list[Written]
        written, error, self.figures = pickle.loads(frame)
        return written, None if error is None else OSError(error)

    def _deliver(self, outcomes: list[tuple[Done, Written | None]]) -> None:
        if self.call_from_thread is None:
            _tell(outcomes)
        else:
            self.call_from_thread(_tell, outcomes)

    def _drain(self, replies: IO[bytes]) -> None:
        # After the close: the figures with the last file closed, then the end.
        while (frame := read_frame(replies)) is not None:
            _written, _error, self.figures = pickle.loads(frame)

    def _process_status(self) -> int | None:
        # Its pipes are closed: it is ending, if not yet reaped.
        if self._process is None:
            return None
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._process.wait(5)
        return self._process.poll()

    def _fail(self, error: BaseException, told: Iterable[tuple[Done, Written | None]] = ()) -> None:
        """Said once; ``told`` (the batch in hand) and every job queued are told after
        ``failed`` is set, so that a caller told None can see why."""
        with self._cond:
            # Under the lock with ``_put``: a job put after this is told after these.
            first = self.failed is None
            if first:
                self.failed = error
            dropped = list(self._queue)
            self._queue.clear()
            self._queued_bytes = 0
            self._deliver([*told, *((done, None) for _, _, done in dropped)])
        if first:
            logger.error("writing the WARC archive failed: %s; the crawl stops (no page is "
                         "stored without its records), and the next run goes on where it "
                         "stopped", error)  # fmt: skip
            self.on_failure(error)


def _size(job: Job) -> int:
    if isinstance(job, Exchange):
        return len(job.body)
    return len(job.html) if isinstance(job, Dom) else 0


def _tell(outcomes: list[tuple[Done, Written | None]]) -> None:
    for done, written in outcomes:
        done(written)
