"""crawldb's batches written in a process of their own (``DB_WRITER_PROCESS``), so that
SQLAlchemy's work runs on another core instead of holding the crawl's GIL.

``WriterProcess.write(batch)`` is ``CrawlWriter.write`` (one transaction, retried, True
when written) done by the process ``serve`` runs, with a ``CrawlWriter`` of its own; it
blocks, so ``CrawlStore`` calls it from its flush's thread, one batch at a time. The log
lines the write makes come back with its answer and are logged here, under their own
logger's name. A process that dies (killed, out of memory) fails only the batch it had:
``write`` says False, so the batch is kept as during an outage, and the next write starts
a new process. The writes are idempotent (rows are inserted unless present), so a batch
the lost process had committed is written again harmlessly.

The first message is ``(url, StoreConfig, crawl_id)``; then each message is a batch and
each answer a ``Reply``. stdin's end (the crawl closing it) ends the process. A crawl that
dies (kill -9) takes the process with it within ``_WATCH`` seconds, its write under way
rolled back, as a thread of the crawl's would have been: a late commit could otherwise
race the next run's read of the frontier.
This module imports no Scrapy and no Twisted: the process starts quickly and holds less
(bench/README, bench.memory).
"""

from __future__ import annotations

import contextlib
import logging
import os
import pickle
import threading
import time
from collections import Counter
from dataclasses import dataclass
from subprocess import Popen, TimeoutExpired

from govsi.items import Item
from govsi.store.config import StoreConfig
from govsi.workers.frames import helper_streams, read_frame, spawn, write_frame

__all__ = ["Reply", "WriterProcess", "serve"]

logger = logging.getLogger(__name__)

# glibc's thresholds for the writer's interpreter, fixed at 128 KiB: by default they grow
# with the largest block freed, and the memory of a batch's rows then stays resident
# between batches (bench/README, bench.memory). Its allocations are
# rows and statements: mapping the few large ones costs it nothing measurable.
ALLOCATOR = {"MALLOC_MMAP_THRESHOLD_": "131072", "MALLOC_TRIM_THRESHOLD_": "131072"}

# A log line made in the process: (level, logger name, text with any traceback).
LogLine = tuple[int, str, str]


@dataclass(frozen=True)
class Reply:
    """A batch's outcome: written or not, what this write added to the writer's figures,
    and the log lines it made."""

    written: bool
    copies_settled: int
    changes: dict[str, int]
    logs: list[LogLine]


class WriterProcess:
    """The crawl's side: one writer process, started at ``start`` or at the first write
    after the last one was lost; ``copies_settled`` and ``changes`` as ``CrawlWriter``'s,
    summed over the processes."""

    def __init__(self, url: str, config: StoreConfig, crawl_id: str) -> None:
        self._hello = pickle.dumps((url, config, crawl_id))
        self.copies_settled = 0
        self.changes: Counter[str] = Counter()
        self._process: Popen[bytes] | None = None
        # write and close may come from different threads; one talks to the process at a time.
        self._lock = threading.Lock()

    def start(self) -> None:
        with self._lock:
            self._started()

    @property
    def pid(self) -> int | None:
        """The process writing now, if one is running."""
        return self._process.pid if self._process is not None else None

    def write(self, batch: list[Item]) -> bool:
        """Write ``batch`` in one transaction in the process; True when written."""
        if not batch:
            return True
        with self._lock:
            frame = None
            try:
                process = self._started()
                assert process.stdin is not None and process.stdout is not None
                write_frame(process.stdin, pickle.dumps(batch, pickle.HIGHEST_PROTOCOL))
                frame = read_frame(process.stdout)
            except OSError:
                pass  # the process is gone: said below
            if frame is None:
                status = self._lost()
                logger.error("crawldb's writer process ended (status %s) during a write: its "
                             "%d items are kept, and a new process writes them",
                             status, len(batch))  # fmt: skip
                return False
        reply: Reply = pickle.loads(frame)
        for level, name, text in reply.logs:
            logging.getLogger(name).log(level, "%s", text)
        self.copies_settled += reply.copies_settled
        self.changes.update(reply.changes)
        return reply.written

    def close(self, timeout: float = 60.0) -> None:
        """End the process once it has answered the write under way."""
        with self._lock:
            process, self._process = self._process, None
            if process is None:
                return
            assert process.stdin is not None
            with contextlib.suppress(OSError):
                process.stdin.close()
            try:
                process.wait(timeout)
            except TimeoutExpired:
                logger.warning("crawldb's writer process did not end in %.0f s: killed", timeout)
                process.kill()
                process.wait()

    def _started(self) -> Popen[bytes]:
        if self._process is not None and self._process.poll() is not None:
            logger.warning("crawldb's writer process ended (status %s) between writes: a "
                           "new one takes over", self._lost())  # fmt: skip
        if self._process is None:
            self._process = spawn("govsi.store.writerprocess", ALLOCATOR)
            assert self._process.stdin is not None
            write_frame(self._process.stdin, self._hello)
        return self._process

    def _lost(self) -> int | None:
        process, self._process = self._process, None
        if process is None:
            return None
        process.kill()
        return process.wait()


class _Collected(logging.Handler):
    """Keeps the process's log lines for the next answer."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.setFormatter(logging.Formatter("%(message)s"))
        self.lines: list[LogLine] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append((record.levelno, record.name, self.format(record)))

    def take(self) -> list[LogLine]:
        lines, self.lines = self.lines, []
        return lines


# How often the process looks whether the crawl that started it is still there.
_WATCH = 0.1


def _die_with(parent: int) -> None:
    while True:
        time.sleep(_WATCH)
        if os.getppid() != parent:
            os._exit(1)  # no commit, no cleanup: the database rolls the transaction back


def serve() -> None:
    """Write the batches read from stdin until it ends."""
    from govsi.store.database import make_engine
    from govsi.store.writer import CrawlWriter

    threading.Thread(target=_die_with, args=(os.getppid(),), daemon=True).start()
    jobs, replies = helper_streams()
    collected = _Collected()
    logging.getLogger().addHandler(collected)
    logging.getLogger().setLevel(logging.INFO)
    first = read_frame(jobs)
    if first is None:
        return
    url, config, crawl_id = pickle.loads(first)
    c: StoreConfig = config
    engine = make_engine(url, c.connect_timeout, c.statement_timeout, c.keepalives_idle)
    writer = CrawlWriter.from_config(engine, c)
    writer.crawl_id = crawl_id
    try:
        while (frame := read_frame(jobs)) is not None:
            # Each answer carries what its write added: the crawl sums them.
            writer.copies_settled, writer.changes = 0, Counter()
            batch = pickle.loads(frame)
            del frame  # not held through the write: a batch's size in memory less
            written = writer.write(batch)
            del batch
            reply = Reply(written, writer.copies_settled, dict(writer.changes), collected.take())
            write_frame(replies, pickle.dumps(reply, pickle.HIGHEST_PROTOCOL))
    except BrokenPipeError:
        pass  # the crawl is gone
    finally:
        engine.dispose()
