"""Heavy pure work off the reactor thread, in one worker process.

``WorkerProcess.run(fn, *args)`` runs a picklable, pure ``fn`` (sitemap parsing, the main
text and signature of a large page) in a spawned process and returns a Deferred fired on
the reactor thread. Work that can take seconds there would otherwise stall every host's
downloads, timeouts and delays. One process: the machine's other core is the reactor's.
When the worker dies (killed, out of memory) only the jobs it held fail, with the
reason; the next job starts a new one.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from twisted.internet.defer import Deferred

__all__ = ["WorkerProcess"]


class WorkerProcess:
    """One worker process, started at the first job, shut at ``close``."""

    def __init__(self, call_from_thread: Callable[..., Any] | None = None) -> None:
        """``call_from_thread``: how the pool's thread hands a result to the reactor's
        (``reactor.callFromThread``, looked up at the first result; tests give their own)."""
        self._pool: ProcessPoolExecutor | None = None
        self._call_from_thread = call_from_thread

    def run(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Deferred[Any]:
        """A Deferred of ``fn(*args, **kwargs)``'s result, fired on the reactor thread; it
        fails with the worker's error when the job or the worker does."""
        if self._pool is None:
            # spawn: a fork of a process with threads (the reactor's pools) may deadlock.
            self._pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"))
        pool = self._pool
        future = pool.submit(fn, *args, **kwargs)
        done: Deferred[Any] = Deferred()

        def settle(future: Future[Any]) -> None:
            error = future.exception()
            if isinstance(error, BrokenProcessPool) and self._pool is pool:
                self._pool = None
                pool.shutdown(wait=False, cancel_futures=True)
            if error is None:
                done.callback(future.result())
            else:
                done.errback(error)

        # Called in the pool's thread (or here, if already done): settle on the reactor's.
        future.add_done_callback(lambda f: self._hand_over(settle, f))
        return done

    def _hand_over(self, settle: Callable[..., Any], future: Future[Any]) -> None:
        if self._call_from_thread is None:
            from twisted.internet import reactor  # here: importing it installs one

            self._call_from_thread = reactor.callFromThread
        self._call_from_thread(settle, future)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None
