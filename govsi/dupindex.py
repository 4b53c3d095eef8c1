"""Finding the original a fetched page copies, among every page the crawl has stored.

crawldb answers for what is written: an exact copy by ``page.content_hash`` (indexed), a
near copy through ``page_lsh`` (the original's LSH band keys, indexed), each candidate then
compared by its stored signature. Both are a few indexed lookups, whatever the size of the
crawl. Pages fetched moments ago may not be written yet (writes are batched), so the index
also remembers the most recent originals in memory, a bounded number of them.

Several processes sharing one crawldb can fetch two copies at the same moment, each before
the other's page is written. ``stored_originals`` settles that when the pages are written:
under one database lock, a page about to be stored as an original is checked again against
what is committed, and becomes the DUPLICATE of a copy another process stored first.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from datasketch import MinHash
from sqlalchemy import Connection, Engine, Row, Select, func, select
from sqlalchemy.exc import SQLAlchemyError

from govsi import db
from govsi.dedup import (
    SCHEME,
    SEED,
    band_keys,
    exact_key_of,
    lsh_params,
    main_text,
    signature_of_text,
)
from govsi.items import FetchedPage

logger = logging.getLogger(__name__)

PAGE = db.Page.__table__
PAGE_LSH = db.PageLsh.__table__
# Originals remembered in memory until their rows are surely written (a few flushes' worth).
RECENT = 10_000
# The advisory lock key under which originals are written to PostgreSQL ("govs"). One key
# rather than one per content hash or band: a batch holds hundreds of pages, and per-key
# locks would fill the server's lock table and could deadlock; the writes it serializes
# are one short transaction per process every few seconds.
ORIGINALS_LOCK = 0x676F7673
# Rows per IN (...) list: SQLite allows 32 766 bound parameters per statement.
IN_CHUNK = 10_000


@dataclass
class Verdict:
    """What the index found for one page, and what to store with it."""

    original: str | None
    content_hash: str
    minhash: bytes | None = None
    band_keys: list[int] = field(default_factory=list)


def pack(minhash: MinHash) -> bytes:
    # The affine32 scheme's values are 32-bit.
    return minhash.hashvalues.astype(np.uint32).tobytes()


def unpack(data: bytes, num_perm: int) -> MinHash:
    values = np.frombuffer(data, dtype=np.uint32)
    return MinHash(num_perm=num_perm, seed=SEED, hashvalues=values, scheme=SCHEME)


class DuplicateIndex:
    def __init__(
        self, engine: Engine, *, threshold: float, num_perm: int, shingle_size: int
    ) -> None:
        self.engine = engine
        self.threshold = threshold
        self.num_perm = num_perm
        self.shingle_size = shingle_size
        self.bands, self.rows = lsh_params(threshold, num_perm)
        self._recent_exact: OrderedDict[str, str] = OrderedDict()
        self._recent_bands: dict[int, list[tuple[str, MinHash]]] = {}
        self._recent_order: OrderedDict[str, list[int]] = OrderedDict()
        self.lookup_failures = 0

    def check(self, url: str, html: str) -> Verdict:
        """The original ``url`` copies, if any; otherwise ``url`` becomes an original."""
        # Extracting the main text is the costly step; it is done once per page.
        text = main_text(html)
        key = exact_key_of(text, html)
        original = self._recent_exact.get(key) or self._stored_exact(key, url)
        if original is not None and original != url:
            return Verdict(original, key)
        sig = signature_of_text(text, num_perm=self.num_perm, shingle_size=self.shingle_size)
        if sig is None:
            self._remember(url, key, None, [])
            return Verdict(None, key)
        keys = band_keys(sig, self.bands, self.rows)
        original = self._near(url, sig, keys)
        if original is not None:
            return Verdict(original, key)
        self._remember(url, key, sig, keys)
        return Verdict(None, key, pack(sig), keys)

    # -- crawldb ----------------------------------------------------------------------------
    def _stored_exact(self, key: str, url: str) -> str | None:
        q = (
            select(PAGE.c.url)
            .where(PAGE.c.content_hash == key, PAGE.c.page_type_code == "HTML")
            .where(PAGE.c.url != url)
            .order_by(PAGE.c.id)
            .limit(1)
        )
        rows = self._read(q)
        return rows[0][0] if rows else None

    def _read(self, q: Select[Any]) -> list[Row[Any]]:
        """Rows of a lookup; none while crawldb is away (the writes are kept and retried
        meanwhile), so copies of what this process fetched are still found in memory."""
        try:
            with self.engine.connect() as conn:
                return list(conn.execute(q))
        except SQLAlchemyError as exc:
            self.lookup_failures += 1
            if self.lookup_failures == 1 or self.lookup_failures % 1000 == 0:
                logger.warning(
                    "duplicate lookup in crawldb failed (%d so far): %s; using memory only",
                    self.lookup_failures,
                    exc.__class__.__name__,
                )
            return []

    def _near(self, url: str, sig: MinHash, keys: list[int]) -> str | None:
        best, best_score = None, self.threshold
        candidates: dict[str, MinHash] = {}
        for k in keys:
            for other, other_sig in self._recent_bands.get(k, ()):
                candidates[other] = other_sig
        q = (
            select(PAGE.c.url, PAGE.c.minhash)
            .join(PAGE_LSH, PAGE_LSH.c.page_id == PAGE.c.id)
            .where(PAGE_LSH.c.band_key.in_(keys), PAGE.c.page_type_code == "HTML")
            .distinct()
        )
        for other, data in self._read(q):
            if other not in candidates and data:
                candidates[other] = unpack(data, self.num_perm)
        for other, other_sig in candidates.items():
            if other == url:
                continue
            score = float(sig.jaccard(other_sig))
            if score >= best_score:
                best, best_score = other, score
        return best

    # -- memory -----------------------------------------------------------------------------
    def _remember(self, url: str, key: str, sig: MinHash | None, keys: list[int]) -> None:
        self._recent_exact.setdefault(key, url)
        if sig is not None:
            for k in keys:
                self._recent_bands.setdefault(k, []).append((url, sig))
            self._recent_order[url] = keys
        while len(self._recent_exact) > RECENT:
            self._recent_exact.popitem(last=False)
        while len(self._recent_order) > RECENT:
            old_url, old_keys = self._recent_order.popitem(last=False)
            for k in old_keys:
                entries = [e for e in self._recent_bands.get(k, ()) if e[0] != old_url]
                if entries:
                    self._recent_bands[k] = entries
                else:
                    self._recent_bands.pop(k, None)


def stored_originals(
    conn: Connection, pages: list[FetchedPage], *, threshold: float, num_perm: int
) -> dict[str, str]:
    """For pages about to be written as originals, the committed original each one copies.

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
    rest = [p for p in pages if p.url not in found and p.minhash and p.band_keys]
    if rest:
        found.update(_near_originals(conn, rest, threshold=threshold, num_perm=num_perm))
    return found


def _in_chunks(values: list[Any]) -> list[list[Any]]:
    return [values[i : i + IN_CHUNK] for i in range(0, len(values), IN_CHUNK)]


def _exact_originals(conn: Connection, pages: list[FetchedPage]) -> dict[str, str]:
    owners: dict[str, list[tuple[int, str]]] = {}
    for part in _in_chunks(sorted({p.content_hash for p in pages if p.content_hash})):
        q = select(PAGE.c.id, PAGE.c.url, PAGE.c.content_hash).where(
            PAGE.c.content_hash.in_(part), PAGE.c.page_type_code == "HTML"
        )
        for pid, url, key in conn.execute(q):
            owners.setdefault(key, []).append((pid, url))
    found = {}
    for page in pages:
        # The first stored is the original; the page's own row (a re-fetch) is not a copy.
        others = sorted(o for o in owners.get(page.content_hash or "", ()) if o[1] != page.url)
        if others:
            found[page.url] = others[0][1]
    return found


def _near_originals(
    conn: Connection, pages: list[FetchedPage], *, threshold: float, num_perm: int
) -> dict[str, str]:
    by_key: dict[int, list[tuple[str, bytes]]] = {}
    for part in _in_chunks(sorted({k for p in pages for k in p.band_keys})):
        q = (
            select(PAGE_LSH.c.band_key, PAGE.c.url, PAGE.c.minhash)
            .join(PAGE, PAGE.c.id == PAGE_LSH.c.page_id)
            .where(PAGE_LSH.c.band_key.in_(part), PAGE.c.page_type_code == "HTML")
        )
        for key, url, data in conn.execute(q):
            if data:
                by_key.setdefault(key, []).append((url, data))
    found = {}
    for page in pages:
        assert page.minhash is not None
        mine = unpack(page.minhash, num_perm)
        best, best_score = None, threshold
        seen: set[str] = set()
        for key in page.band_keys:
            for url, data in by_key.get(key, ()):
                if url == page.url or url in seen:
                    continue
                seen.add(url)
                score = float(mine.jaccard(unpack(data, num_perm)))
                if score >= best_score:
                    best, best_score = url, score
        if best is not None:
            found[page.url] = best
    return found
