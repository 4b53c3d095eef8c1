"""Scrapy extension ``CpuSharing``: the reactor's thread keeps one CPU, and the crawl's
helper processes (worker pool, crawldb's writer, the archive, the browser) run at a lower
priority, on every CPU.

The reactor's thread is the crawl's bottleneck: it runs nearly all the time and holds the
GIL. Left to the kernel, it keeps moving between CPUs, the helpers that work beside it
take its CPU from it, and each hand-over of the GIL to the crawl's own threads wakes a
thread on another CPU (12 000 voluntary switches of the reactor's thread in a crawl of
2 560 pages; 300 with both measures). The helpers still get every CPU the reactor leaves
idle: they need more than one CPU when pages are large and the browser renders.

``REACTOR_CPU``: ``"auto"`` takes the CPU the reactor's thread runs on when the crawl
opens (the kernel's choice: several crawls on one machine usually get different ones), a
number takes that CPU, ``"off"`` leaves it to the kernel; with a single CPU allowed
nothing is pinned. Threads the reactor's thread starts share its CPU: the GIL passes
between them without waking a thread on another CPU (letting them run on every CPU undid
the gain: docs/running.md). ``HELPER_NICE``: how much lower the
helpers' priority is than the crawl's (0: the same). Helper processes are found below the
crawl's process when it opens and every ``CPU_SHARING_INTERVAL`` seconds (a browser's new
renderers inherit from the processes that fork them, already placed); each gets every CPU
the crawl may use. The reactor's thread gets them all back when the crawl closes (what
runs after it, the search index's update, uses them). Linux only: elsewhere, or when the
system refuses, a log line and the crawl runs as before.

Measured on this 2-CPU machine in docs/running.md ("CPUs"). ``split_cpus`` is the pure
decision; the processes below the crawl are psutil's (``Process.children``).
"""

# By hand, not psutil: thread ids (its threads() reads every thread's times), this thread's CPU.

from __future__ import annotations

import logging
import os
from collections.abc import Iterable
from pathlib import Path

import psutil
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


def _current_cpu() -> int | None:
    """The CPU the calling thread runs on (field 39 of its stat)."""
    try:
        stat = (PROC / "thread-self" / "stat").read_bytes()
    except OSError:
        return None
    return int(stat.rsplit(b")", 1)[1].split()[36])


class CpuSharing:
    def __init__(self, wanted: str, nice: int, interval: float) -> None:
        self.wanted = wanted
        self.nice = nice
        self.interval = interval
        self.helper_priority = 0
        self._allowed: set[int] = set()
        self._pinned = False
        self._loop: task.LoopingCall | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> CpuSharing:
        wanted = str(crawler.settings.get("REACTOR_CPU", "auto")).strip().lower()
        nice = crawler.settings.getint("HELPER_NICE")
        if wanted == "off" and nice <= 0:
            raise NotConfigured
        if not hasattr(os, "sched_setaffinity"):
            logger.info("REACTOR_CPU, HELPER_NICE: this system cannot place threads; left alone")
            raise NotConfigured
        extension = cls(wanted, nice, crawler.settings.getfloat("CPU_SHARING_INTERVAL"))
        crawler.signals.connect(extension.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(extension.spider_closed, signal=signals.spider_closed)
        return extension

    def spider_opened(self) -> None:
        """Pin the reactor's thread (this one), then place the helpers, now and periodically."""
        self._allowed = os.sched_getaffinity(0)
        self.helper_priority = min(19, os.getpriority(os.PRIO_PROCESS, 0) + max(0, self.nice))
        split = split_cpus(self._allowed, self.wanted, _current_cpu())
        if split is None and self.wanted != "off" and len(self._allowed) > 1:
            logger.warning("REACTOR_CPU = %r: not one of the CPUs allowed (%s); not pinned",
                           self.wanted, sorted(self._allowed))  # fmt: skip
        if split is not None:
            try:
                os.sched_setaffinity(0, {split[0]})
                self._pinned = True
                logger.info("The reactor's thread on CPU %d", split[0])
            except OSError as e:
                logger.warning("REACTOR_CPU: the reactor's thread could not be pinned (%s)", e)
        self._loop = task.LoopingCall(self.place_helpers)
        self._loop.start(self.interval, now=True)

    def spider_closed(self) -> None:
        if self._loop is not None and self._loop.running:
            self._loop.stop()
        self._loop = None
        if self._pinned:
            try:
                os.sched_setaffinity(0, self._allowed)
                self._pinned = False
            except OSError as e:
                logger.warning("REACTOR_CPU: the reactor's thread could not be given back its"
                               " CPUs (%s)", e)  # fmt: skip

    def place_helpers(self) -> int:
        """Give every thread of the processes below this one every CPU and the helpers'
        priority; how many threads were changed."""
        changed = 0
        try:
            below = [child.pid for child in psutil.Process().children(recursive=True)]
        except psutil.Error as e:
            logger.warning("REACTOR_CPU, HELPER_NICE: the crawl's helper processes could not "
                           "be listed (%s); not placed this time", e)  # fmt: skip
            return 0
        for pid in below:
            try:
                tasks = os.listdir(PROC / str(pid) / "task")
            except OSError:
                continue  # gone
            for tid in map(int, tasks):
                try:
                    done = False
                    if os.sched_getaffinity(tid) != self._allowed:
                        os.sched_setaffinity(tid, self._allowed)
                        done = True
                    if os.getpriority(os.PRIO_PROCESS, tid) < self.helper_priority:
                        os.setpriority(os.PRIO_PROCESS, tid, self.helper_priority)
                        done = True
                    changed += done
                except OSError:
                    continue  # gone, or not ours to change
        return changed
