"""The loop a worker process runs (``govsi.workers.pool`` starts it): read a job from
stdin, run it, write its outcome to stdout, until stdin ends.

A job is ``(fn, args, kwargs)`` and an outcome ``(True, result)`` or ``(False, exception)``,
each pickled and framed by its length (8 bytes, little-endian). stdin ends when the crawl
closes it or is gone, killed with -9 included, so a worker never outlives its crawl.
Imports nothing of the crawl but its framing (``govsi.workers.frames``) and its memory bound
(``govsi.workers.bound``): a job's function brings what it needs, and no more.

Its one argument (``sys.argv[2]``) is the memory bound in MB (WORKER_MEMORY_LIMIT), set
before the first job is read; a worker that cannot set it runs no job: it says why on
stderr and exits with ``UNBOUNDED``.
"""

from __future__ import annotations

import pickle
import sys
from typing import Any

from govsi.workers.bound import apply_bound, reset_peak
from govsi.workers.frames import FRAME, helper_streams, read_frame, write_frame

# The exit status of a worker that could not bound its memory.
UNBOUNDED = 3

__all__ = ["FRAME", "UNBOUNDED", "read_frame", "serve", "write_frame"]


def _outcome(job: bytes) -> bytes:
    try:
        fn, args, kwargs = pickle.loads(job)
        reply: tuple[bool, Any] = (True, fn(*args, **kwargs))
    except Exception as e:
        reply = (False, e)
    try:
        return pickle.dumps(reply, pickle.HIGHEST_PROTOCOL)
    except Exception as e:  # an unpicklable result or exception
        return pickle.dumps((False, RuntimeError(f"the job's outcome cannot be sent: {e!r}")))


def serve() -> None:
    """Run jobs from stdin until it ends, within the memory bound of ``sys.argv[2]``."""
    limit_mb = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    jobs, results = helper_streams()
    if (refused := apply_bound(limit_mb)) is not None:
        print(f"govsi worker: no memory bound of {limit_mb} MB: {refused}", file=sys.stderr)
        sys.exit(UNBOUNDED)
    while (job := read_frame(jobs)) is not None:
        if limit_mb > 0:
            reset_peak()
        try:
            write_frame(results, _outcome(job))
        except BrokenPipeError:
            return
