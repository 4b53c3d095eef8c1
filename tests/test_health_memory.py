"""The crawl process's memory handed back: the allocator options asked for, and a trim that
returns freed memory to the system."""

from __future__ import annotations

import gc
from typing import Any

import pytest
from scrapy.exceptions import NotConfigured
from scrapy.utils.test import get_crawler

from govsi.health import memory
from govsi.health.memory import (
    M_ARENA_MAX,
    M_MMAP_THRESHOLD,
    TRIM_STAT,
    MemoryConfig,
    ProcessMemory,
    malloc_options,
)


@pytest.mark.parametrize(
    ("arenas", "threshold", "expected"),
    [
        pytest.param(2, 65536, [(M_ARENA_MAX, 2), (M_MMAP_THRESHOLD, 65536)], id="both"),
        pytest.param(0, 65536, [(M_MMAP_THRESHOLD, 65536)], id="arenas-default"),
        pytest.param(4, 0, [(M_ARENA_MAX, 4)], id="threshold-default"),
        pytest.param(0, 0, [], id="neither"),
        pytest.param(-1, -1, [], id="negative-is-default"),
    ],
)
def test_malloc_options(arenas: int, threshold: int, expected: list[tuple[int, int]]) -> None:
    assert malloc_options(MemoryConfig(arenas, threshold, 0)) == expected


class FakeLibc:
    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []

    def mallopt(self, parameter: int, value: int) -> int:
        self.calls.append(("mallopt", parameter, value))
        return 1

    def malloc_trim(self, pad: int) -> int:
        self.calls.append(("malloc_trim", pad))
        return 1


def test_the_settings_reach_the_allocator(monkeypatch: pytest.MonkeyPatch) -> None:
    libc = FakeLibc()
    monkeypatch.setattr(memory, "_glibc", lambda: libc)
    crawler = get_crawler(settings_dict={"MALLOC_ARENA_MAX": 3, "MALLOC_MMAP_THRESHOLD": 1 << 17,
                                         "MEMORY_TRIM_INTERVAL": 5})  # fmt: skip
    extension = ProcessMemory.from_crawler(crawler)
    assert libc.calls == [("mallopt", M_ARENA_MAX, 3), ("mallopt", M_MMAP_THRESHOLD, 1 << 17)]
    extension.trim()
    assert libc.calls[-1] == ("malloc_trim", 0)


@pytest.mark.parametrize(
    "libc", [pytest.param(None, id="not-glibc"), pytest.param(FakeLibc(), id="all-off")]
)
def test_nothing_to_do_is_not_configured(
    monkeypatch: pytest.MonkeyPatch, libc: FakeLibc | None
) -> None:
    monkeypatch.setattr(memory, "_glibc", lambda: libc)
    # Not glibc, with the allocator's settings asked for; glibc, with nothing asked.
    tuned = {"MALLOC_ARENA_MAX": 2, "MEMORY_TRIM_INTERVAL": 20, "GC_FREEZE": False}
    off = {"MALLOC_ARENA_MAX": 0, "MALLOC_MMAP_THRESHOLD": 0, "MEMORY_TRIM_INTERVAL": 0,
           "GC_FREEZE": False}  # fmt: skip
    with pytest.raises(NotConfigured):
        ProcessMemory.from_crawler(get_crawler(settings_dict=off if libc else tuned))


def test_start_up_objects_are_frozen_for_the_crawl(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memory, "_glibc", lambda: None)  # the freeze needs no glibc
    extension = ProcessMemory.from_crawler(get_crawler(settings_dict={"GC_FREEZE": True}))
    assert gc.get_freeze_count() == 0
    extension.spider_opened()
    try:
        assert gc.get_freeze_count() > 10_000  # pytest's and Scrapy's modules, at least
    finally:
        extension.spider_closed()
    assert gc.get_freeze_count() == 0


def test_a_trim_gives_freed_memory_back() -> None:
    # Memory freed between blocks that live on cannot shrink the heap from its top; the
    # trim hands its whole pages back, and the stat counts them.
    crawler = get_crawler(settings_dict={"MALLOC_ARENA_MAX": 0, "MALLOC_MMAP_THRESHOLD": 0,
                                         "MEMORY_TRIM_INTERVAL": 1})  # fmt: skip
    extension = ProcessMemory.from_crawler(crawler)
    blocks = [bytes(2000 + i % 7) for i in range(40_000)]  # ~80 MB from malloc, not pymalloc
    kept = blocks[::20]
    del blocks
    before = memory._resident()
    extension.trim()
    trimmed = crawler.stats.get_value(TRIM_STAT)
    assert trimmed > 40_000_000, (before, trimmed)
    assert len(kept) == 2000
