"""What ``CrawlStore`` reads from settings, as plain values: ``CrawlStore.from_crawler`` reads
them once, and a test builds a ``StoreConfig`` directly."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # crawldb's writer process imports this module, and no Scrapy
    from scrapy.settings import BaseSettings


@dataclass(frozen=True)
class DuplicateConfig:
    """What duplicate detection reads from settings, read once: the spider's check
    (``govsi.copies``) and the store's settling of copies stored at once
    (``govsi.store.originals``) must agree on what a copy is. Here, in the lower package,
    so that both can read it."""

    enabled: bool  # DUPLICATE_DETECTION
    threshold: float  # NEAR_DUPLICATE_THRESHOLD: estimated Jaccard similarity of a near copy
    num_perm: int  # MINHASH_PERMUTATIONS
    shingle_size: int  # SHINGLE_SIZE

    @classmethod
    def from_settings(cls, s: BaseSettings) -> DuplicateConfig:
        return cls(
            enabled=s.getbool("DUPLICATE_DETECTION"),
            threshold=s.getfloat("NEAR_DUPLICATE_THRESHOLD"),
            num_perm=s.getint("MINHASH_PERMUTATIONS"),
            shingle_size=s.getint("SHINGLE_SIZE"),
        )


@dataclass(frozen=True)
class StoreConfig:
    crawldb_url: str | None  # CRAWLDB_URL (None or "": the SQLite default)
    connect_timeout: float  # DB_CONNECT_TIMEOUT
    statement_timeout: float  # DB_STATEMENT_TIMEOUT
    keepalives_idle: int  # DB_KEEPALIVES_IDLE
    duplicate_detection: bool  # DUPLICATE_DETECTION
    near_duplicate_threshold: float  # NEAR_DUPLICATE_THRESHOLD
    store_image_data: bool  # STORE_IMAGE_DATA
    store_binary_data: bool  # STORE_BINARY_DATA
    write_retries: int  # DB_WRITE_RETRIES
    batch_size: int  # DB_BATCH_SIZE
    flush_interval: float  # DB_FLUSH_INTERVAL
    spill_dir: str  # DB_SPILL_DIR ("": beside an SQLite crawldb, else a per-user folder)
    fresh_start: bool  # FRESH_START
    buffer_max_items: int  # DB_BUFFER_MAX_ITEMS
    buffer_max_bytes: int  # DB_BUFFER_MAX_BYTES
    batch_max_bytes: int = 0  # DB_BATCH_MAX_BYTES (0 = everything pending)
    spill_max_bytes: int = 0  # DB_SPILL_MAX_BYTES (0 = no limit)
    sitemap_store_max: int = 0  # SITEMAP_STORE_MAX_BYTES: site.sitemap_content (0 = no limit)
    # REVISIT_MIN_INTERVAL, REVISIT_MAX_INTERVAL: bounds of each visit's next_visit (seconds)
    revisit_min_interval: float = 24 * 3600
    revisit_max_interval: float = 30 * 24 * 3600
    revisit_hub_min_interval: float = 3600  # REVISIT_HUB_MIN_INTERVAL: a hub's shortest
    page_id_cache: int = 0  # DB_PAGE_ID_CACHE
    # HISTORY_KEEP_VERSIONS, HISTORY_KEEP_MONTHS: each page's earlier versions kept
    history_keep_versions: int = 10
    history_keep_months: int = 24
    writer_process: bool = False  # DB_WRITER_PROCESS

    @classmethod
    def from_settings(cls, s: BaseSettings) -> StoreConfig:
        # Read as the spider reads them: both must agree on what a copy is.
        duplicates = DuplicateConfig.from_settings(s)
        return cls(
            crawldb_url=s.get("CRAWLDB_URL"),
            connect_timeout=s.getfloat("DB_CONNECT_TIMEOUT"),
            statement_timeout=s.getfloat("DB_STATEMENT_TIMEOUT"),
            keepalives_idle=s.getint("DB_KEEPALIVES_IDLE"),
            duplicate_detection=duplicates.enabled,
            near_duplicate_threshold=duplicates.threshold,
            store_image_data=s.getbool("STORE_IMAGE_DATA"),
            store_binary_data=s.getbool("STORE_BINARY_DATA"),
            write_retries=s.getint("DB_WRITE_RETRIES"),
            batch_size=s.getint("DB_BATCH_SIZE"),
            flush_interval=s.getfloat("DB_FLUSH_INTERVAL"),
            spill_dir=s.get("DB_SPILL_DIR") or "",
            fresh_start=s.getbool("FRESH_START"),
            buffer_max_items=s.getint("DB_BUFFER_MAX_ITEMS"),
            buffer_max_bytes=s.getint("DB_BUFFER_MAX_BYTES"),
            batch_max_bytes=s.getint("DB_BATCH_MAX_BYTES"),
            spill_max_bytes=s.getint("DB_SPILL_MAX_BYTES"),
            sitemap_store_max=s.getint("SITEMAP_STORE_MAX_BYTES"),
            revisit_min_interval=s.getfloat("REVISIT_MIN_INTERVAL"),
            revisit_max_interval=s.getfloat("REVISIT_MAX_INTERVAL"),
            revisit_hub_min_interval=s.getfloat("REVISIT_HUB_MIN_INTERVAL"),
            page_id_cache=s.getint("DB_PAGE_ID_CACHE"),
            history_keep_versions=s.getint("HISTORY_KEEP_VERSIONS"),
            history_keep_months=s.getint("HISTORY_KEEP_MONTHS"),
            writer_process=s.getbool("DB_WRITER_PROCESS"),
        )
