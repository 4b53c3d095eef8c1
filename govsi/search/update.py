"""``scrapy index``'s work: bring the index in line with crawldb, reading only the pages
whose text is new or changed since the index last saw them, and dropping those that lost
theirs (gone, moved, now a copy)."""

from __future__ import annotations

import contextlib
import itertools
import logging
import multiprocessing
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Executor, ProcessPoolExecutor
from dataclasses import dataclass

from sqlalchemy import Engine

from govsi.search import source
from govsi.search.document import SearchDocument
from govsi.search.index import Pending, SearchIndex
from govsi.store.database import chunks

logger = logging.getLogger(__name__)

# Pages analysed and committed together: bounded memory, and a stop loses at most one batch
# (the next update redoes it).
BATCH = 2_000
# Pages to (re)index from which a pool of processes is worth its start (~1 s each).
POOL_FROM = 5_000


@dataclass(frozen=True)
class Updated:
    added: int  # new or changed pages (re)indexed
    removed: int  # pages dropped
    unchanged: int
    seconds: float


def update(
    engine: Engine,
    index: SearchIndex,
    progress: Callable[[int, int], None] | None = None,
    processes: int = 1,
    text_chars: int = source.TEXT_CHARS,
) -> Updated:
    """Index the new and changed pages of ``engine``'s crawldb, drop the gone ones, and
    refresh the in-link counts; ``progress(done, todo)`` after each batch. ``processes``
    analyse the pages when there are more than ``POOL_FROM`` (1: in this one); each
    page's first ``text_chars`` characters are indexed."""
    started = time.monotonic()
    current = source.versions(engine)
    if index.needs_common(len(current)):
        # The pairs' stems are chosen from the first pages of a big enough update (those
        # already held are then written again: the index was small).
        first = sorted(current)[:BATCH]
        index.choose_common(list(source.documents(engine, first, text_chars)))
    held = index.marks()
    todo = sorted(pid for pid, mark in current.items() if held.get(pid) != mark)
    gone = [pid for pid in held if pid not in current]
    added = 0
    if gone and not todo:
        index.write([], gone)
    with contextlib.ExitStack() as stack:
        pool = None
        if processes > 1 and len(todo) >= POOL_FROM:
            # spawn, not fork: this may run in the crawl's process, among its threads.
            context = multiprocessing.get_context("spawn")
            pool = stack.enter_context(ProcessPoolExecutor(processes, mp_context=context))
        batches = (source.documents(engine, part, text_chars) for part in chunks(todo, BATCH))
        for n, count in enumerate(write_batches(index, batches, gone, pool)):
            added += count
            if progress is not None:
                progress(min((n + 1) * BATCH, len(todo)), len(todo))
    index.set_inlinks(source.inlinks(engine))
    return Updated(added, len(gone), len(current) - len(todo), time.monotonic() - started)


def write_batches(
    index: SearchIndex,
    batches: Iterable[Iterable[SearchDocument]],
    gone: list[int],
    pool: Executor | None = None,
) -> Iterator[int]:
    """Write ``batches`` to ``index`` one commit each (``gone`` dropped with the first),
    yielding how many each added. With a ``pool``, the next batch is analysed while one
    is written: the analysis and Tantivy's indexing each take about half the time."""
    ahead: Pending | None = None
    for n, docs in enumerate(itertools.chain(batches, [None])):
        pending = index.analysed(docs, pool) if docs is not None else None
        if ahead is not None:
            yield index.write(ahead, gone if n == 1 else [])
        ahead = pending
