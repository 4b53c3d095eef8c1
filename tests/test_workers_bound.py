"""The worker's memory bound: the limits set, what a worker's end means (tables), and a
job past the bound failing alone in a real pool, its process replaced."""

from __future__ import annotations

import resource
import signal
import threading
import time
from typing import Any

import pytest

from govsi.text.limits import TextLimits
from govsi.workers.bound import (
    MemoryBoundRefused,
    address_limits,
    bound_refused,
    death_cause,
    require_bound,
    signal_name,
)
from govsi.workers.pool import WorkerFailed, WorkerPool
from testkit.simweb.documents import make_pdf, pdf_bomb

INF = resource.RLIM_INFINITY
MB = 1024 * 1024


@pytest.mark.parametrize(
    ("limit", "current", "expected"),
    [
        (0, (INF, INF), "no bound asked"),
        (-5, (INF, INF), "no bound asked"),
        (384, (INF, INF), (384 * MB, INF)),
        (384, (100 * MB, INF), (384 * MB, INF)),  # a lower soft limit is raised to the bound
        (384, (INF, 1024 * MB), (384 * MB, 1024 * MB)),
        (384, (INF, 256 * MB), (256 * MB, 256 * MB)),  # a lower hard limit bounds it more
        (384, (INF, 384 * MB), (384 * MB, 384 * MB)),
        (2**44, (INF, INF), f"{2**44} MB is past what RLIMIT_AS can hold"),
    ],
)
def test_the_address_space_limit_set(
    limit: int, current: tuple[int, int], expected: tuple[int, int] | str
) -> None:
    assert address_limits(limit, current, INF) == expected


KILL, ABRT, SEGV, TERM = -signal.SIGKILL, -signal.SIGABRT, -signal.SIGSEGV, -signal.SIGTERM


@pytest.mark.parametrize(
    ("returncode", "timed_out", "peak_mb", "limit", "cause"),
    [
        (KILL, True, 380, 384, "timeout"),  # killed by the watchdog, whatever its memory
        (ABRT, False, 370, 384, "memory"),  # pdfium's abort at the bound
        (SEGV, False, 200, 384, "memory"),  # at half the bound or more
        (KILL, False, 300, 384, "memory"),  # the kernel's OOM killer
        (ABRT, False, 80, 384, "died"),  # a crash far below the bound
        (TERM, False, 370, 384, "died"),  # stopped from outside
        (1, False, 370, 384, "died"),  # an exit status, not a signal
        (0, False, 370, 384, "died"),
        (None, False, 370, 384, "died"),  # reaped elsewhere: nothing known
        (ABRT, False, 370, 0, "died"),  # no bound: no memory death to tell
    ],
)
def test_what_a_workers_end_means(
    returncode: int | None, timed_out: bool, peak_mb: int, limit: int, cause: str
) -> None:
    assert death_cause(returncode, timed_out, peak_mb * 1024, limit) == cause


@pytest.mark.parametrize(
    ("returncode", "said"),
    [(ABRT, "SIGABRT"), (KILL, "SIGKILL"), (3, "exit 3"), (0, "exit 0"), (None, "unknown"),
     (-200, "signal 200")],
)  # fmt: skip
def test_a_process_end_said(returncode: int | None, said: str) -> None:
    assert signal_name(returncode) == said


def test_a_bound_that_cannot_be_set_stops_the_crawl(monkeypatch: pytest.MonkeyPatch) -> None:
    assert bound_refused(0) is None and bound_refused(384) is None
    require_bound(384)
    # A system without RLIMIT_AS (resource has no such name).
    monkeypatch.delattr(resource, "RLIMIT_AS")
    assert bound_refused(0) is None
    with pytest.raises(MemoryBoundRefused, match="WORKER_MEMORY_LIMIT=0"):
        require_bound(384)


def _settled(deferred: Any, timeout: float = 120) -> tuple[bool, Any]:
    box: list[tuple[bool, Any]] = []
    deferred.addCallbacks(lambda r: box.append((True, r)), lambda f: box.append((False, f.value)))
    deadline = time.monotonic() + timeout
    while not box and time.monotonic() < deadline:
        time.sleep(0.01)
    assert box, "the worker never answered"
    return box[0]


def _pool(memory_limit: int) -> WorkerPool:
    lock = threading.Lock()

    def call(fn: Any, *args: Any) -> None:
        with lock:
            fn(*args)

    return WorkerPool(1, 120, call, memory_limit=memory_limit)


def _pdf_pages(data: bytes) -> Any:
    from govsi.responses.documents import document_page_text

    return document_page_text(data, "PDF", TextLimits())


def test_a_job_past_the_bound_fails_alone_and_the_next_runs() -> None:
    """A Python allocation past the bound is refused (the process lives on); a PDF whose
    page unpacks to a gigabyte kills its process inside pdfium, which is replaced."""
    pool = _pool(384)
    try:
        ok, error = _settled(pool.run(bytearray, 1024 * MB))
        assert not ok and isinstance(error, WorkerFailed) and error.cause == "memory"
        assert str(error).startswith("over memory bound (WORKER_MEMORY_LIMIT 384 MB)")
        ok, first = _settled(pool.run(_pid))
        assert ok
        ok, error = _settled(pool.run(_pdf_pages, pdf_bomb(1_000_000)))
        assert not ok and isinstance(error, WorkerFailed) and error.cause == "memory", error
        assert "the worker process died (SIGABRT" in str(error)
        ok, text = _settled(pool.run(_pdf_pages, make_pdf(["Naslednji"])))
        assert ok and text.text == "Naslednji"
        ok, second = _settled(pool.run(_pid))
        assert ok and second != first
    finally:
        pool.close()


def _pid() -> int:
    import os

    return os.getpid()


def test_a_worker_that_cannot_bound_itself_runs_no_job() -> None:
    # A bound past what RLIMIT_AS can hold: the worker refuses to run jobs unbounded.
    pool = _pool(2**44)
    try:
        ok, error = _settled(pool.run(_pid))
        assert not ok and isinstance(error, WorkerFailed)
        assert str(error) == "the worker could not bound its memory (its stderr says why)"
    finally:
        pool.close()


def test_the_spider_does_not_start_without_its_bound(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from tests.support.spiders import spider

    s, _ = spider(WORKER_MEMORY_LIMIT=256)
    assert s.parts.worker.memory_limit == 256
    s.parts.worker.close()
    monkeypatch.delattr(resource, "RLIMIT_AS")
    with pytest.raises(MemoryBoundRefused):
        spider(WORKER_MEMORY_LIMIT=256)
    assert "the crawl does not start" in caplog.text
    s, _ = spider(WORKER_MEMORY_LIMIT=0)  # the bound off: the crawl starts
    assert s.parts.worker.memory_limit == 0
    s.parts.worker.close()
