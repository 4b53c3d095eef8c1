"""Batched writes of crawl results into crawldb.

``CrawlWriter`` is plain Python over an SQLAlchemy engine (tests drive it directly);
``CrawlStore`` is the Scrapy extension that owns one writer per crawl and flushes it on a
timer and at the end. Items are applied in the order they were added, in one transaction
per batch; a batch that fails is retried, then kept for the next flush, and whatever still
cannot be written when the crawl closes is saved to a JSON-lines file, never dropped.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Iterable
from functools import partial
from pathlib import Path

from sqlalchemy import Connection, Engine, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import InterfaceError, OperationalError, SQLAlchemyError

from govsi.items import (
    DiscoveredPage,
    FeedState,
    FetchedImage,
    FetchedPage,
    Item,
    RobotsFile,
    SiteInfo,
    SitemapFile,
    WarcCapture,
)
from govsi.store.config import StoreConfig
from govsi.store.database import chunks
from govsi.store.feeds import record_feeds
from govsi.store.history import Retention
from govsi.store.hostbudget import read_prices
from govsi.store.images import record_images
from govsi.store.originals import FindOriginals, settle_copies, stored_originals
from govsi.store.pageids import PageIds
from govsi.store.schema import PAGE, SITE, WARC_CAPTURE
from govsi.store.spill import save_spill
from govsi.store.visits import PageWrites, Schedule, read_stored
from govsi.web.urls import host_of

logger = logging.getLogger(__name__)


def item_bytes(item: Item) -> int:
    """About what an item holds in memory, for the writer's buffer and batch limits: its
    stored content (HTML, data, a page's text) and ~100 bytes per link, image or band key."""
    size = 200
    for name in ("html_content", "data", "content", "minhash"):
        value = getattr(item, name, None)
        if value:
            size += len(value)
    text = getattr(item, "text", None)
    if text is not None:
        size += len(text.text) + len(text.title or "")
    for name in ("links", "images", "band_keys"):
        size += 100 * len(getattr(item, name, None) or ())
    return size


def capture_row(page_id: int, capture: WarcCapture) -> dict[str, object]:
    return {
        "page_id": page_id, "warc_file": capture.warc_file, "warc_offset": capture.warc_offset,
        "warc_length": capture.warc_length, "record_id": capture.record_id,
        "record_type": capture.record_type, "captured_at": capture.captured_at,
    }  # fmt: skip


def _first_line(exc: SQLAlchemyError) -> str:
    """The driver's own message, first line (a refused connection, a restart)."""
    text = str(getattr(exc, "orig", None) or exc).strip().splitlines()
    return f"{exc.__class__.__name__}: {text[0][:200] if text else ''}"


SITEMAP_CUT = "\n<!-- cut at SITEMAP_STORE_MAX_BYTES -->\n"


def capped_append(previous: str, text: str, limit: int) -> str | None:
    """``previous + text``, ``text`` cut (with a note saying so) so that the whole stays
    within ``limit`` bytes of UTF-8; None when nothing more fits. 0 = no limit."""
    if limit <= 0:
        return previous + text
    room = limit - len(previous.encode())
    data = text.encode()
    if len(data) <= room:
        return previous + text
    keep = room - len(SITEMAP_CUT.encode())
    if keep <= 0:
        return None
    return previous + data[:keep].decode("utf-8", "ignore") + SITEMAP_CUT


class CrawlWriter:
    def __init__(
        self,
        engine: Engine,
        *,
        store_image_data: bool = True,
        store_binary_data: bool = False,
        retries: int = 3,
        retry_backoff: float = 0.5,
        find_originals: FindOriginals | None = None,
        sitemap_store_max: int = 0,
        revisit_min_interval: float = 24 * 3600,
        revisit_max_interval: float = 30 * 24 * 3600,
        revisit_hub_min_interval: float | None = None,
        page_id_cache: int = 0,
        history: Retention | None = None,
    ) -> None:
        self.engine = engine
        # How much of each page's history is kept (HISTORY_KEEP_VERSIONS, _MONTHS).
        self.history = history or Retention()
        # Each visit's next one (REVISIT_MIN_INTERVAL, REVISIT_MAX_INTERVAL, a hub's
        # REVISIT_HUB_MIN_INTERVAL).
        self.schedule = Schedule(
            revisit_min_interval, revisit_max_interval, revisit_hub_min_interval
        )
        # Changes seen on revisits, by kind (govsi.revisit.change), for the stats.
        self.changes: Counter[str] = Counter()
        # site.sitemap_content never grows past this many bytes (UTF-8), across runs.
        self.sitemap_store_max = sitemap_store_max
        self._sitemaps_full: set[str] = set()
        self.find_originals = find_originals
        # The crawldb's identity, written into spill files (govsi.store.spill).
        self.crawl_id = ""
        self.copies_settled = 0
        self.store_image_data = store_image_data
        self.store_binary_data = store_binary_data
        self.retries = retries
        self.retry_backoff = retry_backoff
        self.pending: list[Item] = []
        # The last write failed: the next failures are logged at DEBUG only.
        self._failing = False
        self._insert = (postgresql if engine.dialect.name == "postgresql" else sqlite).insert
        # Hosts never change id once inserted, and a crawl sees few of them.
        self._site_ids: dict[str, int] = {}
        # Nor do pages; the latest URLs' ids (DB_PAGE_ID_CACHE).
        self.page_ids = PageIds(page_id_cache)

    @classmethod
    def from_config(cls, engine: Engine, config: StoreConfig) -> CrawlWriter:
        """The writer ``config`` describes (the crawl's, and its writer process's)."""
        c = config
        find_originals = None
        if c.duplicate_detection:
            # Copies another process stored first are settled when the batch is written.
            find_originals = partial(stored_originals, threshold=c.near_duplicate_threshold)
        return cls(
            engine,
            store_image_data=c.store_image_data,
            store_binary_data=c.store_binary_data,
            retries=c.write_retries,
            find_originals=find_originals,
            sitemap_store_max=c.sitemap_store_max,
            revisit_min_interval=c.revisit_min_interval,
            revisit_max_interval=c.revisit_max_interval,
            revisit_hub_min_interval=c.revisit_hub_min_interval,
            page_id_cache=c.page_id_cache,
            history=Retention(c.history_keep_versions, c.history_keep_months),
        )

    # -- queueing --------------------------------------------------------------------
    def add(self, item: Item) -> None:
        self.pending.append(item)

    def take(self, max_bytes: int = 0) -> list[Item]:
        """What is pending, in order, as the next batch to write: everything, or with
        ``max_bytes`` the longest prefix within that many ``item_bytes`` (one item at least)."""
        if max_bytes <= 0:
            batch, self.pending = self.pending, []
            return batch
        end, size = 0, 0
        for end, item in enumerate(self.pending, 1):
            size += item_bytes(item)
            if size > max_bytes and end > 1:
                end -= 1
                break
        batch, self.pending = self.pending[:end], self.pending[end:]
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
                self.page_ids.rollback()  # nothing staged but by this transaction
                with self.engine.begin() as conn:
                    settled = self._apply(conn, batch)
                self.page_ids.commit()
                self.copies_settled += settled
                self._failing = False
                return True
            except SQLAlchemyError as exc:
                self._site_ids.clear()  # ids read in a rolled-back transaction may be gone
                # A database that went away is an expected outage: one line says so. Any
                # other failure (a bug, a constraint) keeps its traceback, once.
                away = isinstance(exc, OperationalError | InterfaceError)
                # Said for the first failed write of a run of them: a crawl paused on a
                # full disk, or an outage of hours, retries every flush.
                logger.log(
                    logging.DEBUG if self._failing else logging.WARNING,
                    "crawldb write of %d items failed (attempt %d/%d): %s",
                    len(batch),
                    attempt + 1,
                    self.retries + 1,
                    _first_line(exc) if away else exc.__class__.__name__,
                    exc_info=attempt == self.retries and not away,
                )
                if attempt < self.retries:
                    time.sleep(self.retry_backoff * 2**attempt)
        level = logging.DEBUG if self._failing else logging.ERROR
        logger.log(level, "crawldb unreachable: keeping %d items for the next flush", len(batch))
        self._failing = True
        return False

    def flush(self) -> bool:
        """Write everything pending now; True when nothing is left pending."""
        batch = self.take()
        if self.write(batch):
            return True
        self.putback(batch)
        return False

    def pin_address(self, host: str, ip: str) -> str:
        """The address the whole crawl uses for ``host``: the first one any worker stored
        in ``site.ip_address``, else ``ip`` (stored now). One statement decides, so two
        workers whose DNS answers differ (round-robin) end with the same address."""
        with self.engine.begin() as conn:
            site_id = self._ensure_sites(conn, [host])[host]
            conn.execute(
                update(SITE)
                .where(SITE.c.id == site_id, SITE.c.ip_address.is_(None))
                .values(ip_address=ip)
            )
            stored = conn.execute(select(SITE.c.ip_address).where(SITE.c.id == site_id))
            return str(stored.scalar_one() or ip)

    def spill(self, directory: str | Path, stamp: int = 0) -> Path | None:
        """Save what could not be written, so a later ``replay`` can load it."""
        if not self.pending:
            return None
        path = save_spill(directory, self.pending, self.crawl_id, stamp)
        self.pending = []
        return path

    # -- the batch ---------------------------------------------------------------------
    def _apply(self, conn: Connection, batch: list[Item]) -> int:
        """Write ``batch``; the number of would-be originals that turned out copies."""
        batch, settled = settle_copies(conn, batch, self.find_originals)
        depth_of: dict[str, int] = {}
        for item in batch:
            if isinstance(item, DiscoveredPage | WarcCapture):
                depth_of.setdefault(item.url, item.depth)
            elif isinstance(item, FetchedPage):
                depth_of.setdefault(item.url, item.depth)
                for link in item.links:
                    depth_of.setdefault(link, item.link_depth)
                for original in (item.duplicate_of, item.near_duplicate_of):
                    if original:
                        depth_of.setdefault(original, item.depth)
        # URLs whose rows were written before need no row, nor their host a site.
        page_ids = self.page_ids.known(depth_of)
        new = {u: d for u, d in depth_of.items() if u not in page_ids} if page_ids else depth_of
        hosts = {host_of(u) for u in new}
        hosts.update(
            i.host for i in batch if isinstance(i, RobotsFile | SiteInfo | SitemapFile | FeedState)
        )
        site_ids = self._ensure_sites(conn, hosts)
        written, inserted = self._ensure_pages(conn, new, site_ids)
        self.page_ids.stage(written)
        page_ids.update(written)

        fetched = [page_ids[i.url] for i in batch if isinstance(i, FetchedPage)]
        stored = read_stored(conn, fetched)
        # Hosts' fitted revisit prices, for the next visits the batch's pages are given.
        prices = read_prices(conn, {host_of(i.url) for i in batch if isinstance(i, FetchedPage)})
        pages = PageWrites(
            stored, self.schedule, self.store_binary_data, self.history, prices=prices
        )
        # A visit's new links, which steer its next (a hub's): URLs crawldb had no row of.
        for item in batch:
            if isinstance(item, FetchedPage) and inserted:
                pages.new_links[page_ids[item.url]] = len(inserted.intersection(item.links))
        image_updates: dict[str, FetchedImage] = {}
        robots: dict[str, RobotsFile] = {}
        site_info: dict[str, SiteInfo] = {}
        sitemap_docs: dict[str, list[SitemapFile]] = {}
        for item in batch:
            if isinstance(item, FetchedPage):
                pages.add(page_ids[item.url], item, page_ids.__getitem__)
            elif isinstance(item, FetchedImage):
                image_updates[item.url] = item
            elif isinstance(item, RobotsFile):
                robots[item.host] = item
            elif isinstance(item, SiteInfo):
                site_info[item.host] = item
            elif isinstance(item, SitemapFile):
                sitemap_docs.setdefault(item.host, []).append(item)

        pages.execute(conn, self._insert)
        self.changes.update(pages.changes)
        captures = [capture_row(page_ids[i.url], i) for i in batch if isinstance(i, WarcCapture)]
        if captures:
            # A batch written again (a retry, a spill replayed) adds no row twice.
            insert = self._insert(WARC_CAPTURE).on_conflict_do_nothing(index_elements=["record_id"])
            conn.execute(insert, captures)
        if image_updates:
            record_images(conn, list(image_updates.values()), self.store_image_data)
        for host, rf in robots.items():
            conn.execute(
                update(SITE)
                .where(SITE.c.id == site_ids[host])
                .values(
                    robots_content=rf.content,
                    robots_status=rf.status,
                    robots_fetched_at=rf.fetched_at,
                )
            )
        for host, docs in sitemap_docs.items():
            # Documents are appended, each after a line naming where it came from.
            text = "".join(f"<!-- {d.url} -->\n{d.content}\n" for d in docs)
            old = conn.execute(select(SITE.c.sitemap_content).where(SITE.c.id == site_ids[host]))
            previous = old.scalar() or ""
            content = capped_append(previous, text, self.sitemap_store_max)
            if content is None:
                if host not in self._sitemaps_full:
                    self._sitemaps_full.add(host)
                    logger.info("%s: site.sitemap_content is at SITEMAP_STORE_MAX_BYTES (%d); "
                                "further sitemap documents are read, not stored",
                                host, self.sitemap_store_max)  # fmt: skip
                continue
            conn.execute(
                update(SITE).where(SITE.c.id == site_ids[host]).values(sitemap_content=content)
            )
        feeds = [i for i in batch if isinstance(i, FeedState)]
        if feeds:
            record_feeds(conn, feeds, site_ids, self._insert)
        for host, info in site_info.items():
            conn.execute(
                update(SITE)
                .where(SITE.c.id == site_ids[host])
                .values(ip_address=info.ip_address, crawl_delay=info.crawl_delay)
            )
        return settled

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
    ) -> tuple[dict[str, int], set[str]]:
        """The ids of ``depth_of``'s URLs, rows added where there were none; and those."""
        ids: dict[str, int] = {}
        if not depth_of:
            return ids, set()
        inserted: set[str] = set()
        # The rows a statement added come back from it (RETURNING): only the URLs crawldb
        # already had are read afterwards.
        stmt = (
            self._insert(PAGE)
            .on_conflict_do_nothing(index_elements=["url"])
            .returning(PAGE.c.url, PAGE.c.id)
        )
        # A chunk's rows at a time: a batch of link-heavy pages holds ~100 000 URLs, whose
        # rows all at once cost tens of megabytes beside the batch.
        for part in chunks(list(depth_of)):
            rows = [
                {"url": u, "site_id": site_ids[host_of(u)], "page_type_code": "FRONTIER",
                 "depth": depth_of[u]}
                for u in part
            ]  # fmt: skip
            for url, pid in conn.execute(stmt, rows):
                ids[url] = pid
                inserted.add(url)
            known = [u for u in part if u not in ids]
            if known:
                found = conn.execute(select(PAGE.c.url, PAGE.c.id).where(PAGE.c.url.in_(known)))
                ids.update({url: pid for url, pid in found})
        return ids, inserted
