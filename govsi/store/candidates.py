"""A page's candidate originals in crawldb, bounded whatever the size of a cluster of copies:
the stored HTML pages with its exact key and copy key, with its exact key alone, and those
sharing one of its LSH band keys, at most ``CANDIDATES_PER_BAND`` per key. The one query
both the duplicate index (``govsi.copies.index``, per page, through its driver) and the
writer's re-check (``govsi.store.originals``, per batch) ask, written for each back end.

Every part is an index range read of at most ``CANDIDATES_PER_BAND`` rows: the exact keys
through ``idx_page_copy_keys`` (content_hash, page_type_code, text_hash), the band keys
through ``page_lsh``'s primary key (band_key, page_id), the pages then by their id.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from functools import lru_cache
from typing import Any, NamedTuple

from sqlalchemy import Connection

# Per key, only the first few stored originals (lowest page id) are candidates: a cluster of
# N near copies shares band keys, and reading all of them made each lookup O(N), the crawl
# O(N²); any member of such a cluster is as good a "resembles" answer. 21 bands: at most
# 168 candidates per page.
CANDIDATES_PER_BAND = 8

# SQLite refuses a compound SELECT of more than 500 parts (SQLITE_MAX_COMPOUND_SELECT).
SQLITE_PARTS = 400

# A row's kind: found by an exact key (its copy key tells an exact copy), or by a band key.
BY_KEY = 0
BY_BAND = 1


class Candidate(NamedTuple):
    """One candidate row. ``content_hash`` is set on BY_KEY rows, ``band_key`` on BY_BAND
    rows (the key each was found by), ``minhash`` on BY_BAND rows only."""

    kind: int
    id: int
    url: str
    minhash: bytes | None
    page_type_code: str
    text_hash: str | None
    content_hash: str | None
    band_key: int | None


# Unqualified names: the PostgreSQL engine's search_path finds the crawldb schema. The
# page type is compared in SQL for the exact keys, where every DUPLICATE of a page shares
# them (the index's second column skips those); band keys belong to originals only, so
# BY_BAND rows are kept or not by their type in Python.
_COPY = (
    "SELECT id, url, page_type_code, text_hash, content_hash FROM page WHERE content_hash = {key}"
    " AND page_type_code = 'HTML' AND text_hash = {copy} ORDER BY id LIMIT {n}"
)
# Not ordered: all of them have the same main text, and ordering would read them all.
_SAME = (
    "SELECT id, url, page_type_code, text_hash, content_hash FROM page WHERE content_hash = {key}"
    " AND page_type_code = 'HTML' LIMIT {n}"
)
_BAND = "SELECT band_key, page_id FROM page_lsh WHERE band_key = {band} ORDER BY page_id LIMIT {n}"
_KEY_COLUMNS = "SELECT 0, c.id, c.url, {blob}, c.page_type_code, c.text_hash, c.content_hash, {int}"
_BAND_COLUMNS = (
    "SELECT 1, p.id, p.url, p.minhash, p.page_type_code, NULL, NULL, b.band_key FROM {band} "
    "JOIN page p ON p.id = b.page_id"
)


def _pg(pairs: str, copies: str, keys: str, bands: str) -> str:
    columns = _KEY_COLUMNS.format(blob="NULL::bytea", int="NULL::bigint")
    lateral = "CROSS JOIN LATERAL ({}) c"
    return " UNION ALL ".join([
        f"{columns} FROM unnest({pairs}::text[], {copies}::text[]) AS q(key, copy) "
        + lateral.format(_COPY.format(key="q.key", copy="q.copy", n=CANDIDATES_PER_BAND)),
        f"{columns} FROM unnest({keys}::text[]) AS q(key) "
        + lateral.format(_SAME.format(key="q.key", n=CANDIDATES_PER_BAND)),
        _BAND_COLUMNS.format(
            band=f"unnest({bands}::bigint[]) AS k(band_key) CROSS JOIN LATERAL ("
            + _BAND.format(band="k.band_key", n=CANDIDATES_PER_BAND) + ") b"
        ),
    ])  # fmt: skip


# PostgreSQL: one statement whatever the number of keys, their lists as arrays; as the
# index prepares it (parameters: copies' exact keys, their copy keys, exact keys, band keys)
# and as the writer runs it through psycopg's named parameters.
PG_CANDIDATES = _pg("$1", "$2", "$3", "$4")
PG_CANDIDATES_NAMED = _pg("%(pairs)s", "%(copies)s", "%(keys)s", "%(bands)s")


@lru_cache(maxsize=64)
def sqlite_candidates(pairs: int, keys: int, bands: int) -> str:
    """SQLite's statement for ``pairs`` (exact key, copy key), ``keys`` exact keys and
    ``bands`` band keys, their ``?`` parameters in that order: one limited subquery each, as
    the parts of one UNION ALL (at most ``SQLITE_PARTS``)."""
    columns = _KEY_COLUMNS.format(blob="NULL", int="NULL")
    copy = f"{columns} FROM ({_COPY.format(key='?', copy='?', n=CANDIDATES_PER_BAND)}) c"
    same = f"{columns} FROM ({_SAME.format(key='?', n=CANDIDATES_PER_BAND)}) c"
    band = _BAND_COLUMNS.format(band=f"({_BAND.format(band='?', n=CANDIDATES_PER_BAND)}) b")
    return " UNION ALL ".join([copy] * pairs + [same] * keys + [band] * bands)


def sqlite_statements(
    pairs: Sequence[tuple[str, str]], keys: Sequence[str], bands: Sequence[int]
) -> Iterator[tuple[str, list[Any]]]:
    """SQLite's statements and parameters for these keys, at most ``SQLITE_PARTS`` parts
    each (one statement for a page: 23 parts; none for no keys)."""
    parts: list[tuple[int, list[Any]]] = [(0, [k, c]) for k, c in pairs]
    parts += [(1, [k]) for k in keys]
    parts += [(2, [b]) for b in bands]
    for start in range(0, len(parts), SQLITE_PARTS):
        chunk = parts[start : start + SQLITE_PARTS]
        counts = [sum(1 for kind, _ in chunk if kind == i) for i in range(3)]
        yield sqlite_candidates(*counts), [p for _, params in chunk for p in params]


def pg_parameters(
    pairs: Sequence[tuple[str, str]], keys: Sequence[str], bands: Sequence[int]
) -> dict[str, list[Any]]:
    """``PG_CANDIDATES_NAMED``'s parameters (and, in that order, ``PG_CANDIDATES``')."""
    return {"pairs": [k for k, _ in pairs], "copies": [c for _, c in pairs],
            "keys": list(keys), "bands": list(bands)}  # fmt: skip


def candidates(
    conn: Connection,
    pairs: Sequence[tuple[str, str]] = (),
    keys: Sequence[str] = (),
    bands: Sequence[int] = (),
) -> list[Candidate]:
    """The candidate rows for ``pairs`` (exact key, copy key: exact copies), ``keys`` (exact
    keys: the same main text) and ``bands`` (band keys: near copies), through ``conn``."""
    if conn.dialect.name == "postgresql":
        found = conn.exec_driver_sql(PG_CANDIDATES_NAMED, pg_parameters(pairs, keys, bands))
        return [Candidate(*row) for row in found]
    rows: list[Candidate] = []
    for sql, params in sqlite_statements(pairs, keys, bands):
        rows.extend(Candidate(*row) for row in conn.exec_driver_sql(sql, tuple(params)))
    return rows
