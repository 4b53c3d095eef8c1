"""Batched writes of crawl results into crawldb, and the reads a restarted crawl needs.

``CrawlWriter`` is plain Python over an SQLAlchemy engine (tests drive it directly);
``CrawlStore`` is the Scrapy extension that owns one writer per crawl and flushes it on a
timer and at the end. Items are applied in the order they were added, in one transaction
per batch; a batch that fails is retried, then kept for the next flush, and whatever still
cannot be written when the crawl closes is saved to a JSON-lines file, never dropped.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import logging
import os
import time
from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, get_args

from sqlalchemy import Connection, Engine, Table, and_, bindparam, func, or_, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import SQLAlchemyError

from govsi import db
from govsi.extract import filename_of
from govsi.items import (
    DiscoveredPage,
    FetchedImage,
    FetchedPage,
    RobotsFile,
    SiteInfo,
    SitemapFile,
)
from govsi.urls import host_of

logger = logging.getLogger(__name__)

Item = DiscoveredPage | FetchedPage | FetchedImage | RobotsFile | SiteInfo | SitemapFile
# Derived from Item, so that a record type cannot be written without being known here.
ITEM_TYPES: dict[str, type] = {cls.__name__: cls for cls in get_args(Item)}

SITE: Table = db.Site.__table__  # type: ignore[assignment]
PAGE: Table = db.Page.__table__  # type: ignore[assignment]
PAGE_DATA: Table = db.PageData.__table__  # type: ignore[assignment]
IMAGE: Table = db.Image.__table__  # type: ignore[assignment]
LINK: Table = db.Link.__table__  # type: ignore[assignment]
PAGE_LSH: Table = db.PageLsh.__table__  # type: ignore[assignment]

# Files holding items that could not be written before the crawl ended.
SPILL_PREFIX = "crawldb-unwritten-"
SPILL_SUFFIX = ".jsonl"

# Bound parameters per statement stay well under SQLite's and psycopg2's limits.
CHUNK = 500


def chunks(seq: Sequence[Any], size: int = CHUNK) -> Iterator[Sequence[Any]]:
    for i in range(0, len(seq), size):
        yield seq[i : i + size]


class CrawlWriter:
    def __init__(
        self,
        engine: Engine,
        *,
        store_image_data: bool = True,
        store_binary_data: bool = False,
        retries: int = 3,
        retry_backoff: float = 0.5,
    ) -> None:
        self.engine = engine
        self.store_image_data = store_image_data
        self.store_binary_data = store_binary_data
        self.retries = retries
        self.retry_backoff = retry_backoff
        self.pending: list[Item] = []
        self._insert = (postgresql if engine.dialect.name == "postgresql" else sqlite).insert
        # Hosts never change id once inserted, and a crawl sees few of them.
        self._site_ids: dict[str, int] = {}
        self.failed_flushes = 0

    # -- queueing --------------------------------------------------------------------
    def add(self, item: Item) -> None:
        self.pending.append(item)

    def take(self) -> list[Item]:
        """Everything pending, in order, as the next batch to write."""
        batch, self.pending = self.pending, []
        return batch

    def putback(self, batch: list[Item]) -> None:
        """Return a batch that could not be written to the front of the queue."""
        self.pending = batch + self.pending

    def write(self, batch: list[Item]) -> bool:
        """Write one batch in one transaction, retrying with backoff; True if written.

        Touches nothing but the database and the site-id cache, so it may run in a
        worker thread while more items are added, one batch at a time.
        """
        if not batch:
            return True
        for attempt in range(self.retries + 1):
            try:
                with self.engine.begin() as conn:
                    self._apply(conn, batch)
                return True
            except SQLAlchemyError as exc:
                self._site_ids.clear()  # ids read in a rolled-back transaction may be gone
                logger.warning(
                    "crawldb write of %d items failed (attempt %d/%d): %s",
                    len(batch),
                    attempt + 1,
                    self.retries + 1,
                    exc.__class__.__name__,
                    exc_info=attempt == self.retries,
                )
                if attempt < self.retries:
                    time.sleep(self.retry_backoff * 2**attempt)
        logger.error("crawldb unreachable: keeping %d items for the next flush", len(batch))
        return False

    def flush(self) -> bool:
        """Write everything pending now; True when nothing is left pending."""
        batch = self.take()
        if self.write(batch):
            return True
        self.failed_flushes += 1
        self.putback(batch)
        return False

    def spill(self, directory: str | Path) -> Path | None:
        """Save what could not be written, so a later ``replay`` can load it."""
        if not self.pending:
            return None
        # Names sort in the order the files were written, for replay_spills.
        path = Path(directory) / f"{SPILL_PREFIX}{time.time_ns()}-{os.getpid()}{SPILL_SUFFIX}"
        with path.open("w", encoding="utf-8") as fh:
            for item in self.pending:
                fh.write(json.dumps(encode_item(item)) + "\n")
        logger.error("saved %d unwritten items to %s", len(self.pending), path)
        self.pending = []
        return path

    # -- the batch ---------------------------------------------------------------------
    def _apply(self, conn: Connection, batch: list[Item]) -> None:
        depth_of: dict[str, int] = {}
        for item in batch:
            if isinstance(item, DiscoveredPage):
                depth_of.setdefault(item.url, item.depth)
            elif isinstance(item, FetchedPage):
                depth_of.setdefault(item.url, item.depth)
                for link in item.links:
                    depth_of.setdefault(link, item.link_depth)
                if item.duplicate_of:
                    depth_of.setdefault(item.duplicate_of, item.depth)
        hosts = {host_of(u) for u in depth_of}
        hosts.update(i.host for i in batch if isinstance(i, RobotsFile | SiteInfo | SitemapFile))
        site_ids = self._ensure_sites(conn, hosts)
        page_ids = self._ensure_pages(conn, depth_of, site_ids)

        page_updates: list[dict[str, Any]] = []
        page_data: list[dict[str, Any]] = []
        links: set[tuple[int, int]] = set()
        images: dict[tuple[int, str], dict[str, Any]] = {}
        image_updates: dict[str, dict[str, Any]] = {}
        robots: dict[str, str | None] = {}
        site_info: dict[str, SiteInfo] = {}
        sitemap_docs: dict[str, list[SitemapFile]] = {}
        lsh_rows: list[dict[str, int]] = []
        for item in batch:
            if isinstance(item, FetchedPage):
                pid = page_ids[item.url]
                row = self._page_row(pid, item)
                if item.duplicate_of:
                    row["duplicate_of"] = page_ids[item.duplicate_of]
                    links.add((pid, page_ids[item.duplicate_of]))
                page_updates.append(row)
                lsh_rows.extend({"band_key": k, "page_id": pid} for k in item.band_keys)
                if item.page_type == "BINARY":
                    page_data.append(
                        {
                            "page_id": pid,
                            "data_type_code": item.data_type,
                            "data": item.data if self.store_binary_data else None,
                            "size": item.size,
                        }
                    )
                links.update((pid, page_ids[target]) for target in item.links)
                for url in item.images:
                    images.setdefault(
                        (pid, url), {"page_id": pid, "url": url, "filename": filename_of(url)}
                    )
            elif isinstance(item, FetchedImage):
                image_updates[item.url] = {
                    "b_url": item.url,
                    "content_type": (item.content_type or "")[:50] or None,
                    "data": item.data if self.store_image_data else None,
                    "accessed_time": item.accessed_time,
                    "http_status_code": item.http_status_code,
                }
            elif isinstance(item, RobotsFile):
                robots[item.host] = item.content
            elif isinstance(item, SiteInfo):
                site_info[item.host] = item
            elif isinstance(item, SitemapFile):
                sitemap_docs.setdefault(item.host, []).append(item)

        if page_updates:
            # Keys that name columns become the SET clause of an executemany UPDATE.
            conn.execute(update(PAGE).where(PAGE.c.id == bindparam("b_id")), page_updates)
        if page_data:
            # A page re-fetched after a hard stop must not end up with two documents.
            ids = [r["page_id"] for r in page_data]
            for part in chunks(ids):
                conn.execute(PAGE_DATA.delete().where(PAGE_DATA.c.page_id.in_(part)))
            conn.execute(PAGE_DATA.insert(), page_data)
        if lsh_rows:
            conn.execute(self._insert(PAGE_LSH).on_conflict_do_nothing(), lsh_rows)
        if links:
            rows = [{"from_page": a, "to_page": b} for a, b in sorted(links)]
            conn.execute(self._insert(LINK).on_conflict_do_nothing(), rows)
        if images:
            self._insert_images(conn, list(images.values()))
        if image_updates:
            stmt = update(IMAGE).where(IMAGE.c.url == bindparam("b_url"))
            conn.execute(stmt, list(image_updates.values()))
        for host, content in robots.items():
            conn.execute(
                update(SITE).where(SITE.c.id == site_ids[host]).values(robots_content=content)
            )
        for host, docs in sitemap_docs.items():
            # Documents are appended, each after a line naming where it came from.
            text = "".join(f"<!-- {d.url} -->\n{d.content}\n" for d in docs)
            old = conn.execute(select(SITE.c.sitemap_content).where(SITE.c.id == site_ids[host]))
            previous = old.scalar() or ""
            conn.execute(
                update(SITE)
                .where(SITE.c.id == site_ids[host])
                .values(sitemap_content=previous + text)
            )
        for host, info in site_info.items():
            conn.execute(
                update(SITE)
                .where(SITE.c.id == site_ids[host])
                .values(ip_address=info.ip_address, crawl_delay=info.crawl_delay)
            )

    @staticmethod
    def _page_row(pid: int, item: FetchedPage) -> dict[str, Any]:
        return {
            "b_id": pid,
            "page_type_code": item.page_type,
            "html_content": item.html_content if item.page_type == "HTML" else None,
            "http_status_code": item.http_status_code,
            "accessed_time": item.accessed_time,
            "content_type": (item.content_type or "")[:255] or None,
            "fetch_error": item.fetch_error,
            "nofollow": item.nofollow,
            "content_hash": item.content_hash,
            "minhash": item.minhash,
            "duplicate_of": None,
        }

    def _ensure_sites(self, conn: Connection, hosts: Iterable[str]) -> dict[str, int]:
        missing = sorted(h for h in hosts if h not in self._site_ids)
        if missing:
            conn.execute(
                self._insert(SITE).on_conflict_do_nothing(index_elements=["domain"]),
                [{"domain": h} for h in missing],
            )
            for part in chunks(missing):
                rows = conn.execute(select(SITE.c.domain, SITE.c.id).where(SITE.c.domain.in_(part)))
                self._site_ids.update({d: i for d, i in rows})
        return self._site_ids

    def _ensure_pages(
        self, conn: Connection, depth_of: dict[str, int], site_ids: dict[str, int]
    ) -> dict[str, int]:
        if not depth_of:
            return {}
        urls = list(depth_of)
        rows = [
            {
                "url": u,
                "site_id": site_ids[host_of(u)],
                "page_type_code": "FRONTIER",
                "depth": depth_of[u],
            }
            for u in urls
        ]
        stmt = self._insert(PAGE).on_conflict_do_nothing(index_elements=["url"])
        for part in chunks(rows):
            conn.execute(stmt, list(part))
        ids: dict[str, int] = {}
        for part in chunks(urls):
            found = conn.execute(select(PAGE.c.url, PAGE.c.id).where(PAGE.c.url.in_(part)))
            ids.update({url: pid for url, pid in found})
        return ids

    def _insert_images(self, conn: Connection, rows: list[dict[str, Any]]) -> None:
        """New (page, image) rows copy an earlier download of the same URL, if any."""
        urls = sorted({r["url"] for r in rows})
        known: dict[str, dict[str, Any]] = {}
        for part in chunks(urls):
            q = select(
                IMAGE.c.url,
                IMAGE.c.content_type,
                IMAGE.c.data,
                IMAGE.c.accessed_time,
                IMAGE.c.http_status_code,
            ).where(and_(IMAGE.c.url.in_(part), IMAGE.c.accessed_time.is_not(None)))
            for r in conn.execute(q):
                known.setdefault(r.url, dict(r._mapping))
        full = []
        for r in rows:
            prev = known.get(r["url"], {})
            full.append(
                {
                    **r,
                    "content_type": prev.get("content_type"),
                    "data": prev.get("data"),
                    "accessed_time": prev.get("accessed_time"),
                    "http_status_code": prev.get("http_status_code"),
                }
            )
        conn.execute(
            self._insert(IMAGE).on_conflict_do_nothing(index_elements=["page_id", "url"]), full
        )

    # -- reads for a continuing crawl ------------------------------------------------------
    def fetched_urls(self) -> Iterator[str]:
        """Every URL this crawldb has already fetched (anything but FRONTIER)."""
        with self.engine.connect() as conn:
            q = select(PAGE.c.url).where(PAGE.c.page_type_code != "FRONTIER")
            yield from conn.execute(q.execution_options(yield_per=5000)).scalars()

    def fetched_image_urls(self) -> Iterator[str]:
        with self.engine.connect() as conn:
            q = select(IMAGE.c.url).where(IMAGE.c.accessed_time.is_not(None)).distinct()
            yield from conn.execute(q.execution_options(yield_per=5000)).scalars()

    def unfetched_image_urls(self) -> Iterator[str]:
        """Image URLs shown on stored pages whose download no row records yet."""
        with self.engine.connect() as conn:
            fetched = select(IMAGE.c.url).where(IMAGE.c.accessed_time.is_not(None))
            q = select(IMAGE.c.url).where(IMAGE.c.url.not_in(fetched)).distinct()
            yield from conn.execute(q.execution_options(yield_per=5000)).scalars()

    def frontier_hosts(self, max_depth: int = 0) -> list[tuple[str, str]]:
        """Hosts with FRONTIER rows (within ``max_depth`` > 0), each with one of their URLs:
        a continuing crawl's work."""
        with self.engine.connect() as conn:
            q = (
                select(SITE.c.domain, func.min(PAGE.c.url))
                .join(PAGE, PAGE.c.site_id == SITE.c.id)
                .where(PAGE.c.page_type_code == "FRONTIER")
                .group_by(SITE.c.id, SITE.c.domain)
                .order_by(SITE.c.id)
            )
            if max_depth > 0:
                q = q.where(PAGE.c.depth <= max_depth)
            return [(domain, url) for domain, url in conn.execute(q)]

    def frontier_batch(
        self, host: str, after: tuple[int, int], limit: int, max_depth: int = 0
    ) -> list[tuple[str, int, int]]:
        """The next FRONTIER rows of one host in queue order: (url, depth, id) after the
        (depth, id) cursor ``after``."""
        depth, last_id = after
        with self.engine.connect() as conn:
            q = (
                select(PAGE.c.url, PAGE.c.depth, PAGE.c.id)
                .join(SITE, SITE.c.id == PAGE.c.site_id)
                .where(SITE.c.domain == host, PAGE.c.page_type_code == "FRONTIER")
                .where(or_(PAGE.c.depth > depth, and_(PAGE.c.depth == depth, PAGE.c.id > last_id)))
                .order_by(PAGE.c.depth, PAGE.c.id)
                .limit(limit)
            )
            if max_depth > 0:
                q = q.where(PAGE.c.depth <= max_depth)
            return [(u, d or 0, i) for u, d, i in conn.execute(q)]

    def known_urls(self) -> Iterator[str]:
        """Every URL crawldb has a page row for, fetched or not."""
        with self.engine.connect() as conn:
            q = select(PAGE.c.url).execution_options(yield_per=10000)
            yield from conn.execute(q).scalars()

    def frontier(self, max_depth: int = 0) -> Iterator[tuple[str, int]]:
        """FRONTIER rows in breadth-first order: depth, then discovery.

        ``max_depth`` > 0 leaves out the rows a depth-limited crawl must not fetch.
        """
        with self.engine.connect() as conn:
            q = (
                select(PAGE.c.url, PAGE.c.depth)
                .where(PAGE.c.page_type_code == "FRONTIER")
                .order_by(PAGE.c.depth, PAGE.c.id)
            )
            if max_depth > 0:
                q = q.where(PAGE.c.depth <= max_depth)
            for url, depth in conn.execute(q.execution_options(yield_per=5000)):
                yield url, depth or 0


def encode_item(item: Item) -> dict[str, Any]:
    out: dict[str, Any] = {"type": type(item).__name__}
    for k, v in dataclasses.asdict(item).items():
        if isinstance(v, bytes):
            v = {"b64": base64.b64encode(v).decode()}
        elif isinstance(v, datetime):
            v = {"dt": v.isoformat()}
        out[k] = v
    return out


def decode_item(row: dict[str, Any]) -> Item:
    kwargs: dict[str, Any] = {}
    for k, v in row.items():
        if k == "type":
            continue
        if isinstance(v, dict) and "b64" in v:
            v = base64.b64decode(v["b64"])
        elif isinstance(v, dict) and "dt" in v:
            v = datetime.fromisoformat(v["dt"])
        kwargs[k] = v
    return ITEM_TYPES[row["type"]](**kwargs)  # type: ignore[no-any-return]


def spill_files(directory: str | Path) -> list[Path]:
    return sorted(Path(directory).glob(f"{SPILL_PREFIX}*{SPILL_SUFFIX}"))


def replay_spills(directory: str | Path, writer: CrawlWriter) -> int:
    """Load every spill file in ``directory``, oldest first, deleting each once written.

    Raises RuntimeError, keeping the file, when crawldb still cannot be written.
    """
    total = 0
    for path in spill_files(directory):
        n = replay(path, writer)
        path.unlink()
        logger.info("loaded %d items saved in %s when crawldb was unreachable", n, path)
        total += n
    return total


def set_spills_aside(directory: str | Path) -> list[Path]:
    """Rename spill files so they are never loaded (a fresh crawl must not get them)."""
    moved = []
    for path in spill_files(directory):
        target = path.with_name(path.name + ".discarded")
        path.rename(target)
        logger.warning("FRESH_START: %s is not loaded; kept as %s", path, target)
        moved.append(target)
    return moved


def replay(path: str | Path, writer: CrawlWriter) -> int:
    """Load a spill file written by ``CrawlWriter.spill`` into crawldb."""
    with Path(path).open(encoding="utf-8") as fh:
        items = [decode_item(json.loads(line)) for line in fh if line.strip()]
    for item in items:
        writer.add(item)
    if not writer.flush():
        raise RuntimeError(f"crawldb still unreachable; {path} kept")
    return len(items)
