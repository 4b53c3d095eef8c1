"""Heavy pure work off the reactor thread, in worker processes.

``WorkerPool.run(fn, *args)`` runs a picklable, pure ``fn`` (reading a page, parsing a
sitemap) in one of ``processes`` spawned processes and returns a Deferred fired on the
reactor thread. Work that can take seconds there would otherwise stall every host's
downloads, timeouts and delays, and the machine's other cores would sit idle.

Each process holds one job at a time, so a failure is always one job's: a process that
dies (killed, out of memory) fails only the job it held, and one that holds a job longer
than ``job_timeout`` is killed and fails only that job, with the reason (``WorkerFailed``).
Its place gets a new process at its next job. Jobs wait in order of arrival.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from typing import Any

from twisted.internet.defer import Deferred

__all__ = ["WorkerFailed", "WorkerPool", "worker_processes"]

logger = logging.getLogger(__name__)


class WorkerFailed(Exception):
    """The job's process died, or was killed for holding the job too long."""


def worker_processes(configured: int, cpus: int | None = None) -> int:
    """WORKER_PROCESSES as a count: ``configured`` when positive, else one per core the
    reactor leaves (``cpus`` less one; ``os.cpu_count()`` when not given), at least one."""
    if configured > 0:
        return configured
    return max(1, (cpus if cpus is not None else os.cpu_count() or 1) - 1)


@dataclass(eq=False)
class _Job:
    fn: Callable[..., Any]
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    done: Deferred[Any] = field(default_factory=Deferred)
    # The process it was handed to (None while it waits): an outcome from another is stale.
    executor: ProcessPoolExecutor | None = None
    # Set by the watchdog's thread: the process was killed for it.
    timed_out: bool = False
    # Set on the reactor's thread when its outcome is in: the watchdog forgets it.
    settled: bool = False


@dataclass(eq=False)
class _Place:
    """One worker process (started at its first job) and the jobs handed to it, oldest
    (the one it runs) first."""

    executor: ProcessPoolExecutor | None = None
    jobs: deque[_Job] = field(default_factory=deque)


# Jobs handed to a process at once: the next one is there when the running one ends, so the
# process never waits for the reactor to hand it work.
_HANDED = 2


class WorkerPool:
    """``processes`` worker processes, each started at its first job, all shut at ``close``."""

    def __init__(
        self,
        processes: int = 1,
        job_timeout: float = 0.0,
        call_from_thread: Callable[..., Any] | None = None,
    ) -> None:
        """``job_timeout``: seconds a job may run (0: no bound); ``call_from_thread``: how
        a pool's thread hands a result to the reactor's (``reactor.callFromThread``,
        looked up at the first result; tests give their own)."""
        self.job_timeout = job_timeout
        self._places = [_Place() for _ in range(max(1, processes))]
        self._waiting: deque[_Job] = deque()
        self._call_from_thread = call_from_thread
        self._closed = False
        self._watchdog = _Watchdog()

    @property
    def processes(self) -> int:
        return len(self._places)

    def run(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Deferred[Any]:
        """A Deferred of ``fn(*args, **kwargs)``'s result, fired on the reactor thread; it
        fails with the job's error, or ``WorkerFailed`` when its process died or ran out
        of time."""
        job = _Job(fn, args, kwargs)
        if self._closed:
            job.done.errback(WorkerFailed("the worker pool is closed"))
            return job.done
        self._waiting.append(job)
        self._dispatch()
        return job.done

    def _dispatch(self) -> None:
        # The emptiest place first: jobs spread over the processes before any gets two.
        while self._waiting and not self._closed:
            place = min(self._places, key=lambda p: len(p.jobs))
            if len(place.jobs) >= _HANDED:
                return
            self._start(place, self._waiting.popleft())

    def _start(self, place: _Place, job: _Job) -> None:
        if place.executor is None:
            # spawn: a fork of a process with threads (the reactor's pools) may deadlock.
            place.executor = ProcessPoolExecutor(
                1,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=_leave_with_parent,
                initargs=(os.getpid(),),
            )
        executor = job.executor = place.executor
        place.jobs.append(job)
        try:
            future = executor.submit(job.fn, *job.args, **job.kwargs)
        except Exception as e:  # a pool broken between jobs: fail this one, renew the place
            self._settle(place, executor, job, e)
            return
        if len(place.jobs) == 1:
            self._watch(job)

        def done(future: Future[Any]) -> None:
            # In the pool's thread (or here, if already done): settled on the reactor's.
            self._hand_over(self._settle, place, executor, job, future)

        future.add_done_callback(done)

    def _watch(self, job: _Job) -> None:
        # Only the job a process runs: its time starts when the one before it ends.
        if self.job_timeout > 0:
            self._watchdog.watch(job, self.job_timeout)

    def _settle(
        self,
        place: _Place,
        executor: ProcessPoolExecutor,
        job: _Job,
        outcome: Future[Any] | BaseException,
    ) -> None:
        if job.executor is not executor or job.settled:
            return  # handed again after its process broke under another job
        if isinstance(outcome, BaseException):
            error: BaseException | None = outcome
        elif outcome.cancelled():
            error = WorkerFailed("the worker pool closed")
        else:
            error = outcome.exception()
        # Not handed over (the pool broke between jobs), died, or killed by the watchdog.
        lost = isinstance(outcome, BaseException) or isinstance(error, BrokenProcessPool)
        if (lost or job.timed_out) and place.executor is executor:
            # Its process is gone: the jobs handed to it after this one never ran there.
            place.executor = None
            executor.shutdown(wait=False, cancel_futures=True)
            others = [other for other in place.jobs if other is not job]
            if lost and not job.timed_out and place.jobs and place.jobs[0] is not job:
                # This one only waited behind the job that broke the process: hand it again.
                others.append(job)
                job = place.jobs[0]
                error, lost = BrokenProcessPool("the worker process died"), True
            place.jobs.clear()
            place.jobs.append(job)
            for other in reversed(others):
                other.executor = None
                self._waiting.appendleft(other)
        self._finish(place, job, outcome, error, lost)
        if place.jobs:
            self._watch(place.jobs[0])
        self._dispatch()

    def _finish(
        self,
        place: _Place,
        job: _Job,
        outcome: Future[Any] | BaseException,
        error: BaseException | None,
        lost: bool,
    ) -> None:
        job.settled = True
        # The watchdog may hold the job until its deadline: not the page it was given.
        job.args, job.kwargs = (), {}
        if job in place.jobs:
            place.jobs.remove(job)
        if error is not None and (lost or job.timed_out):
            if job.timed_out:
                error = WorkerFailed(f"the worker took longer than {self.job_timeout:g} s")
            else:
                error = WorkerFailed(f"the worker process died ({error!r})")
            logger.warning("%s: %s", getattr(job.fn, "__name__", job.fn), error)
        if error is None:
            assert isinstance(outcome, Future)
            job.done.callback(outcome.result())
        else:
            job.done.errback(error)

    def _hand_over(self, settle: Callable[..., Any], *args: Any) -> None:
        if self._call_from_thread is None:
            from twisted.internet import reactor  # here: importing it installs one

            self._call_from_thread = reactor.callFromThread
        self._call_from_thread(settle, *args)

    def close(self) -> None:
        """Shut every process; jobs still waiting or handed over fail."""
        self._closed = True
        self._watchdog.stop()
        for place in self._places:
            if place.executor is not None:
                place.executor.shutdown(wait=False, cancel_futures=True)
                place.executor = None
            while place.jobs:
                job = place.jobs.popleft()
                job.settled = True
                job.done.errback(WorkerFailed("the worker pool closed"))
        while self._waiting:
            self._waiting.popleft().done.errback(WorkerFailed("the worker pool closed"))


def _leave_with_parent(parent: int) -> None:
    """In a worker process: exit when the crawl's process is gone (killed with -9, it
    cannot shut its pool), rather than wait for jobs for ever."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(1)

    threading.Thread(target=watch, name="govsi-parent-watch", daemon=True).start()


class _Watchdog:
    """One thread, started at the first job it watches, that kills the process of a job
    past its deadline. A thread per job would cost the reactor a thread start per page."""

    def __init__(self) -> None:
        self._jobs: deque[tuple[float, _Job, ProcessPoolExecutor]] = deque()
        self._wake = threading.Condition()
        self._thread: threading.Thread | None = None
        self._stopped = False

    def watch(self, job: _Job, timeout: float) -> None:
        # Every job has the same timeout, so deadlines arrive in order: a deque, no heap.
        executor = job.executor
        if executor is None:
            return
        with self._wake:
            self._jobs.append((time.monotonic() + timeout, job, executor))
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="govsi-worker-watchdog", daemon=True
                )
                self._thread.start()
            elif len(self._jobs) == 1:
                self._wake.notify()

    def stop(self) -> None:
        with self._wake:
            self._stopped = True
            self._wake.notify()

    def _run(self) -> None:
        with self._wake:
            while not self._stopped:
                if not self._jobs:
                    self._wake.wait()
                    continue
                deadline, job, executor = self._jobs[0]
                if job.settled:
                    self._jobs.popleft()
                    continue
                left = deadline - time.monotonic()
                if left > 0:
                    self._wake.wait(left)
                    continue
                self._jobs.popleft()
                _expire(executor, job)


def _expire(executor: ProcessPoolExecutor, job: _Job) -> None:
    """Kill the process holding ``job`` past its time (its future then fails with
    BrokenProcessPool, and the job with the reason)."""
    job.timed_out = True
    # ProcessPoolExecutor has no public way to stop a running job (terminate_workers is
    # Python 3.14's); its process table has been ``_processes`` since 3.2.
    processes = getattr(executor, "_processes", None) or {}
    if not processes:
        logger.error("a worker job ran out of time and its process could not be found to stop")
    for process in list(processes.values()):
        process.kill()
