"""crawldb's tables, as SQLAlchemy Core ``Table`` objects, and the crawl's id.

The standard part of the schema (docs/crawldb.md) is shared
with other crawlers' analysis scripts, so its names, types, keys and index names follow
the community's reference DDL exactly. Our additions are marked ``# govsi extension``.

One set of tables serves both back ends: the tables live in schema ``crawldb`` on
PostgreSQL; on SQLite the schema is translated away (``schema_translate_map``) so that
the same unqualified SQL works against either database. Core, not the ORM: every
statement of govsi is set-based, and ``sqlalchemy.orm`` would cost ~6 MB of imports in
each of the crawl's processes that write or read crawldb.
"""

from __future__ import annotations

import logging
import uuid
from datetime import UTC, datetime

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    DateTime,
    Engine,
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
    select,
)
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.schema import BLANK_SCHEMA

logger = logging.getLogger(__name__)

SCHEMA = "crawldb"
DEFAULT_CRAWLDB_URL = "sqlite:///crawldb.sqlite3"
METADATA = MetaData(schema=SCHEMA)


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


# govsi extension: the HTML of a page's earlier versions, each distinct content once per
# page (govsi/store/history.py): a page flipping between two contents holds two rows.
PAGE_VERSION_CONTENT = Table(
    "page_version_content",
    METADATA,
    Column("id", Integer, autoincrement=True, nullable=False),
    Column(
        "page_id",
        ForeignKey(f"{SCHEMA}.page.id", name="fk_page_version_content_page", ondelete="RESTRICT"),
        nullable=False,
    ),
    # SHA-256 (hex) of the HTML's UTF-8 bytes, and their number.
    Column("html_hash", String(64), nullable=False),
    Column("html_content", Text, nullable=False),
    Column("size", Integer, nullable=False),
    PrimaryKeyConstraint("id", name="pk_page_version_content_id"),
    Index("idx_page_version_content_page_hash", "page_id", "html_hash", unique=True),
)


# govsi extension: one row per earlier version of a page that a change replaced (of
# main content, status or type) and that retention keeps (HISTORY_KEEP_VERSIONS,
# HISTORY_KEEP_MONTHS); ``page`` always holds the current one.
PAGE_VERSION = Table(
    "page_version",
    METADATA,
    Column("id", Integer, autoincrement=True, nullable=False),
    Column(
        "page_id",
        ForeignKey(f"{SCHEMA}.page.id", name="fk_page_version_page", ondelete="RESTRICT"),
        nullable=False,
    ),
    # The replaced version as it was: its last visit, status and content key.
    Column("accessed_time", DateTime(timezone=False)),
    Column("http_status_code", Integer),
    Column("content_hash", String(64)),
    # govsi extensions: its type, and when it was first seen.
    Column("page_type_code", String(20)),
    Column("changed_time", DateTime(timezone=False)),
    # Its HTML, shared with the page's other versions of the same bytes (NULL for a
    # document, whose bytes are not copied again: content_hash names them; or no HTML).
    Column(
        "content_id",
        ForeignKey(
            f"{SCHEMA}.page_version_content.id",
            name="fk_page_version_content",
            ondelete="RESTRICT",
        ),
    ),
    PrimaryKeyConstraint("id", name="pk_page_version_id"),
    Index("idx_page_version_page_id", "page_id", "accessed_time"),
)


# govsi extension: where each capture of a page lies in the WARC archive (WARC_DIR):
# its response or revisit record, and a rendered page's DOM (conversion); one row per
# record, so a page revisited in several rounds has several.
WARC_CAPTURE = Table(
    "warc_capture",
    METADATA,
    Column("id", Integer, autoincrement=True, nullable=False),
    Column(
        "page_id",
        ForeignKey(f"{SCHEMA}.page.id", name="fk_warc_capture_page", ondelete="RESTRICT"),
        nullable=False,
    ),
    Column("warc_file", String(255), nullable=False),
    Column("warc_offset", BigInteger, nullable=False),
    Column("warc_length", BigInteger, nullable=False),
    Column("record_id", String(100), nullable=False),
    Column("record_type", String(20), nullable=False),
    Column("captured_at", DateTime(timezone=False)),
    PrimaryKeyConstraint("id", name="pk_warc_capture_id"),
    Index("idx_warc_capture_page_id", "page_id", "captured_at"),
    Index("idx_warc_capture_record_id", "record_id", unique=True),
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


# govsi extension: LSH band keys of each original page's signature, so that candidate
# near copies are found by an indexed lookup rather than by comparing with every page.
PAGE_LSH = Table(
    "page_lsh",
    METADATA,
    Column("band_key", BigInteger, nullable=False),
    Column(
        "page_id",
        ForeignKey(f"{SCHEMA}.page.id", name="fk_page_lsh_page", ondelete="RESTRICT"),
        nullable=False,
    ),
    PrimaryKeyConstraint("band_key", "page_id", name="pk_page_lsh"),
)


# govsi extension: the text of a page (TEXT_EXTRACTION), for search and SQL: an HTML
# page's main text (without its site's template) or a document's text, its title,
# language and own date, and how reading it ended (``status``, ``reason``). One row per
# page, replaced when a revisit finds a new version; none for duplicates, errors and
# pages not fetched. ``extracted_at`` is when the row was written: what an index
# updated since then has to read again.
PAGE_TEXT = Table(
    "page_text",
    METADATA,
    Column(
        "page_id",
        ForeignKey(f"{SCHEMA}.page.id", name="fk_page_text_page", ondelete="RESTRICT"),
        nullable=False,
    ),
    # HTML or the document's type (PDF, DOC, DOCX, PPT, PPTX)
    Column("kind", String(20), nullable=False),
    # ok, empty, encrypted, failed, timeout or memory (govsi/text/limits.py)
    Column("status", String(20), nullable=False),
    Column("reason", Text),
    Column("title", Text),
    Column("language", String(8)),
    Column("text", Text),
    Column("truncated", Boolean, nullable=False, default=False),
    Column("document_date", DateTime(timezone=False)),
    Column("extracted_at", DateTime(timezone=False), nullable=False),
    PrimaryKeyConstraint("page_id", name="pk_page_text"),
    Index("idx_page_text_extracted_at", "extracted_at"),
)


# govsi extension: which crawler process serves an IP address (and so every host on
# it) now, until when, and when a request last reached that address. Several processes
# on one crawldb take addresses from here; see govsi/sharing/leases.py.
IP_LEASE = Table(
    "ip_lease",
    METADATA,
    Column("ip", String(64), primary_key=True),
    Column("worker", String(200), nullable=False),
    # Seconds since the epoch on the database's clock: the one clock all workers share.
    Column("expires_at", Float, nullable=False),
    Column("last_arrival", Float),
    # Given back by its worker (expires_at is then the moment it was given back).
    Column("released", Boolean, nullable=False, default=False),
    # When another worker last asked for it in vain: its holder gives back addresses
    # beyond its share of the work when others want them.
    Column("wanted_at", Float),
)


# govsi extension: the crawler processes that worked on this crawldb (PostgreSQL), one
# row per process run, with its figures as of its last heartbeat. Alive: ``ended_at`` is
# NULL and ``seen_at`` within LEASE_TTL. Times are seconds since the epoch, database clock.
CRAWL_WORKER = Table(
    "crawl_worker",
    METADATA,
    Column("worker", String(200), primary_key=True),
    Column("seen_at", Float, nullable=False),
    # The scrapyd job it ran as (the spider's ``_job`` argument), if any.
    Column("job", String(200)),
    Column("started_at", Float),
    Column("ended_at", Float),
    # Responses it turned into page rows, of them fetch failures, and ERROR log lines.
    Column("pages", Integer),
    Column("fetch_errors", Integer),
    Column("log_errors", Integer),
    # IP addresses it holds a lease on, and the hosts on them it knows.
    Column("addresses", Integer),
    Column("hosts", Integer),
)


# govsi extension: the feeds (RSS, Atom) and sitemaps the crawl polls, each on its own
# interval (FEED_POLL_INTERVAL, SITEMAP_POLL_INTERVAL) with a conditional request from its
# validators (``govsi.spiders.feeding``): where it was first found (a page declaring it, or
# robots.txt), its last poll's time, status (NULL: no response; ``poll_error`` says why)
# and entries (read, and new to the crawl), and when it is polled next.
FEED = Table(
    "feed",
    METADATA,
    Column("id", Integer, autoincrement=True, nullable=False),
    Column("site_id", ForeignKey(f"{SCHEMA}.site.id", name="fk_feed_site", ondelete="RESTRICT")),
    Column("url", String(3000), nullable=False),
    Column("kind", String(10), nullable=False),  # items.FeedKind: feed or sitemap
    Column("found_on", String(3000)),
    Column("found_at", DateTime(timezone=False)),
    Column("etag", String(1000)),
    Column("last_modified", String(200)),
    Column("polled_at", DateTime(timezone=False)),
    Column("poll_status", Integer),
    Column("poll_error", Text),
    Column("entries", Integer),
    Column("new_entries", Integer),
    Column("next_poll", DateTime(timezone=False)),
    # Failed polls in a row (0 after a success): the next poll backs off by them.
    Column("failures", Integer, nullable=False, server_default="0"),
    # items.FeedStatus: polled (active), parked (gone), moved (to moved_to), unlisted.
    Column("state", String(10), nullable=False, server_default="active"),
    Column("moved_to", String(3000)),
    # When a page or robots.txt last named it: forgotten FEED_FORGET_AFTER later.
    Column("last_seen", DateTime(timezone=False)),
    PrimaryKeyConstraint("id", name="pk_feed_id"),
    Index("idx_feed_url", "url", unique=True),
    Index("idx_feed_next_poll", "next_poll"),
)


# govsi extension: a limit one crawler run reached, as its stat (``govsi/budget/...``,
# ``govsi/robots/refused/...``, the reactor's longest stall, ...) and the stat's value when
# the run ended (``govsi.store.limits``); ``scrapy report`` shows them.
CRAWL_LIMIT = Table(
    "crawl_limit",
    METADATA,
    Column("run", String(200), primary_key=True),
    Column("name", String(200), primary_key=True),
    Column("value", Float, nullable=False),
    Column("recorded_at", DateTime(timezone=False)),
)


# govsi extension: facts about the crawl this crawldb holds. ``crawl_id`` (a UUID
# made by the first run) names it, so that a spill file is loaded only into the crawldb
# it was written for.
CRAWL_META = Table(
    "crawl_meta",
    METADATA,
    Column("key", String(50), primary_key=True),
    Column("value", String(200), nullable=False),
)


def crawl_id(engine: Engine) -> str:
    """This crawldb's crawl id, made on first use; every process on it reads the same."""
    table = CRAWL_META
    with engine.begin() as conn:
        insert = (sqlite_insert if engine.dialect.name == "sqlite" else pg_insert)(table)
        conn.execute(
            insert.values(key="crawl_id", value=str(uuid.uuid4())).on_conflict_do_nothing()
        )
        value = conn.execute(select(table.c.value).where(table.c.key == "crawl_id")).scalar_one()
    return str(value)


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
