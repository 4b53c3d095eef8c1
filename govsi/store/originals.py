"""Copies settled as a batch is written: two processes sharing one crawldb can each fetch
a copy of the same page before the other's is written, so each would store it as an
original. Inside the writing transaction, and under one lock (``stored_originals``), a page
about to be stored as an original is checked again against what is committed: an exact
copy of a page another process stored first becomes its DUPLICATE, a near copy is flagged
(``near_duplicate_of``) and kept whole; DUPLICATEs are pointed at the first original of
their chain (``settle_copies``).

The store settles copies when it writes, so this lives in the store; the comparison it makes
(``govsi.dedup.similarity.nearest``) is the one ``govsi.copies.index`` makes before a page is
stored.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable

from sqlalchemy import Connection, func, select

from govsi.dedup.similarity import nearest
from govsi.items import FetchedPage, Item
from govsi.store.candidates import candidates
from govsi.store.database import chunks
from govsi.store.schema import PAGE

logger = logging.getLogger(__name__)

# The advisory lock key under which originals are written to PostgreSQL ("govs"). One key
# rather than one per content hash or band: a batch holds hundreds of pages, and per-key
# locks would fill the server's lock table and could deadlock; the writes it serializes
# are one short transaction per process every few seconds.
ORIGINALS_LOCK = 0x676F7673

# Given the pages a batch is about to store as originals, inside the batch's transaction:
# for each that copies a committed page, that page's URL and, for a near copy, their
# estimated similarity (None: an exact copy) (``stored_originals``).
Found = dict[str, tuple[str, float | None]]
FindOriginals = Callable[[Connection, list[FetchedPage]], Found]


def as_duplicate(page: FetchedPage, original: str) -> FetchedPage:
    """``page`` stored as a copy of ``original``: no content, links or signature of its own."""
    return dataclasses.replace(
        page,
        page_type="DUPLICATE",
        duplicate_of=original,
        html_content=None,
        links=[],
        images=[],
        minhash=None,
        band_keys=[],
        near_duplicate_of=None,
        similarity=None,
        text=None,
    )


def settle_copies(
    conn: Connection, batch: list[Item], find_originals: FindOriginals | None
) -> tuple[list[Item], int]:
    """The batch with each would-be original that another process's committed page
    already covers settled: an exact copy turned into that page's DUPLICATE, a near copy
    not flagged yet flagged as resembling it; every DUPLICATE pointing at the first
    original of its chain; and how many would-be originals turned out exact copies. The
    batch itself is left as it is, for a retry."""
    if find_originals is None:
        return batch, 0
    fresh = [
        i
        for i in batch
        if isinstance(i, FetchedPage) and i.page_type == "HTML" and not i.duplicate_of
    ]
    found = find_originals(conn, fresh) if fresh else {}
    # A committed original that this batch replaces with something else (a revisit found
    # it moved, gone or changed) no longer holds what its row says: nothing copies it.
    stale = {i.url for i in batch if isinstance(i, FetchedPage) and replaces_original(i)}
    found = {url: hit for url, hit in found.items() if hit[0] not in stale}
    exact = {url: original for url, (original, score) in found.items() if score is None}
    for url, original in exact.items():
        logger.info("%s: another process stored a copy first, %s; a DUPLICATE", url, original)
    settled_here = len(exact)
    targets = {i.duplicate_of for i in batch if isinstance(i, FetchedPage) and i.duplicate_of}
    targets.difference_update(exact)
    # Copies of a page settled as a copy just now, or stored as one before.
    chains = {**originals_of(conn, sorted(targets)), **exact}
    settled: list[Item] = []
    for item in batch:
        if isinstance(item, FetchedPage) and not item.duplicate_of and item.url in found:
            original, score = found[item.url]
            if score is None:
                item = as_duplicate(item, original)
            elif item.near_duplicate_of is None:
                item = dataclasses.replace(item, near_duplicate_of=original, similarity=score)
        elif isinstance(item, FetchedPage) and item.duplicate_of in chains:
            item = dataclasses.replace(item, duplicate_of=chains[item.duplicate_of])
        settled.append(item)
    return settled, settled_here


def replaces_original(page: FetchedPage) -> bool:
    """Whether ``page``, a revisit's record, replaces an original's content."""
    before = page.revisit
    if before is None or before.page_type != "HTML" or page.not_modified:
        return False
    if page.page_type == "ERROR":
        return False  # a failed revisit keeps the stored copy
    return page.page_type != "HTML" or page.content_hash != before.content_hash


def originals_of(conn: Connection, urls: list[str]) -> dict[str, str]:
    """For stored pages among ``urls`` that are DUPLICATEs, the page each copies."""
    original = PAGE.alias("original")
    found: dict[str, str] = {}
    for part in chunks(urls):
        q = (
            select(PAGE.c.url, original.c.url)
            .join(original, original.c.id == PAGE.c.duplicate_of)
            .where(PAGE.c.url.in_(part), PAGE.c.page_type_code == "DUPLICATE")
        )
        found.update((copy, first) for copy, first in conn.execute(q))
    return found


def stored_originals(
    conn: Connection, pages: list[FetchedPage], *, threshold: float
) -> Found:
    """For pages about to be written as originals, the committed page each one copies
    exactly, or else the one it resembles most (with their similarity) if the page is
    not flagged yet.

    Call it inside the writing transaction: on PostgreSQL it takes the lock that makes
    every process's check-then-write of originals happen one after another, held until
    that transaction ends.
    """
    pages = [p for p in pages if p.content_hash]
    if not pages:
        return {}
    if conn.dialect.name == "postgresql":
        conn.execute(select(func.pg_advisory_xact_lock(ORIGINALS_LOCK)))
    found = _exact_originals(conn, pages)
    rest = [p for p in pages if p.url not in found and p.minhash and p.band_keys
            and p.near_duplicate_of is None]  # fmt: skip
    if rest:
        found.update(_near_originals(conn, rest, threshold=threshold))
    return found


def _exact_originals(conn: Connection, pages: list[FetchedPage]) -> Found:
    """For each of ``pages``, the first committed page with both its keys (its original),
    else one with its exact key alone, which it resembles wholly (1.0); a bounded number of
    candidates per key (``govsi.store.candidates``)."""
    keys = sorted({p.content_hash for p in pages if p.content_hash})
    pairs = sorted({(p.content_hash, p.text_hash) for p in pages
                    if p.content_hash and p.text_hash is not None})  # fmt: skip
    owners: dict[str, list[tuple[int, str, str | None]]] = {}
    for row in candidates(conn, pairs, keys):
        if row.content_hash is not None:  # only BY_KEY rows asked for
            owners.setdefault(row.content_hash, []).append((row.id, row.url, row.text_hash))
    found: Found = {}
    for page in pages:
        # The first stored is the original; the page's own row (a re-fetch) is not a copy.
        others = sorted(o for o in owners.get(page.content_hash or "", ()) if o[1] != page.url)
        same = [o for o in others if page.text_hash is not None and o[2] == page.text_hash]
        if same:
            found[page.url] = (same[0][1], None)
        elif others and page.near_duplicate_of is None:
            found[page.url] = (others[0][1], 1.0)
    return found


def _near_originals(conn: Connection, pages: list[FetchedPage], *, threshold: float) -> Found:
    by_key: dict[int, list[tuple[str, bytes]]] = {}
    for row in candidates(conn, bands=sorted({k for p in pages for k in p.band_keys})):
        # Band keys belong to originals; the type is checked here, not in SQL (candidates).
        if row.band_key is not None and row.minhash and row.page_type_code == "HTML":
            by_key.setdefault(row.band_key, []).append((row.url, row.minhash))
    found: Found = {}
    if not by_key:
        return found
    # Only now: crawldb's writer process needs numpy (13 MB) only when another worker
    # stored a page sharing a band with one of this batch's.
    import numpy as np

    for page in pages:
        assert page.minhash is not None
        shared = {url: np.frombuffer(data, dtype=np.uint32)
                  for key in page.band_keys for url, data in by_key.get(key, ())}  # fmt: skip
        if not shared:
            continue
        mine = np.frombuffer(page.minhash, dtype=np.uint32)
        best = nearest(page.url, mine, shared, threshold)
        if best is not None:
            found[page.url] = best
    return found
