"""Finding the original a fetched page copies, among every page the crawl has stored.

crawldb answers for what is written: an exact copy by ``page.content_hash`` and
``page.text_hash`` (indexed), a near copy through ``page_lsh`` (the original's LSH band keys,
indexed), each candidate then compared by its stored signature. Both are a few indexed
lookups of a bounded number of rows (``govsi.store.candidates``), whatever the size of the
crawl or of a cluster of copies. Pages fetched moments ago may not be written yet (writes
are batched), so the index also remembers the most recent originals in memory, a bounded
number of them.

Several processes sharing one crawldb can fetch two copies at the same moment, each before
the other's page is written. The store settles that when the pages are written
(``govsi.store.originals``): under one database lock, a page about to be stored as an
original is checked again against what is committed, and becomes the DUPLICATE of a copy
another process stored first.
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from contextlib import suppress
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from lxml import etree
from sqlalchemy import Connection, Engine
from sqlalchemy.exc import SQLAlchemyError

from govsi.dedup.minhash import MinHash
from govsi.dedup.question import Question, page_keys, question_of_text
from govsi.dedup.signature import lsh_params, make_minhash
from govsi.dedup.similarity import nearest
from govsi.store.candidates import (
    BY_BAND,
    BY_KEY,
    CANDIDATES_PER_BAND,
    PG_CANDIDATES,
    Candidate,
    pg_parameters,
    sqlite_statements,
)

logger = logging.getLogger(__name__)

# Originals remembered in memory until their rows are surely written: many flushes' worth
# (a flush every DB_FLUSH_INTERVAL, 2 s, and a crawl of 50 pages a second writes these within
# 40 s). Each costs about 4 KB (its band keys and signature), so 2 000 bound it to 8 MB.
RECENT = 2_000
# The lookup of one page (``govsi.store.candidates``): stored HTML pages with its exact key,
# with their copy keys, and those sharing one of its LSH band keys, with their signatures.
# Each back end's driver runs it itself: through SQLAlchemy it cost a fifth of it on
# PostgreSQL, and on SQLite 60 of its 73 µs, on the lookup thread, which holds the GIL the
# crawl's thread needs.
# On PostgreSQL the lookup is prepared once per connection: planning it took five times
# as long as running it (0.5 ms against 0.1 ms with 1 000 pages stored).
PG_PREPARE = (
    "PREPARE govsi_duplicate_candidates(text[], text[], text[], bigint[]) AS " + PG_CANDIDATES
)
PG_EXECUTE = "EXECUTE govsi_duplicate_candidates(%(pairs)s, %(copies)s, %(keys)s, %(bands)s)"
PG_PREPARED = "SELECT 1 FROM pg_prepared_statements WHERE name = 'govsi_duplicate_candidates'"


# After a failed lookup, answer from memory alone for this long before trying again.
LOOKUP_RETRY_AFTER = 2.0


@dataclass
class Verdict:
    """What the index found for one page, and what to store with it: ``original``, the
    page it copies exactly (it is stored as a DUPLICATE); else its signature and, for a
    near copy, the stored page it resembles most (``near``) and their ``similarity``."""

    original: str | None
    content_hash: str
    minhash: bytes | None = None
    band_keys: list[int] = field(default_factory=list)
    near: str | None = None
    similarity: float | None = None
    # ``Question.copy``: what a reader sees, stored with the page (page.text_hash).
    text_hash: str | None = None


def pack(values: np.ndarray) -> bytes:
    """A signature's hash values as crawldb's ``page.minhash`` holds them."""
    # The affine32 scheme's values are 32-bit.
    return values.astype(np.uint32).tobytes()


def unpack(data: bytes, num_perm: int) -> MinHash:
    return make_minhash(num_perm, np.frombuffer(data, dtype=np.uint32))


class DuplicateIndex:
    def __init__(
        self, engine: Engine, *, threshold: float, num_perm: int, shingle_size: int
    ) -> None:
        self.engine = engine
        self.threshold = threshold
        self.num_perm = num_perm
        self.shingle_size = shingle_size
        self.bands, self.rows = lsh_params(threshold, num_perm)
        # The first recent original with an exact key, and with an exact and a copy key.
        self._recent_exact: OrderedDict[str, str] = OrderedDict()
        self._recent_copies: OrderedDict[tuple[str, str], str] = OrderedDict()
        self._recent_bands: dict[int, list[tuple[str, np.ndarray]]] = {}
        self._recent_order: OrderedDict[str, list[int]] = OrderedDict()
        # Pages a revisit is replacing: their crawldb rows are stale until the visit is
        # written (``retract``).
        self._retracted: OrderedDict[str, None] = OrderedDict()
        # One connection kept for the lookups, in autocommit: a pool checkout (and its
        # liveness ping) per page would cost more than the lookup itself.
        self._conn: Connection | None = None
        self._retry_at = 0.0
        self.lookup_failures = 0

    def check(self, url: str, html: str, root: etree._Element | None = None) -> Verdict:
        """The original ``url`` copies exactly, if any; otherwise ``url`` becomes an
        original, flagged with the stored page it resembles if one is near enough.

        ``root``: the page parsed by ``parse_html``, if the caller has it; it is consumed.
        The three steps, for a caller that runs ``lookup`` in another thread.
        """
        question = self.prepare(url, html, root)
        rows = self.lookup(question) if self.needs_lookup(question) else []
        return self.decide(question, rows)

    def prepare(self, url: str, html: str, root: etree._Element | None = None) -> Question:
        """What the page is compared by: main text's key, signature and band keys (CPU)."""
        # Extracting the main text is the costly step; it is done once per page.
        text, key, copy = page_keys(html, root)
        if self._recent_copy(key, copy, url) is not None:
            return Question(url, key, None, [], copy)  # a copy memory knows: no signature
        return question_of_text(url, key, text, copy=copy, **self.measures())

    def measures(self) -> dict[str, int]:
        """``question``'s keyword arguments for this index: how its signatures are made."""
        return {"num_perm": self.num_perm, "shingle_size": self.shingle_size,
                "bands": self.bands, "rows": self.rows}  # fmt: skip

    def needs_lookup(self, question: Question) -> bool:
        """False when memory already knows an exact copy: no need to ask crawldb."""
        return self._recent_copy(question.key, question.copy, question.url) is None

    def lookup(self, question: Question) -> list[Candidate]:
        """Ask crawldb (the only step that waits on it): stored originals with the exact
        key or a shared band key, a bounded number per key. Safe in a worker thread, one
        lookup at a time; it touches no memory that ``decide`` uses."""
        # Both questions in one round trip: most pages are new and need both answers.
        return self._read(question.key, question.copy, question.keys)

    def decide(self, question: Question, rows: list[Candidate]) -> Verdict:
        """The verdict from crawldb's answer and from memory, which is read now, not when
        the lookup started: a copy fetched while its original was being looked up is
        still found."""
        url, key, sig, keys, copy = (question.url, question.key, question.sig, question.keys,
                                     question.copy)  # fmt: skip
        exact, same_text, near = self._stored(rows, url, copy)
        exact = self._recent_copy(key, copy, url) or exact
        recent = self._recent_exact.get(key)
        if recent is not None and recent != url:
            same_text = same_text or recent
        if exact is not None:
            return Verdict(exact, key)
        if sig is None:
            self._remember(url, key, copy, None, [])
            return Verdict(None, key, text_hash=copy)
        # A near copy is a page of its own: kept whole and flagged, and an original for
        # later copies like any other. The same main text with another title or template
        # text is one too, as alike as can be.
        resembles = (same_text, 1.0) if same_text else self._nearest(url, sig, keys, near)
        self._remember(url, key, copy, sig, keys)
        near_url, score = resembles if resembles is not None else (None, None)
        return Verdict(None, key, pack(sig), keys, near=near_url, similarity=score,
                       text_hash=copy)  # fmt: skip

    def retract(self, url: str) -> None:
        """``url`` was fetched anew by a revisit: its stored rows (key, band keys) say what
        it held, not what it holds, until the visit is written. They stop being an
        original for this index; what the page holds now is remembered when it is decided
        (a page moved elsewhere is then no copy of its own old address)."""
        self._retracted[url] = None
        self._retracted.move_to_end(url)
        # Long after the visit is written: by then crawldb says what the page holds.
        while len(self._retracted) > RECENT:
            self._retracted.popitem(last=False)

    def close(self, broken: bool = False) -> None:
        if self._conn is not None:
            with suppress(SQLAlchemyError):
                if broken:
                    # Not handed back to the pool, where resetting it would fail again.
                    self._conn.invalidate()
                self._conn.close()
            self._conn = None

    # -- crawldb ----------------------------------------------------------------------------
    def _stored(
        self, rows: list[Candidate], url: str, copy: str
    ) -> tuple[str | None, str | None, dict[str, np.ndarray]]:
        """From a lookup's rows: the first stored original with both keys (an exact copy's
        original), the first with the exact key alone, and the stored originals that share a
        band key, with their signatures."""
        exact: tuple[int, str] | None = None
        same_text: tuple[int, str] | None = None
        near: dict[str, np.ndarray] = {}
        for kind, pid, other, data, page_type, text_hash, _, _ in rows:
            if other == url or page_type != "HTML" or other in self._retracted:
                # The page itself (stored by an earlier fetch), not an original, or stale.
                continue
            if kind == BY_KEY and text_hash == copy:
                exact = min(exact or (pid, other), (pid, other))
            elif kind == BY_KEY:
                same_text = min(same_text or (pid, other), (pid, other))
            elif kind == BY_BAND and data:
                near[other] = np.frombuffer(data, dtype=np.uint32)
        return (exact[1] if exact else None), (same_text[1] if same_text else None), near

    def _read(self, key: str, copy: str, keys: list[int]) -> list[Candidate]:
        """Rows of the lookup; none while crawldb is away (the writes are kept and retried
        meanwhile), so copies of what this process fetched are still found in memory."""
        if time.monotonic() < self._retry_at:
            return []
        for attempt in (1, 2):
            fresh = self._conn is None
            try:
                if self._conn is None:
                    self._conn = self._connect()
                cursor = self._conn.connection.dbapi_connection.cursor()  # type: ignore[union-attr]
                try:
                    rows: list[Any] = []
                    if self._conn.dialect.name == "postgresql":
                        cursor.execute(PG_EXECUTE, pg_parameters([(key, copy)], [key], keys))
                        rows.extend(cursor.fetchall())
                    else:  # crawldb is PostgreSQL or SQLite
                        for sql, params in sqlite_statements([(key, copy)], [key], keys):
                            cursor.execute(sql, params)
                            rows.extend(cursor.fetchall())
                    return [Candidate(*row) for row in rows]
                finally:
                    cursor.close()
            except (SQLAlchemyError, self.engine.dialect.loaded_dbapi.Error) as exc:
                self.close(broken=True)
                # A kept connection may just be stale (the server restarted): one retry on
                # a new one; then memory only for a while, not a failing connect per page.
                if fresh or attempt == 2:
                    self._retry_at = time.monotonic() + LOOKUP_RETRY_AFTER
                    self.lookup_failures += 1
                    if self.lookup_failures == 1 or self.lookup_failures % 100 == 0:
                        logger.warning(
                            "duplicate lookup in crawldb failed (%d so far): %s; "
                            "using memory only for %.0f s",
                            self.lookup_failures,
                            exc.__class__.__name__,
                            LOOKUP_RETRY_AFTER,
                        )
                    return []
        return []

    def _connect(self) -> Connection:
        conn = self.engine.connect().execution_options(isolation_level="AUTOCOMMIT")
        try:
            # A pooled connection may have it from an earlier index already.
            if conn.dialect.name == "postgresql" and not conn.exec_driver_sql(PG_PREPARED).all():
                conn.exec_driver_sql(PG_PREPARE)
        except SQLAlchemyError:
            conn.close()
            raise
        return conn

    def _nearest(
        self, url: str, values: np.ndarray, keys: list[int], stored: dict[str, np.ndarray]
    ) -> tuple[str, float] | None:
        candidates = dict(stored)
        for k in keys:
            for other, other_values in self._recent_bands.get(k, ()):
                candidates.setdefault(other, other_values)
        return nearest(url, values, candidates, self.threshold)

    # -- memory -----------------------------------------------------------------------------
    def _recent_copy(self, key: str, copy: str, url: str) -> str | None:
        """A recent original other than ``url`` with both keys, if memory knows one."""
        recent = self._recent_copies.get((key, copy))
        return recent if recent != url else None

    def _remember(
        self, url: str, key: str, copy: str, values: np.ndarray | None, keys: list[int]
    ) -> None:
        self._recent_exact.setdefault(key, url)
        self._recent_copies.setdefault((key, copy), url)
        if values is not None:
            self._forget_bands(url)  # remembered again (a revisit): its old bands go
            entry = (url, values)  # one tuple in all its bands' lists: ~1.7 KB less a page
            kept = []
            for k in keys:
                # As many per band key as crawldb answers with: a cluster of near copies
                # costs each page its first few members, not all of them.
                listed = self._recent_bands.setdefault(k, [])
                if len(listed) < CANDIDATES_PER_BAND:
                    listed.append(entry)
                    kept.append(k)
            if kept:
                self._recent_order[url] = kept
        while len(self._recent_exact) > RECENT:
            self._recent_exact.popitem(last=False)
        while len(self._recent_copies) > RECENT:
            self._recent_copies.popitem(last=False)
        while len(self._recent_order) > RECENT:
            self._forget_bands(next(iter(self._recent_order)))

    def _forget_bands(self, url: str) -> None:
        for k in self._recent_order.pop(url, ()):
            entries = [e for e in self._recent_bands.get(k, ()) if e[0] != url]
            if entries:
                self._recent_bands[k] = entries
            else:
                self._recent_bands.pop(k, None)
