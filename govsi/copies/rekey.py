"""Stored keys made again by the main text's current definition (``KEY_VERSION``).

A page's exact key, signature and LSH band keys are made from its main text; when the
definition changes, keys stored by the old one would never match a new page's (their hash
names the version) and a revisit would take the new key for a change. So before a crawl
uses crawldb, every stored HTML page whose ``key_version`` is another is keyed again from
its stored ``html_content``, a batch at a time, and each exact copy (DUPLICATE) takes its
original's new keys. Pages are keyed in id order and marked as they go: a run stopped
half-way goes on where it stopped.
"""

from __future__ import annotations

import logging

from sqlalchemy import Connection, Engine, delete, func, or_, select, update

from govsi.copies.index import pack
from govsi.dedup.question import question
from govsi.dedup.signature import KEY_VERSION
from govsi.store.schema import PAGE, PAGE_LSH
from govsi.web.extract import cut_markup

__all__ = ["rekey", "stale"]

logger = logging.getLogger(__name__)

BATCH = 200

_STALE = or_(PAGE.c.key_version.is_(None), PAGE.c.key_version != KEY_VERSION)


def stale(conn: Connection) -> int:
    """How many stored HTML pages and exact copies carry keys of another definition."""
    q = select(func.count()).where(
        PAGE.c.page_type_code.in_(("HTML", "DUPLICATE")), PAGE.c.content_hash.is_not(None), _STALE
    )
    return int(conn.execute(q).scalar_one())


def rekey(
    engine: Engine, *, max_tags: int, num_perm: int, shingle_size: int, bands: int, rows: int
) -> int:
    """Key every stale page again (see the module's docstring); how many were. A page is
    read as the crawl reads it: its markup cut at ``max_tags`` (MAX_PARSE_TAGS), so that
    its keys are the ones a fetch would make, and its cost bounded whatever it holds."""
    with engine.connect() as conn:
        count = stale(conn)
    if not count:
        return 0
    logger.info("crawldb: %d stored pages have keys of another main-text definition; "
                "keying them again by definition %d", count, KEY_VERSION)  # fmt: skip
    done = 0
    while True:
        with engine.begin() as conn:
            batch = conn.execute(
                select(PAGE.c.id, PAGE.c.url, PAGE.c.html_content)
                .where(PAGE.c.page_type_code == "HTML", PAGE.c.content_hash.is_not(None), _STALE)
                .order_by(PAGE.c.id)
                .limit(BATCH)
            ).all()
            if not batch:
                break
            for pid, url, html in batch:
                kept = cut_markup(html, max_tags)[0] if html else html
                _key_again(conn, pid, url, kept, num_perm=num_perm, shingle_size=shingle_size,
                           bands=bands, rows=rows)  # fmt: skip
        done += len(batch)
        if done % (BATCH * 50) == 0:
            logger.info("crawldb: %d of %d pages keyed again", done, count)
    with engine.begin() as conn:
        original = PAGE.alias("original")
        copies = conn.execute(
            update(PAGE)
            .where(PAGE.c.page_type_code == "DUPLICATE", _STALE)
            .values(
                content_hash=select(original.c.content_hash)
                .where(original.c.id == PAGE.c.duplicate_of)
                .scalar_subquery(),
                text_hash=select(original.c.text_hash)
                .where(original.c.id == PAGE.c.duplicate_of)
                .scalar_subquery(),
                key_version=KEY_VERSION,
            )
        ).rowcount
    logger.info("crawldb: %d pages and %d exact copies keyed again", done, copies)
    return done + copies


def _key_again(
    conn: Connection, pid: int, url: str, html: str | None, **measures: int
) -> None:
    key: str | None = None
    copy: str | None = None
    signature: bytes | None = None
    keys: list[int] = []
    if html:
        try:
            asked = question(url, html, **measures)
        except Exception:
            # Keyed as unknown: a revisit then sees no change by content, nothing is lost.
            logger.exception("crawldb: %s could not be keyed again; its key is cleared", url)
        else:
            key, keys, copy = asked.key, asked.keys, asked.copy
            signature = pack(asked.sig) if asked.sig is not None else None
    conn.execute(
        update(PAGE)
        .where(PAGE.c.id == pid)
        .values(content_hash=key, text_hash=copy, minhash=signature, key_version=KEY_VERSION)
    )
    conn.execute(delete(PAGE_LSH).where(PAGE_LSH.c.page_id == pid))
    if keys:
        conn.execute(PAGE_LSH.insert(), [{"band_key": k, "page_id": pid} for k in keys])
