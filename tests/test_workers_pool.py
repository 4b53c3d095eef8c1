"""The spider's worker process: pure work off the reactor, a dying worker failing only its
own job; and the duplicate question it computes for large pages."""

from __future__ import annotations

import os
import signal
import threading
import time
from typing import Any

import pytest
from twisted.python.failure import Failure

from govsi.copies.index import DuplicateIndex
from govsi.dedup.question import question
from govsi.workers.pool import WorkerFailed, WorkerPool, worker_processes


def _settled(deferred: Any, timeout: float = 60) -> tuple[bool, Any]:
    """(succeeded, result or failure) once ``deferred`` fires."""
    box: list[tuple[bool, Any]] = []
    deferred.addCallbacks(lambda r: box.append((True, r)), lambda f: box.append((False, f)))
    deadline = time.monotonic() + timeout
    while not box and time.monotonic() < deadline:
        time.sleep(0.01)
    assert box, "the worker never answered"
    return box[0]


def _direct(processes: int = 1, job_timeout: float = 0.0) -> WorkerPool:
    lock = threading.Lock()

    def call(fn: Any, *args: Any) -> None:
        with lock:
            fn(*args)

    return WorkerPool(processes, job_timeout, call)


def _pid_after(seconds: float) -> int:
    time.sleep(seconds)
    return os.getpid()


def _die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def test_a_job_runs_in_another_process() -> None:
    worker = _direct()
    try:
        ok, pid = _settled(worker.run(os.getpid))
        assert ok and pid != os.getpid()
    finally:
        worker.close()


def test_a_dying_worker_fails_only_its_job_and_the_next_starts_a_new_one() -> None:
    worker = _direct()
    try:
        ok, first = _settled(worker.run(os.getpid))
        assert ok
        ok, failure = _settled(worker.run(_die))
        assert not ok and isinstance(failure, Failure)
        ok, second = _settled(worker.run(os.getpid))
        assert ok and second not in (first, os.getpid())
    finally:
        worker.close()


def test_a_job_that_raises_fails_with_its_error() -> None:
    worker = _direct()
    try:
        ok, failure = _settled(worker.run(int, "not a number"))
        assert not ok and failure.check(ValueError)
    finally:
        worker.close()


def test_the_worker_asks_the_same_question_as_the_index() -> None:
    index = DuplicateIndex(None, threshold=0.75, num_perm=128, shingle_size=5)  # type: ignore[arg-type]
    pages = [
        "<html><body><nav>meni meni</nav><main>" + "besedilo novice " * 400 + "</main></body>",
        "<html><body><p>kratko</p></body></html>",
        "<html><body></body></html>",
    ]
    for html in pages:
        here = index.prepare("https://a.gov.si/x", html)
        there = question("https://a.gov.si/x", html, **index.measures())
        assert (there.key, there.keys) == (here.key, here.keys)
        assert (there.sig is None) == (here.sig is None)
        if here.sig is not None:
            assert (there.sig == here.sig).all()


def test_a_job_past_its_time_is_killed_and_fails_alone() -> None:
    worker = _direct(processes=1, job_timeout=3)
    try:
        hung = worker.run(time.sleep, 3600)
        after = worker.run(os.getpid)  # waits behind the hung job, in the same place
        ok, failure = _settled(hung)
        assert not ok and failure.check(WorkerFailed)
        assert "longer than 3 s" in str(failure.value)
        ok, pid = _settled(after)
        assert ok and pid != os.getpid()
    finally:
        worker.close()


def test_jobs_run_side_by_side_in_as_many_processes() -> None:
    worker = _direct(processes=2)
    try:
        started = time.monotonic()
        jobs = [worker.run(_pid_after, 2) for _ in range(2)]
        pids = {_settled(job)[1] for job in jobs}
        # One process would take 4 s for the two; start-up of each is well under 2 s.
        assert len(pids) == 2 and time.monotonic() - started < 4 + 3
    finally:
        worker.close()


def test_a_job_dying_beside_another_leaves_the_other_whole() -> None:
    worker = _direct(processes=2)
    try:
        slow = worker.run(_pid_after, 2)
        ok, failure = _settled(worker.run(_die))
        assert not ok and failure.check(WorkerFailed)
        ok, _pid = _settled(slow)
        assert ok
    finally:
        worker.close()


def test_jobs_waiting_when_the_pool_closes_fail() -> None:
    worker = _direct(processes=1)
    running = worker.run(_pid_after, 5)
    waiting = worker.run(os.getpid)
    worker.close()
    for job in (running, waiting):  # the one handed over and the one behind it
        ok, failure = _settled(job, timeout=5)
        assert not ok and failure.check(WorkerFailed)
    ok, failure = _settled(worker.run(os.getpid), timeout=5)
    assert not ok and failure.check(WorkerFailed)


@pytest.mark.parametrize(
    ("configured", "cpus", "expected"),
    [(0, 2, 1), (0, 1, 1), (0, 8, 7), (3, 2, 3), (-1, 4, 3), (1, 16, 1)],
)
def test_worker_processes_leave_the_reactor_a_core(
    configured: int, cpus: int, expected: int
) -> None:
    assert worker_processes(configured, cpus) == expected


def test_jobs_handed_behind_a_dying_one_run_in_the_next_process() -> None:
    worker = _direct(processes=1)
    try:
        dying = worker.run(_die)
        behind = [worker.run(_pid_after, 0) for _ in range(3)]
        ok, failure = _settled(dying)
        assert not ok and failure.check(WorkerFailed) and "died" in str(failure.value)
        results = [_settled(job) for job in behind]
        assert all(ok for ok, _ in results)
    finally:
        worker.close()


def test_the_job_behind_a_hung_one_gets_its_own_time() -> None:
    worker = _direct(processes=1, job_timeout=5)
    try:
        first = worker.run(_pid_after, 3)  # within its time (with the process's start)
        second = worker.run(_pid_after, 3)  # 6 s after it was handed over: still in time
        assert _settled(first)[0] and _settled(second)[0]
    finally:
        worker.close()


_ORPHAN = """
import os, sys, time
from govsi.workers.pool import WorkerPool
if __name__ == "__main__":
    pool = WorkerPool(1, 0, lambda fn, *a: fn(*a))
    box = []
    pool.run(os.getpid).addBoth(box.append)
    while not box:
        time.sleep(0.05)
    print(box[0], flush=True)
    time.sleep(60)
"""


def test_a_worker_leaves_when_the_crawl_is_killed(tmp_path: Any) -> None:
    import subprocess
    import sys

    script = tmp_path / "crawl.py"
    script.write_text(_ORPHAN)
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    crawl = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, env=env)
    try:
        assert crawl.stdout is not None
        worker = int(crawl.stdout.readline())
    finally:
        crawl.kill()  # -9: the pool cannot be shut
        crawl.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and os.path.exists(f"/proc/{worker}"):
        time.sleep(0.1)
    assert not os.path.exists(f"/proc/{worker}"), "the worker outlived the crawl"


def test_prepare_starts_every_process_before_the_first_job() -> None:
    from govsi.page.reading import ready

    worker = _direct(processes=2)
    try:
        worker.prepare(ready)
        started = [place.process for place in worker._places]
        assert all(p is not None for p in started)
        ok, _ = _settled(worker.run(os.getpid))
        assert ok
        # The first job found them running: no process was started for it.
        assert [place.process for place in worker._places] == started
    finally:
        worker.close()
