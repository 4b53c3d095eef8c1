"""``scrapy index``'s work: bring the index in line with crawldb, reading only the pages
whose text is new or changed since the index last saw them, and dropping those that lost
theirs (gone, moved, now a copy)."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy import Engine

from govsi.search import source
from govsi.search.index import SearchIndex
from govsi.store.database import chunks

logger = logging.getLogger(__name__)

# Pages analysed and committed together: bounded memory, and a stop loses at most one batch
# (the next update redoes it).
BATCH = 2_000


@dataclass(frozen=True)
class Updated:
    added: int  # new or changed pages (re)indexed
    removed: int  # pages dropped
    unchanged: int
    seconds: float


def update(
    engine: Engine, index: SearchIndex, progress: Callable[[int, int], None] | None = None
) -> Updated:
    """Index the new and changed pages of ``engine``'s crawldb, drop the gone ones, and
    refresh the in-link counts; ``progress(done, todo)`` after each batch."""
    started = time.monotonic()
    current = source.versions(engine)
    held = index.marks()
    todo = sorted(pid for pid, mark in current.items() if held.get(pid) != mark)
    gone = [pid for pid in held if pid not in current]
    added = 0
    if gone and not todo:
        index.write([], gone)
    for n, part in enumerate(chunks(todo, BATCH)):
        added += index.write(source.documents(engine, part), gone if n == 0 else [])
        if progress is not None:
            progress(min((n + 1) * BATCH, len(todo)), len(todo))
    index.set_inlinks(source.inlinks(engine))
    return Updated(added, len(gone), len(current) - len(todo), time.monotonic() - started)
