"""Heavy pure work off the reactor thread, in worker processes.

``WorkerPool.run(fn, *args)`` runs a picklable, pure ``fn`` (reading a page, parsing a
sitemap) in one of ``processes`` worker processes and returns a Deferred fired on the
reactor thread. Work that can take seconds there would otherwise stall every host's
downloads, timeouts and delays, and the machine's other cores would sit idle.

Each process runs one job at a time, so a failure is always one job's: a process that
dies (killed, out of memory) fails only the job it ran, and one that holds a job longer
than ``job_timeout`` is killed and fails only that job, with the reason (``WorkerFailed``
and its ``cause``). Its place gets a new process at its next job. Jobs wait in order of
arrival. Each process bounds its own memory to ``memory_limit`` MB before its first job
(``govsi.workers.bound``): a job past it fails alone, ``over memory bound``.

A process is plain ``python -c`` running ``govsi.workers.loop`` over two pipes, with
two threads here per process: one sends it jobs ahead, one reads their outcomes. It imports
only what its jobs need (bench/README, bench.memory); multiprocessing's pool also
re-imported the crawl's main module and started a resource tracker process.
"""

from __future__ import annotations

import contextlib
import logging
import os
import pickle
import queue
import subprocess
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from twisted.internet.defer import Deferred

from govsi.workers.bound import Cause, death_cause, over_memory, signal_name
from govsi.workers.frames import read_frame, spawn, write_frame
from govsi.workers.loop import UNBOUNDED

__all__ = ["WorkerFailed", "WorkerPool", "worker_processes"]

logger = logging.getLogger(__name__)


class WorkerFailed(Exception):
    """The job's process died, or was killed for holding the job too long, or the job went
    past the memory bound; ``cause`` says which."""

    def __init__(self, message: str, cause: Cause = "died") -> None:
        super().__init__(message)
        self.cause: Cause = cause


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
    # The process it was handed to, and that process's place (None while it waits): an
    # outcome from another process is stale.
    process: _Process | None = None
    place: _Place | None = None
    # Set by the watchdog's thread: the process was killed for it.
    timed_out: bool = False
    # Set on the reactor's thread when its outcome is in: the watchdog forgets it.
    settled: bool = False


# A worker's numerical libraries on one thread: its jobs are one page at a time, and
# OpenBLAS's threads (one per core, at numpy's import) each take address space,
# which on a machine of many cores would leave no room under the memory bound.
_ONE_THREAD = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}

# What the process's thread reports when the process is gone before the job's outcome.
_LOST = "lost"
Outcome = tuple[bool, Any] | str


class _Process:
    """One worker process and two threads: one sends it the jobs handed, in order, the
    other reads their outcomes and reports each through ``report``. Jobs are sent ahead,
    so the process never waits for this side: an outcome waits here only for the GIL."""

    def __init__(
        self, report: Callable[[_Process, _Job, Outcome], None], memory_limit: int = 0
    ) -> None:
        self._report = report
        self._inbox: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        # Sent, outcome not read yet, oldest (the one the process runs) first.
        self._sent: deque[_Job] = deque()
        self._popen = spawn(
            "govsi.workers.loop", env=_ONE_THREAD, args=[str(max(0, memory_limit))]
        )
        self.pid = self._popen.pid
        # Once it is gone: its exit code, and its peak resident memory (KB) in its last job.
        self.returncode: int | None = None
        self.peak_kb = 0
        for target in (self._send, self._receive):
            threading.Thread(target=target, name="govsi-worker", daemon=True).start()

    def give(self, job: _Job) -> None:
        self._inbox.put(job)

    def kill(self) -> None:
        """Stop the process now; the job it runs is reported lost."""
        self._inbox.put(None)
        self._popen.kill()

    def _send(self) -> None:
        stdin = self._popen.stdin
        assert stdin is not None
        try:
            while (job := self._inbox.get()) is not None:
                try:
                    message = pickle.dumps((job.fn, job.args, job.kwargs), pickle.HIGHEST_PROTOCOL)
                except Exception as e:  # an argument that cannot be sent fails its job alone
                    self._report(self, job, (False, e))
                    continue
                # Before it is written: its outcome may be read before this thread goes on.
                self._sent.append(job)
                write_frame(stdin, message)
        except OSError:
            pass  # the process is gone: the other thread reports it
        finally:
            with contextlib.suppress(OSError):
                stdin.close()

    def _receive(self) -> None:
        stdout = self._popen.stdout
        assert stdout is not None
        try:
            # A read that fails means the process is gone, as surely as its output's end.
            with contextlib.suppress(OSError):
                while (reply := read_frame(stdout)) is not None:
                    self._report(self, self._sent.popleft(), _unpickled(reply))
        finally:
            with contextlib.suppress(OSError):
                stdout.close()
            self._inbox.put(None)
            # Before the job is reported: how the process ended is the job's reason.
            self.returncode, self.peak_kb = _reap(self._popen)
        if self._sent:
            self._report(self, self._sent[0], _LOST)


def _reap(popen: subprocess.Popen[bytes]) -> tuple[int | None, int]:
    """Wait for the process whose output ended (killed after a second if it lingers): its
    exit code and its peak resident memory in KB (``wait4``'s, which ``Popen.wait`` drops;
    0 when another thread's ``Popen.poll`` reaped it first)."""
    deadline = time.monotonic() + 1.0
    flags = os.WNOHANG
    while True:
        try:
            pid, status, usage = os.wait4(popen.pid, flags)
        except ChildProcessError:
            return popen.wait(), 0
        if pid:
            popen.returncode = os.waitstatus_to_exitcode(status)
            return popen.returncode, usage.ru_maxrss
        if time.monotonic() > deadline:
            popen.kill()
            flags = 0
        else:
            time.sleep(0.01)


def _unpickled(reply: bytes) -> tuple[bool, Any]:
    try:
        outcome: tuple[bool, Any] = pickle.loads(reply)
    except Exception as e:  # an exception class the crawl cannot rebuild
        return False, RuntimeError(f"the worker's answer cannot be read: {e!r}")
    return outcome


@dataclass(eq=False)
class _Place:
    """One worker process (started at its first job) and the jobs handed to it, oldest
    (the one it runs) first."""

    process: _Process | None = None
    jobs: deque[_Job] = field(default_factory=deque)


# Jobs handed to a process at once: the next ones are there when the running one ends, so
# the process never waits for the reactor (a thread waits up to 5 ms for the GIL while the
# reactor runs; two handed held the pool back on small pages).
_HANDED = 8


class WorkerPool:
    """``processes`` worker processes, each started at its first job, all shut at ``close``."""

    def __init__(
        self,
        processes: int = 1,
        job_timeout: float = 0.0,
        call_from_thread: Callable[..., Any] | None = None,
        memory_limit: int = 0,
    ) -> None:
        """``job_timeout``: seconds a job may run (0: no bound); ``call_from_thread``: how
        a pool's thread hands a result to the reactor's (``reactor.callFromThread``,
        looked up at the first result; tests give their own); ``memory_limit``: MB of
        address space each process may take (0: no bound; the crawl checks first that one
        can be set: ``workerbound.bound_refused``)."""
        self.job_timeout = job_timeout
        self.memory_limit = memory_limit
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
            job.done.errback(WorkerFailed("the worker pool is closed", "closed"))
            return job.done
        self._waiting.append(job)
        self._dispatch()
        return job.done

    def prepare(self, fn: Callable[[], Any]) -> None:
        """Start every process now, each running ``fn`` (whose module brings the modules the
        jobs need), so that the crawl's first pages do not wait for a process to start and
        import them. Its outcome is not awaited: a process that cannot start, or dies, says
        so on the jobs that follow."""
        for _ in self._places:
            self.run(fn).addErrback(lambda failure: None)

    def _dispatch(self) -> None:
        # The emptiest place first: jobs spread over the processes before any gets two.
        while self._waiting and not self._closed:
            place = min(self._places, key=lambda p: len(p.jobs))
            if len(place.jobs) >= _HANDED:
                return
            self._start(place, self._waiting.popleft())

    def _start(self, place: _Place, job: _Job) -> None:
        if place.process is None:
            try:
                place.process = _Process(self._reported, self.memory_limit)
            except OSError as e:
                logger.error("a worker process could not be started: %s", e)
                job.done.errback(WorkerFailed(f"no worker process could be started ({e})"))
                return
        job.process, job.place = place.process, place
        place.jobs.append(job)
        place.process.give(job)
        if len(place.jobs) == 1:
            self._watch(job)

    def _watch(self, job: _Job) -> None:
        # Only the job a process runs: its time starts when the one before it ends.
        if self.job_timeout > 0:
            self._watchdog.watch(job, self.job_timeout)

    def _reported(self, process: _Process, job: _Job, outcome: Outcome) -> None:
        # In the process's thread: settled on the reactor's.
        if self._call_from_thread is None:
            from twisted.internet import reactor  # here: importing it installs one

            self._call_from_thread = reactor.callFromThread
        self._call_from_thread(self._settle, process, job, outcome)

    def _settle(self, process: _Process, job: _Job, outcome: Outcome) -> None:
        place = job.place
        if job.process is not process or job.settled or place is None:
            return  # handed again after its process was gone
        if outcome == _LOST and place.process is process:
            # The jobs handed after this one never reached the process: hand them again.
            place.process = None
            for other in reversed([other for other in place.jobs if other is not job]):
                other.process = other.place = None
                self._waiting.appendleft(other)
            place.jobs.clear()
            place.jobs.append(job)
        self._finish(place, job, outcome)
        if place.jobs:
            self._watch(place.jobs[0])
        self._dispatch()

    def _finish(self, place: _Place, job: _Job, outcome: Outcome) -> None:
        job.settled = True
        # The watchdog may hold the job until its deadline: not the page it was given.
        job.args, job.kwargs = (), {}
        place.jobs.remove(job)
        if isinstance(outcome, tuple):
            ok, value = outcome
            if ok:
                job.done.callback(value)
            elif isinstance(value, MemoryError) and self.memory_limit > 0:
                detail = "an allocation was refused (MemoryError)"
                job.done.errback(WorkerFailed(over_memory(self.memory_limit, detail), "memory"))
            else:
                job.done.errback(value)
            return
        error = self._lost(job)
        logger.warning("%s: %s", getattr(job.fn, "__name__", job.fn), error)
        job.done.errback(error)

    def _lost(self, job: _Job) -> WorkerFailed:
        """Why ``job``'s process ended before its answer."""
        process = job.process
        code, peak = (process.returncode, process.peak_kb) if process else (None, 0)
        cause = death_cause(code, job.timed_out, peak, self.memory_limit)
        if cause == "timeout":
            return WorkerFailed(f"the worker took longer than {self.job_timeout:g} s", cause)
        if code == UNBOUNDED:
            return WorkerFailed("the worker could not bound its memory (its stderr says why)")
        died = f"the worker process died ({signal_name(code)}, {peak // 1024} MB at its peak)"
        if cause == "memory":
            return WorkerFailed(over_memory(self.memory_limit, died), cause)
        return WorkerFailed(died, cause)

    def close(self) -> None:
        """Shut every process; jobs still waiting or handed over fail."""
        self._closed = True
        self._watchdog.stop()
        for place in self._places:
            if place.process is not None:
                place.process.kill()
                place.process = None
            while place.jobs:
                job = place.jobs.popleft()
                job.settled = True
                job.done.errback(WorkerFailed("the worker pool closed", "closed"))
        while self._waiting:
            self._waiting.popleft().done.errback(WorkerFailed("the worker pool closed", "closed"))


class _Watchdog:
    """One thread, started at the first job it watches, that kills the process of a job
    past its deadline. A thread per job would cost the reactor a thread start per page."""

    def __init__(self) -> None:
        self._jobs: deque[tuple[float, _Job, _Process]] = deque()
        self._wake = threading.Condition()
        self._thread: threading.Thread | None = None
        self._stopped = False

    def watch(self, job: _Job, timeout: float) -> None:
        # Every job has the same timeout, so deadlines arrive in order: a deque, no heap.
        process = job.process
        if process is None:
            return
        with self._wake:
            self._jobs.append((time.monotonic() + timeout, job, process))
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
                deadline, job, process = self._jobs[0]
                if job.settled:
                    self._jobs.popleft()
                    continue
                left = deadline - time.monotonic()
                if left > 0:
                    self._wake.wait(left)
                    continue
                self._jobs.popleft()
                # Its thread then reports the job lost, and the job fails with the reason.
                job.timed_out = True
                process.kill()
