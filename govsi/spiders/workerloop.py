"""The loop a worker process runs (``govsi.spiders.workers`` starts it): read a job from
stdin, run it, write its outcome to stdout, until stdin ends.

A job is ``(fn, args, kwargs)`` and an outcome ``(True, result)`` or ``(False, exception)``,
each pickled and framed by its length (8 bytes, little-endian). stdin ends when the crawl
closes it or is gone, killed with -9 included, so a worker never outlives its crawl.
Imports nothing of the crawl but its framing (``govsi.frames``): a job's function brings
what it needs, and no more.
"""

from __future__ import annotations

import pickle
from typing import Any

from govsi.frames import FRAME, helper_streams, read_frame, write_frame

__all__ = ["FRAME", "read_frame", "serve", "write_frame"]


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
    """Run jobs from stdin until it ends."""
    jobs, results = helper_streams()
    while (job := read_frame(jobs)) is not None:
        try:
            write_frame(results, _outcome(job))
        except BrokenPipeError:
            return
