"""The worker processes' memory bound (WORKER_MEMORY_LIMIT): an address-space limit
(``RLIMIT_AS``) each worker sets on itself before its first job, so the operating system
refuses an allocation past it, whatever parser asks (pdfium, libxml2, Python); and what a
worker's end means.

Past the bound a Python allocation raises ``MemoryError``; one in C code usually kills the
process (pdfium aborts). Either way the job fails alone with ``over memory bound``: a
process that died of a signal with its peak resident memory during the job at half the
bound or more is taken to have died of it (``death_cause``; the peak is reset before each
job, ``reset_peak``, and read from ``wait4`` when it is gone).
"""

from __future__ import annotations

import signal
from typing import Literal

from govsi.text.limits import OVER_MEMORY

__all__ = [
    "OVER_MEMORY",
    "Cause",
    "MemoryBoundRefused",
    "address_limits",
    "apply_bound",
    "bound_refused",
    "death_cause",
    "over_memory",
    "require_bound",
    "reset_peak",
    "signal_name",
]

# How a worker's job failed without an answer of its own: the process died of the memory
# bound, or was killed past WORKER_JOB_TIMEOUT, or died otherwise (a crash, a kill from
# outside), or the pool closed.
Cause = Literal["memory", "timeout", "died", "closed"]

# Signals a process gets when an allocation fails inside C code (abort() from pdfium or a
# C++ allocator, a null pointer used), or the kernel's OOM killer.
_ALLOCATION_DEATHS = frozenset(
    {signal.SIGABRT, signal.SIGSEGV, signal.SIGBUS, signal.SIGILL, signal.SIGTRAP, signal.SIGKILL}
)
_MB = 1024 * 1024


def address_limits(limit_mb: int, current: tuple[int, int], infinity: int) -> tuple[int, int] | str:
    """The (soft, hard) ``RLIMIT_AS`` to set for a bound of ``limit_mb`` MB, given the
    ``current`` (soft, hard) pair (``infinity``: ``resource.RLIM_INFINITY``), or why none
    can be set. A hard limit already below the bound is kept: it bounds the worker more."""
    if limit_mb <= 0:
        return "no bound asked"
    wanted = limit_mb * _MB
    if wanted >= 2**63:
        return f"{limit_mb} MB is past what RLIMIT_AS can hold"
    _soft, hard = current
    if hard != infinity and hard < wanted:
        return hard, hard
    return wanted, hard


def bound_refused(limit_mb: int) -> str | None:
    """In the crawl, before any worker starts: why a worker could not bound itself to
    ``limit_mb`` MB on this system (None: it can, or no bound is asked)."""
    if limit_mb <= 0:
        return None
    try:
        import resource
    except ImportError:
        return "this system has no resource limits (no Python resource module)"
    if not hasattr(resource, "RLIMIT_AS"):
        return "this system has no address-space limit (RLIMIT_AS)"
    got = address_limits(limit_mb, resource.getrlimit(resource.RLIMIT_AS), resource.RLIM_INFINITY)
    return got if isinstance(got, str) else None


class MemoryBoundRefused(RuntimeError):
    """The crawl does not start: WORKER_MEMORY_LIMIT asks for a bound this system cannot set."""


def require_bound(limit_mb: int) -> None:
    """Raise ``MemoryBoundRefused`` with the one line that says why the crawl does not
    start, and how to go on, when a worker could not bound itself to ``limit_mb`` MB: the
    bound fails closed, no document is read unbounded."""
    refused = bound_refused(limit_mb)
    if refused is not None:
        raise MemoryBoundRefused(
            f"worker memory bound: WORKER_MEMORY_LIMIT={limit_mb} MB cannot be set ({refused}); "
            "the crawl does not start, because one hostile document could then take every "
            "worker's memory. Run where RLIMIT_AS can be set, or -s WORKER_MEMORY_LIMIT=0 "
            "to read without the bound"
        )


def apply_bound(limit_mb: int) -> str | None:
    """In a worker, before its first job: set the bound on this process; None when set
    (or none asked), else why it could not be."""
    if limit_mb <= 0:
        return None
    try:
        import resource

        got = address_limits(
            limit_mb, resource.getrlimit(resource.RLIMIT_AS), resource.RLIM_INFINITY
        )
        if isinstance(got, str):
            return got
        resource.setrlimit(resource.RLIMIT_AS, got)
    except (ImportError, AttributeError, ValueError, OverflowError, OSError) as e:
        return f"RLIMIT_AS could not be set: {e!r}"
    return None


def reset_peak() -> None:
    """Start this process's peak resident memory (VmHWM, what ``wait4`` reports) again, so
    that the peak a dead worker leaves is its last job's. Best effort: where it cannot be
    reset, the peak is the process's whole life's."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass


def death_cause(returncode: int | None, timed_out: bool, peak_kb: int, limit_mb: int) -> Cause:
    """Why a worker process ended without answering: killed for its time (``timed_out``),
    of the memory bound (a signal of a failed allocation, with ``peak_kb`` of resident
    memory during the job at half the bound or more), or otherwise."""
    if timed_out:
        return "timeout"
    if (
        limit_mb > 0
        and returncode is not None
        and returncode < 0
        and -returncode in _ALLOCATION_DEATHS
        and peak_kb * 1024 * 2 >= limit_mb * _MB
    ):
        return "memory"
    return "died"


def over_memory(limit_mb: int, detail: str) -> str:
    """The reason a job past the bound is recorded with."""
    return f"{OVER_MEMORY} (WORKER_MEMORY_LIMIT {limit_mb} MB): {detail}"


def signal_name(returncode: int | None) -> str:
    """``returncode`` of a process as a reader says it: "SIGABRT", "exit 3", "unknown"."""
    if returncode is None:
        return "unknown"
    if returncode < 0:
        try:
            return signal.Signals(-returncode).name
        except ValueError:
            return f"signal {-returncode}"
    return f"exit {returncode}"
