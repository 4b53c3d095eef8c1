"""The spider's worker process: pure work off the reactor, a dying worker failing only its
own job; and the duplicate question it computes for large pages."""

from __future__ import annotations

import os
import signal
import threading
import time
from typing import Any

from twisted.python.failure import Failure

from govsi.dedup.index import DuplicateIndex, question
from govsi.spiders.workers import WorkerProcess


def _settled(deferred: Any, timeout: float = 60) -> tuple[bool, Any]:
    """(succeeded, result or failure) once ``deferred`` fires."""
    box: list[tuple[bool, Any]] = []
    deferred.addCallbacks(lambda r: box.append((True, r)), lambda f: box.append((False, f)))
    deadline = time.monotonic() + timeout
    while not box and time.monotonic() < deadline:
        time.sleep(0.01)
    assert box, "the worker never answered"
    return box[0]


def _direct() -> WorkerProcess:
    lock = threading.Lock()

    def call(fn: Any, *args: Any) -> None:
        with lock:
            fn(*args)

    return WorkerProcess(call)


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
            assert (there.sig.hashvalues == here.sig.hashvalues).all()
