"""Scrapy extension ``MemoryTrim``: what the crawl process frees goes back to the system.

A crawl allocates and frees page bodies, write batches and the pool's pickled results for
hours, on a dozen threads. glibc's allocator keeps what is freed for reuse: an arena per
thread (up to eight per core) and a mmap threshold that rises to the largest block ever
freed, so megabyte batches end up inside arenas, between small blocks that live on. On the
endless memory web the crawler's heap was 40 % free memory after 150 s, all of it
resident. So, when the extension starts:

- ``MALLOC_ARENA_MAX`` caps the arenas (``mallopt(M_ARENA_MAX)``);
- ``MALLOC_MMAP_THRESHOLD`` fixes the threshold: larger blocks are mapped and unmapped
  whole (``mallopt(M_MMAP_THRESHOLD)``, which also stops it rising);
- every ``MEMORY_TRIM_INTERVAL`` seconds ``malloc_trim(0)`` returns the free pages inside
  the arenas (a few milliseconds).

On a system without glibc it does nothing and says so in the log. ``malloc_options`` is the
pure part: which ``mallopt`` calls the settings ask for.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import os
from dataclasses import dataclass
from typing import Any

from scrapy import signals
from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured
from twisted.internet import task

__all__ = ["M_ARENA_MAX", "M_MMAP_THRESHOLD", "MemoryConfig", "MemoryTrim", "malloc_options"]

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

    @classmethod
    def from_settings(cls, settings: Any) -> MemoryConfig:
        return cls(
            settings.getint("MALLOC_ARENA_MAX"),
            settings.getint("MALLOC_MMAP_THRESHOLD"),
            settings.getfloat("MEMORY_TRIM_INTERVAL"),
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


class MemoryTrim:
    def __init__(self, config: MemoryConfig, crawler: Crawler, libc: Any) -> None:
        self.config = config
        self.crawler = crawler
        self.libc = libc
        self.loop: task.LoopingCall | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> MemoryTrim:
        config = MemoryConfig.from_settings(crawler.settings)
        if not malloc_options(config) and config.trim_interval <= 0:
            raise NotConfigured
        libc = _glibc()
        if libc is None:
            logger.info("memory: not glibc, allocator left as it is")
            raise NotConfigured
        for parameter, value in malloc_options(config):
            if not libc.mallopt(parameter, value):
                logger.warning("memory: mallopt(%d, %d) refused", parameter, value)
        extension = cls(config, crawler, libc)
        crawler.signals.connect(extension.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(extension.spider_closed, signal=signals.spider_closed)
        return extension

    def spider_opened(self) -> None:
        if self.config.trim_interval > 0:
            self.loop = task.LoopingCall(self.trim)
            self.loop.start(self.config.trim_interval, now=False)

    def spider_closed(self) -> None:
        if self.loop is not None and self.loop.running:
            self.loop.stop()

    def trim(self) -> None:
        """Give the free pages inside the arenas back (``malloc_trim(0)``)."""
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
