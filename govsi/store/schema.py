"""crawldb's tables, as SQLAlchemy Core ``Table`` objects, and the crawl's id: the standard
tables here, govsi's own in ``pagetables`` and ``crawltables``, all imported from here.

The standard part of the schema (docs/crawldb.md) is shared
with other crawlers' analysis scripts, so its names, types, keys and index names follow
the community's reference DDL exactly. Our additions are marked ``# govsi extension``.

One set of tables serves both back ends: the tables live in schema ``crawldb`` on
PostgreSQL; on SQLite the schema is translated away (``schema_translate_map``) so that
the same unqualified SQL works against either database. Core, not the ORM: every
statement of govsi is set-based, and ``sqlalchemy.orm``'s imports would cost memory in
each of the crawl's processes that write or read crawldb (bench/README, bench.memory).
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    PrimaryKeyConstraint,
    SmallInteger,
    String,
    Table,
    Text,
)
from sqlalchemy.schema import BLANK_SCHEMA

from govsi.store.crawltables import (
    CRAWL_LIMIT,
    CRAWL_META,
    CRAWL_WORKER,
    FEED,
    IP_LEASE,
    crawl_id,
)
from govsi.store.metadata import METADATA, SCHEMA
from govsi.store.pagetables import (
    PAGE_CHANGE,
    PAGE_LSH,
    PAGE_TEXT,
    PAGE_VERSION,
    PAGE_VERSION_CONTENT,
    WARC_CAPTURE,
)

__all__ = [
    "CRAWL_LIMIT",
    "CRAWL_META",
    "CRAWL_WORKER",
    "DATA_TYPE",
    "DEFAULT_CRAWLDB_URL",
    "FEED",
    "IMAGE",
    "IP_LEASE",
    "LINK",
    "METADATA",
    "PAGE",
    "PAGE_CHANGE",
    "PAGE_DATA",
    "PAGE_LSH",
    "PAGE_TEXT",
    "PAGE_TYPE",
    "PAGE_VERSION",
    "PAGE_VERSION_CONTENT",
    "SCHEMA",
    "SITE",
    "STANDARD_TABLES",
    "WARC_CAPTURE",
    "crawl_id",
    "unqualified_metadata",
    "utcnow",
]

logger = logging.getLogger(__name__)

DEFAULT_CRAWLDB_URL = "sqlite:///crawldb.sqlite3"


def utcnow() -> datetime:
    """UTC wall time without tzinfo: the standard columns are ``timestamp`` without zone."""
    return datetime.now(UTC).replace(tzinfo=None)


DATA_TYPE = Table(
    "data_type",
    METADATA,
    Column("code", String(20), nullable=False),
    PrimaryKeyConstraint("code", name="pk_data_type_code"),
)


PAGE_TYPE = Table(
    "page_type",
    METADATA,
    Column("code", String(20), nullable=False),
    PrimaryKeyConstraint("code", name="pk_page_type_code"),
)


SITE = Table(
    "site",
    METADATA,
    Column("id", Integer, autoincrement=True, nullable=False),
    Column("domain", String(500)),
    Column("robots_content", Text),
    Column("sitemap_content", Text),
    # govsi extensions: the address the host resolved to (hosts sharing one share its
    # politeness budget) and the delay used between its requests, in seconds.
    Column("ip_address", String(64)),
    Column("crawl_delay", Float),
    # The HTTP status robots.txt was answered with and when (UTC): with robots_content,
    # the rules, which other workers of the crawl read instead of fetching it again.
    Column("robots_status", Integer),
    Column("robots_fetched_at", DateTime(timezone=False)),
    PrimaryKeyConstraint("id", name="pk_site_id"),
    Index("idx_site_domain", "domain", unique=True),  # govsi extension: one row per host
)


PAGE = Table(
    "page",
    METADATA,
    Column("id", Integer, autoincrement=True, nullable=False),
    Column("site_id", ForeignKey(f"{SCHEMA}.site.id", name="fk_page_site", ondelete="RESTRICT")),
    Column(
        "page_type_code",
        String(20),
        ForeignKey(f"{SCHEMA}.page_type.code", name="fk_page_page_type", ondelete="RESTRICT"),
    ),
    Column("url", String(3000)),
    Column("html_content", Text),
    Column("http_status_code", Integer),
    Column("accessed_time", DateTime(timezone=False)),
    # govsi extensions
    Column("depth", Integer),
    Column("content_type", String(255)),
    # Why a fetch produced no status (DNS failure, timeout, size limit, ...).
    Column("fetch_error", Text),
    # The page said nofollow (meta robots or X-Robots-Tag), so its links were not followed.
    Column("nofollow", Boolean),
    # html_content is the DOM a browser built (RENDER_JS), not the HTML as served.
    Column("rendered", Boolean),
    # Duplicates (govsi.dedup.signature): the hash of the page's main content, its MinHash signature
    # (uint32 values), and for a DUPLICATE the page it copies.
    Column("content_hash", String(64)),
    Column("minhash", LargeBinary),
    Column(
        "duplicate_of",
        ForeignKey(f"{SCHEMA}.page.id", name="fk_page_duplicate_of", ondelete="RESTRICT"),
    ),
    # A near copy (docs/duplicates.md) keeps its content and is flagged: the stored page it
    # resembles most when it was stored, and their estimated Jaccard similarity.
    # (A page's id; no FOREIGN KEY, which SQLite adds only by copying the table.)
    Column("near_duplicate_of", Integer),
    Column("similarity", Float),
    # The key of all a reader sees (title, whole text): an exact copy, stored as a DUPLICATE,
    # has both keys (content_hash, text_hash) of its original.
    Column("text_hash", String(64)),
    # The definition of the main text content_hash and minhash were made by
    # (govsi.text.maintext.VERSION; NULL: before versions, 1); never compared across.
    Column("key_version", SmallInteger),
    # Revisits (docs/stored.md, "History"). The validators as received, sent back verbatim.
    Column("etag", String(1000)),
    Column("last_modified", String(200)),
    # The visit at which the current content (main text, status, type) was first seen.
    Column("changed_time", DateTime(timezone=False)),
    # When the page is due again (NULL: not scheduled, e.g. FRONTIER), and the recent
    # visits its interval is learnt from (govsi/revisit/schedule.py's encoding).
    Column("next_visit", DateTime(timezone=False)),
    Column("revisit_history", Text),
    # A worker's claim on a due page, so that each is revisited once per round.
    Column("revisit_claim", String(200)),
    Column("revisit_claimed_at", DateTime(timezone=False)),
    # The last visit: what it found (govsi.revisit.change.Outcome; NULL before govsi kept
    # it) and when. Unlike accessed_time, a revisit that kept the copy sets it too.
    Column("visit_outcome", String(16)),
    Column("visit_time", DateTime(timezone=False)),
    PrimaryKeyConstraint("id", name="pk_page_id"),
    Index("unq_url_idx", "url", unique=True),
    Index("idx_page_site_id", "site_id"),
    Index("idx_page_page_type_code", "page_type_code"),
    # govsi extension: each host's queue is "its FRONTIER rows by depth, then id".
    Index("idx_page_frontier", "site_id", "page_type_code", "depth", "id"),
    # govsi extension: a page's exact-copy candidates (govsi/store/candidates.py): the HTML
    # pages with its main text's key, and with its copy key too, as index range reads.
    Index("idx_page_copy_keys", "content_hash", "page_type_code", "text_hash"),
    # govsi extension: each host's due revisits, soonest first.
    Index("idx_page_next_visit", "site_id", "next_visit"),
)


PAGE_DATA = Table(
    "page_data",
    METADATA,
    Column("id", Integer, autoincrement=True, nullable=False),
    Column(
        "page_id", ForeignKey(f"{SCHEMA}.page.id", name="fk_page_data_page", ondelete="RESTRICT")
    ),
    Column(
        "data_type_code",
        String(20),
        ForeignKey(f"{SCHEMA}.data_type.code", name="fk_page_data_data_type", ondelete="RESTRICT"),
    ),
    Column("data", LargeBinary),
    # govsi extension: the size as served, kept even when the bytes are not.
    Column("size", BigInteger),
    PrimaryKeyConstraint("id", name="pk_page_data_id"),
    Index("idx_page_data_page_id", "page_id"),
    Index("idx_page_data_data_type_code", "data_type_code"),
)


IMAGE = Table(
    "image",
    METADATA,
    Column("id", Integer, autoincrement=True, nullable=False),
    Column(
        "page_id", ForeignKey(f"{SCHEMA}.page.id", name="fk_image_page_data", ondelete="RESTRICT")
    ),
    Column("filename", String(255)),
    Column("content_type", String(50)),
    Column("data", LargeBinary),
    Column("accessed_time", DateTime(timezone=False)),
    # govsi extensions
    Column("url", String(3000)),
    Column("http_status_code", Integer),
    # Revisits: the bytes' hash (a change is a change of bytes) and the validators.
    Column("content_hash", String(64)),
    Column("etag", String(1000)),
    Column("last_modified", String(200)),
    # The worker revisiting the picture in this round, as on page (on every row of its URL).
    Column("revisit_claim", String(200)),
    Column("revisit_claimed_at", DateTime(timezone=False)),
    PrimaryKeyConstraint("id", name="pk_image_id"),
    Index("idx_image_page_id", "page_id"),
    # govsi extension: one row per (page, image URL); the URL finds earlier downloads,
    # its first row (lowest id) holds the bytes.
    Index("idx_image_page_url", "page_id", "url", unique=True),
    Index("idx_image_url", "url", "id"),
)


LINK = Table(
    "link",
    METADATA,
    Column(
        "from_page",
        ForeignKey(f"{SCHEMA}.page.id", name="fk_link_page", ondelete="RESTRICT"),
        nullable=False,
    ),
    Column(
        "to_page",
        ForeignKey(f"{SCHEMA}.page.id", name="fk_link_page_1", ondelete="RESTRICT"),
        nullable=False,
    ),
    PrimaryKeyConstraint("from_page", "to_page", name="_0"),
    Index("idx_link_from_page", "from_page"),
    Index("idx_link_to_page", "to_page"),
)


STANDARD_TABLES = ("data_type", "page_type", "site", "page", "page_data", "image", "link")


def unqualified_metadata() -> MetaData:
    """The tables with the ``crawldb`` schema taken off, for comparing with a live database.

    Connections make ``crawldb`` their default schema (PostgreSQL's search_path; SQLite has
    no schemas), and reflection reports tables of the default schema without one, so
    Alembic's autogenerate must compare against unqualified tables.
    """
    plain = MetaData()
    for table in METADATA.sorted_tables:
        # schema=None and BLANK_SCHEMA are SQLAlchemy's documented way to drop the schema;
        # its annotations leave them out.
        table.to_metadata(
            plain,
            schema=None,  # type: ignore[arg-type]
            referred_schema_fn=lambda *_: BLANK_SCHEMA,  # type: ignore[arg-type]
        )
    return plain
