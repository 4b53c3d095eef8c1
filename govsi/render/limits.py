"""The browser's memory limits: a V8 heap cap for every page, and a memory limit for the
whole browser process tree where the system lets us set one.

- ``RENDER_JS_HEAP_MB``: ``--js-flags=--max-old-space-size=N``; a page's scripts that
  need more crash their renderer (the page fails and is kept as fetched), not the host.
- ``RENDER_MEMORY_MB``: a child cgroup (v2) of the crawler's own, with ``memory.max``,
  which the browser joins before it starts (``govsi.render.sandbox``'s wrapper): the
  kernel reclaims, then kills inside the browser's tree, never the crawler. It needs
  cgroup v2 with the memory controller delegated to the crawler's cgroup (root, a systemd
  unit with ``Delegate=yes``, a container with its own cgroup namespace).

An rlimit is no substitute: RLIMIT_AS breaks Chromium (it reserves terabytes of address
space), and RLIMIT_DATA is per process, so it bounds no tree (each renderer gets it
whole), while at a limit low enough to matter Chromium did not even start. Where no
cgroup can be made the crawl says so once and goes on with the V8 cap alone
(docs/rendering.md, "Memory").
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass

__all__ = ["MemoryLimit", "browser_cgroup", "js_heap_args", "remove_cgroup"]

MIB = 1024 * 1024


def js_heap_args(heap_mb: int) -> list[str]:
    """Chromium switches capping each page's V8 heap (none when ``heap_mb`` is 0)."""
    return [f"--js-flags=--max-old-space-size={heap_mb}"] if heap_mb > 0 else []


@dataclass(frozen=True)
class MemoryLimit:
    # The cgroup directory the browser joins (None: no process-tree limit applies).
    cgroup: str | None
    # What applies, or why nothing could: for the crawl's one log line.
    said: str


def _cgroup2_mount(mounts: str) -> str | None:
    for line in mounts.splitlines():
        fields = line.split()
        if len(fields) >= 3 and fields[2] == "cgroup2":
            return fields[1]
    return None


def _own_cgroup(proc_cgroup: str) -> str | None:
    for line in proc_cgroup.splitlines():
        if line.startswith("0::"):
            return line[3:].strip() or "/"
    return None


def _read(path: str) -> str:
    with open(path, encoding="utf-8") as f:
        return f.read()


def _write(path: str, value: str) -> None:
    with open(path, "w", encoding="utf-8") as f:
        f.write(value)


def browser_cgroup(
    limit_mb: int,
    name: str,
    *,
    mounts: str | None = None,
    proc_cgroup: str | None = None,
) -> MemoryLimit:
    """A child cgroup ``name`` of the crawler's own with ``memory.max`` = ``limit_mb``, made
    now; or why none could be. ``mounts`` and ``proc_cgroup`` (the text of /proc/mounts and
    /proc/self/cgroup) are read from the system unless given."""
    if limit_mb <= 0:
        return MemoryLimit(None, "RENDER_MEMORY_MB is 0")
    try:
        mount = _cgroup2_mount(_read("/proc/mounts") if mounts is None else mounts)
        own = _own_cgroup(_read("/proc/self/cgroup") if proc_cgroup is None else proc_cgroup)
    except OSError as e:
        return MemoryLimit(None, f"cgroups unreadable ({e})")
    if mount is None or own is None:
        return MemoryLimit(None, "no cgroup v2 hierarchy")
    parent = os.path.normpath(os.path.join(mount, own.lstrip("/")))
    try:
        if "memory" not in _read(os.path.join(parent, "cgroup.controllers")).split():
            return MemoryLimit(None, f"the memory controller is not delegated to {parent}")
        if "memory" not in _read(os.path.join(parent, "cgroup.subtree_control")).split():
            # Refused while the crawler's cgroup has processes of its own (cgroup v2's
            # rule), except at the root.
            _write(os.path.join(parent, "cgroup.subtree_control"), "+memory")
        child = os.path.join(parent, name)
        os.makedirs(child, exist_ok=True)
        _write(os.path.join(child, "memory.max"), str(limit_mb * MIB))
        swap = os.path.join(child, "memory.swap.max")
        if os.path.exists(swap):
            _write(swap, "0")  # the limit is memory, not memory plus swap
    except OSError as e:
        return MemoryLimit(None, f"cannot make a memory cgroup under {parent} ({e.strerror or e})")
    return MemoryLimit(child, f"cgroup {child}, memory.max {limit_mb} MiB")


def remove_cgroup(limit: MemoryLimit) -> None:
    """The browser is gone: its cgroup goes too (left alone while a process is in it)."""
    if limit.cgroup is not None:
        with contextlib.suppress(OSError):
            os.rmdir(limit.cgroup)
