"""Scrapy extension ``CpuSharing``: the reactor's thread keeps one CPU, the crawl's helper
processes (worker pool, crawldb's writer, the archive, the browser) get the others.

The reactor's thread is the crawl's bottleneck: it runs nearly all the time and holds the
GIL. Left to the kernel, the helpers that work beside it keep landing on its CPU and it on
theirs, and each hand-over of the GIL to the crawl's own threads wakes a thread on another
CPU. On this 2-CPU machine (``bench/render_cost.py``'s web of 2 KB pages, 2 560 pages,
``RENDER_JS=off``) an unthrottled crawl took 11.3-12.4 s with ``REACTOR_CPU = "off"`` and
8.0-9.1 s with ``"auto"``; the crawler process's CPU fell from 12-12.8 s to 8.3-10.0 s.

``REACTOR_CPU``: ``"auto"`` takes the CPU the reactor's thread runs on when the crawl
starts (the kernel's choice: several crawls on one machine get different ones), a number
takes that CPU, ``"off"`` leaves placement to the kernel. With a single CPU allowed there
is nothing to share. Threads the reactor's thread starts later share its CPU (they run
when it waits); helper processes it starts are moved to the others when the crawl opens
and every ``CPU_SHARING_INTERVAL`` seconds (a browser's new renderers inherit the CPUs of
the process that forks them, already moved). Linux only: elsewhere, or when the system
refuses, the crawl runs as before, with a log line.

``split_cpus`` and ``descendants`` are the pure decisions.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Mapping
from pathlib import Path

from scrapy import signals
from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured
from twisted.internet import task

logger = logging.getLogger(__name__)

PROC = Path("/proc")


def split_cpus(
    allowed: Iterable[int], wanted: str, current: int | None
) -> tuple[int, frozenset[int]] | None:
    """(the reactor's CPU, the helpers' CPUs) out of the ``allowed`` ones, for
    ``REACTOR_CPU`` = ``wanted`` (``"auto"``: ``current``, the CPU the reactor's thread is
    on); None when there is nothing to split (fewer than two CPUs, ``"off"``, a CPU not
    allowed, or ``current`` unknown)."""
    cpus = frozenset(allowed)
    if len(cpus) < 2 or wanted == "off":
        return None
    cpu = current if wanted == "auto" else int(wanted)
    if cpu is None or cpu not in cpus:
        return None
    return cpu, cpus - {cpu}


def descendants(root: int, parents: Mapping[int, int]) -> list[int]:
    """The processes below ``root``, given each process's parent (``parents``)."""
    children: dict[int, list[int]] = {}
    for pid, parent in parents.items():
        children.setdefault(parent, []).append(pid)
    found: list[int] = []
    todo = list(children.get(root, ()))
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, ()))
    return found


def _parents() -> dict[int, int]:
    """Every process's parent, from /proc (a process gone meanwhile is left out)."""
    out: dict[int, int] = {}
    for entry in os.scandir(PROC):
        if entry.name.isdigit():
            try:
                stat = (PROC / entry.name / "stat").read_bytes()
            except OSError:
                continue
            # The command name (field 2) may hold spaces and parentheses: after its last ")".
            out[int(entry.name)] = int(stat.rsplit(b")", 1)[1].split()[1])
    return out


def _current_cpu() -> int | None:
    """The CPU the calling thread runs on (field 39 of its stat)."""
    try:
        stat = (PROC / "thread-self" / "stat").read_bytes()
    except OSError:
        return None
    return int(stat.rsplit(b")", 1)[1].split()[36])


class CpuSharing:
    def __init__(self, wanted: str, interval: float) -> None:
        self.wanted = wanted
        self.interval = interval
        self.helper_cpus: frozenset[int] = frozenset()
        self._allowed: set[int] = set()
        self._loop: task.LoopingCall | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> CpuSharing:
        wanted = str(crawler.settings.get("REACTOR_CPU", "auto")).strip().lower()
        if wanted == "off":
            raise NotConfigured
        if not hasattr(os, "sched_setaffinity"):
            logger.info("REACTOR_CPU: this system cannot place threads on CPUs; not shared")
            raise NotConfigured
        extension = cls(wanted, crawler.settings.getfloat("CPU_SHARING_INTERVAL"))
        crawler.signals.connect(extension.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(extension.spider_closed, signal=signals.spider_closed)
        return extension

    def spider_opened(self) -> None:
        """Place the reactor's thread (this one), then the helpers, now and periodically."""
        self._allowed = os.sched_getaffinity(0)
        split = split_cpus(self._allowed, self.wanted, _current_cpu())
        if split is None:
            if len(self._allowed) > 1:
                logger.warning("REACTOR_CPU = %r: not one of the CPUs allowed (%s); not shared",
                               self.wanted, sorted(self._allowed))  # fmt: skip
            return
        try:
            os.sched_setaffinity(0, {split[0]})
        except OSError as e:
            logger.warning("REACTOR_CPU: the reactor's thread could not be placed (%s)", e)
            return
        self.helper_cpus = split[1]
        logger.info("The reactor's thread on CPU %d, the crawl's helper processes on %s",
                    split[0], sorted(split[1]))  # fmt: skip
        self._loop = task.LoopingCall(self.place_helpers)
        self._loop.start(self.interval, now=True)

    def spider_closed(self) -> None:
        """Give the reactor's thread every CPU back: what runs after the crawl (the search
        index's update, its processes) uses them all."""
        if self._loop is None:
            return
        if self._loop.running:
            self._loop.stop()
        self._loop = None
        try:
            os.sched_setaffinity(0, self._allowed)
        except OSError as e:
            logger.warning("REACTOR_CPU: the reactor's thread could not be given back its CPUs"
                           " (%s)", e)  # fmt: skip

    def place_helpers(self) -> int:
        """Move every thread of the processes below this one to the helpers' CPUs; how
        many were moved."""
        moved = 0
        for pid in descendants(os.getpid(), _parents()):
            try:
                tasks = os.listdir(PROC / str(pid) / "task")
            except OSError:
                continue  # gone
            for tid in map(int, tasks):
                try:
                    if os.sched_getaffinity(tid) != self.helper_cpus:
                        os.sched_setaffinity(tid, self.helper_cpus)
                        moved += 1
                except OSError:
                    continue  # gone, or not ours to place
        return moved
