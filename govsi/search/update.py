"""``scrapy index``'s work: bring the index in line with crawldb, reading only the pages
whose text is new or changed since the index last saw them, and dropping those that lost
theirs (gone, moved, now a copy). A page that cannot be read, analysed or indexed is
skipped, logged and counted, never the update's end; the next update tries it again."""

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
from govsi.search.index import Pending, SearchIndex, Written

logger = logging.getLogger(__name__)

# Pages analysed and committed together: bounded memory, and a stop loses at most one batch
# (the next update redoes it). A batch ends at BATCH pages or BATCH_CHARS characters of text
# and titles, whichever comes first: two batches are held at once (one written, the next
# analysed), and 2 000 pages of up to TEXT_MAX_CHARS (1 M) each were 2 G characters.
BATCH = 2_000
BATCH_CHARS = 10_000_000
# Pages to (re)index from which a pool of processes is worth what starting it costs.
POOL_FROM = 5_000


@dataclass(frozen=True)
class Updated:
    added: int  # new or changed pages (re)indexed
    removed: int  # pages dropped
    unchanged: int
    seconds: float
    skipped: int = 0  # pages that could not be read, analysed or indexed (each logged)


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
    skipped = 0

    def skip(pid: int, reason: str) -> None:
        nonlocal skipped
        skipped += 1
        logger.warning("search index: page %d skipped, %s", pid, reason)

    if index.needs_common(len(current)):
        # The pairs' stems are chosen from the first pages of a big enough update (those
        # already held are then written again: the index was small).
        first = sorted(current)[:BATCH]
        # A page that cannot be read is left out here, and logged when it is indexed.
        index.choose_common(source.documents(engine, first, text_chars, lambda *_: None))
    held = index.marks()
    todo = sorted(pid for pid, mark in current.items() if held.get(pid) != mark)
    gone = [pid for pid in held if pid not in current]
    added = done = 0
    if gone and not todo:
        index.write([], gone)
    with contextlib.ExitStack() as stack:
        pool = None
        if processes > 1 and len(todo) >= POOL_FROM:
            # spawn, not fork: this may run in the crawl's process, among its threads.
            context = multiprocessing.get_context("spawn")
            pool = stack.enter_context(ProcessPoolExecutor(processes, mp_context=context))
        batches = batched(source.documents(engine, todo, text_chars, skip), BATCH, BATCH_CHARS)
        for written, pages in write_batches(index, batches, gone, pool):
            added += written.added
            skipped += written.skipped
            done += pages
            if progress is not None:
                progress(done, len(todo))
    index.set_inlinks(source.inlinks(engine))
    return Updated(added, len(gone), len(current) - len(todo), time.monotonic() - started,
                   skipped)  # fmt: skip


def log_skipped(done: Updated) -> None:
    """The one line that counts an update's skipped pages, when there are any."""
    if done.skipped:
        logger.warning("search index: %d pages skipped (why: each one's line above); the"
                       " next update tries them again", done.skipped)  # fmt: skip


def batched(
    docs: Iterable[SearchDocument], most: int = BATCH, chars: int = BATCH_CHARS
) -> Iterator[list[SearchDocument]]:
    """``docs`` in lists of at most ``most`` pages whose texts and titles come to at most
    ``chars`` characters (a page longer than that, alone), in order (pure)."""
    batch: list[SearchDocument] = []
    held = 0
    for doc in docs:
        size = len(doc.text) + len(doc.title)
        if batch and (len(batch) >= most or held + size > chars):
            yield batch
            batch, held = [], 0
        batch.append(doc)
        held += size
    if batch:
        yield batch


def write_batches(
    index: SearchIndex,
    batches: Iterable[list[SearchDocument]],
    gone: list[int],
    pool: Executor | None = None,
) -> Iterator[tuple[Written, int]]:
    """Write ``batches`` to ``index`` one commit each (``gone`` dropped with the first),
    yielding what each did and its pages. With a ``pool``, the next batch is analysed
    while one is written: the analysis and Tantivy's indexing each take about half the
    time. Two batches are held at once, the one written and the next."""
    ahead: Pending | None = None
    for n, docs in enumerate(itertools.chain(batches, [None])):
        pending = index.analysed(docs, pool) if docs is not None else None
        if ahead is not None:
            yield index.write(ahead, gone if n == 1 else []), len(ahead.docs)
        ahead = pending
