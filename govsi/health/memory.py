"""Scrapy extension ``ProcessMemory``: what the crawl process frees goes back to the system,
and the collector leaves alone what lives for the whole crawl.

A crawl allocates and frees page bodies, write batches and the pool's pickled results for
hours, on a dozen threads. glibc's allocator keeps what is freed for reuse: an arena per
thread (up to eight per core) and a mmap threshold that rises to the largest block ever
freed, so megabyte batches end up inside arenas, between small blocks that live on. On the
endless memory web much of the crawler's heap was free memory, all of it resident
(bench/README, bench.memory). So, when the extension starts:

- ``MALLOC_ARENA_MAX`` caps the arenas (``mallopt(M_ARENA_MAX)``);
- ``MALLOC_MMAP_THRESHOLD`` fixes the threshold: larger blocks are mapped and unmapped
  whole (``mallopt(M_MMAP_THRESHOLD)``, which also stops it rising);
- every ``MEMORY_TRIM_INTERVAL`` seconds ``malloc_trim(0)`` returns the free pages inside
  the arenas (a few milliseconds).

When the spider opens, with ``GC_FREEZE``, ``gc.freeze()`` moves every object made so far
(modules, settings, components) out of the cyclic collector's sight: each full collection
then walks only what the crawl made, and takes a fraction of the reactor's time it took
(bench/README, ``GC_FREEZE``).

On a system without glibc the allocator is left alone, with a log line. ``malloc_options`` is the
pure part: which ``mallopt`` calls the settings ask for.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import logging
import os
from dataclasses import dataclass
from typing import Any

from scrapy import signals
from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured
from twisted.internet import task

__all__ = ["M_ARENA_MAX", "M_MMAP_THRESHOLD", "MemoryConfig", "ProcessMemory", "malloc_options"]

logger = logging.getLogger(__name__)

# glibc's mallopt parameters (malloc.h).
M_MMAP_THRESHOLD = -3
M_ARENA_MAX = -8

TRIM_STAT = "govsi/memory/trimmed_bytes"


@dataclass(frozen=True)
class MemoryConfig:
    arena_max: int  # MALLOC_ARENA_MAX (0: glibc's default)
    mmap_threshold: int  # MALLOC_MMAP_THRESHOLD, bytes (0: glibc's default, rising)
    trim_interval: float  # MEMORY_TRIM_INTERVAL, seconds (0: never)
    gc_freeze: bool = False  # GC_FREEZE

    @classmethod
    def from_settings(cls, settings: Any) -> MemoryConfig:
        return cls(
            settings.getint("MALLOC_ARENA_MAX"),
            settings.getint("MALLOC_MMAP_THRESHOLD"),
            settings.getfloat("MEMORY_TRIM_INTERVAL"),
            settings.getbool("GC_FREEZE"),
        )


def malloc_options(config: MemoryConfig) -> list[tuple[int, int]]:
    """The ``mallopt(parameter, value)`` calls ``config`` asks for, in order."""
    options: list[tuple[int, int]] = []
    if config.arena_max > 0:
        options.append((M_ARENA_MAX, config.arena_max))
    if config.mmap_threshold > 0:
        options.append((M_MMAP_THRESHOLD, config.mmap_threshold))
    return options


def _glibc() -> Any | None:
    """glibc, when this process runs on it (it has ``mallopt`` and ``malloc_trim``)."""
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name or "libc.so.6")
        libc.mallopt, libc.malloc_trim  # noqa: B018 - missing elsewhere than glibc
    except (OSError, AttributeError):
        return None
    return libc


class ProcessMemory:
    def __init__(self, config: MemoryConfig, crawler: Crawler, libc: Any | None) -> None:
        self.config = config
        self.crawler = crawler
        self.libc = libc
        self.loop: task.LoopingCall | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> ProcessMemory:
        config = MemoryConfig.from_settings(crawler.settings)
        tunes = bool(malloc_options(config)) or config.trim_interval > 0
        libc = _glibc() if tunes else None
        if tunes and libc is None:
            logger.info("memory: not glibc, allocator left as it is")
        if libc is None and not config.gc_freeze:
            raise NotConfigured
        if libc is not None:
            for parameter, value in malloc_options(config):
                if not libc.mallopt(parameter, value):
                    logger.warning("memory: mallopt(%d, %d) refused", parameter, value)
        extension = cls(config, crawler, libc)
        crawler.signals.connect(extension.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(extension.spider_closed, signal=signals.spider_closed)
        return extension

    def spider_opened(self) -> None:
        if self.config.gc_freeze:
            gc.freeze()
        if self.config.trim_interval > 0 and self.libc is not None:
            self.loop = task.LoopingCall(self.trim)
            self.loop.start(self.config.trim_interval, now=False)

    def spider_closed(self) -> None:
        if self.loop is not None and self.loop.running:
            self.loop.stop()
        if self.config.gc_freeze:
            gc.unfreeze()  # a process that runs another crawl collects what this one kept

    def trim(self) -> None:
        """Give the free pages inside the arenas back (``malloc_trim(0)``)."""
        if self.libc is None:
            return
        before = _resident()
        self.libc.malloc_trim(0)
        if self.crawler.stats is not None and before:
            self.crawler.stats.inc_value(TRIM_STAT, max(0, before - _resident()))


def _resident() -> int:
    """This process's resident bytes (0 where /proc cannot tell)."""
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * _PAGE
    except (OSError, ValueError, IndexError):
        return 0


_PAGE = os.sysconf("SC_PAGE_SIZE")
