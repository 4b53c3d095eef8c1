"""crawldb: the typed ORM models, the engine and schema set-up.

The standard part of the schema (docs/crawldb.md) is shared
with other crawlers' analysis scripts, so its names, types, keys and index names follow
the community's reference DDL exactly. Our additions are marked ``# govsi extension``.

One set of models serves both back ends: the tables live in schema ``crawldb`` on
PostgreSQL; on SQLite the schema is translated away (``schema_translate_map``) so that
the same unqualified SQL works against either database.
"""

from __future__ import annotations

import logging
import uuid
from datetime import UTC, datetime
from typing import cast

from sqlalchemy import (
    BigInteger,
    Boolean,
    DateTime,
    Engine,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    PrimaryKeyConstraint,
    String,
    Table,
    Text,
    select,
)
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
from sqlalchemy.schema import BLANK_SCHEMA

from govsi import items
from govsi.web import contenttypes

logger = logging.getLogger(__name__)

SCHEMA = "crawldb"
DEFAULT_CRAWLDB_URL = "sqlite:///crawldb.sqlite3"


def utcnow() -> datetime:
    """UTC wall time without tzinfo: the standard columns are ``timestamp`` without zone."""
    return datetime.now(UTC).replace(tzinfo=None)


class Base(DeclarativeBase):
    pass


class DataType(Base):
    __tablename__ = "data_type"
    __table_args__ = (PrimaryKeyConstraint("code", name="pk_data_type_code"), {"schema": SCHEMA})

    code: Mapped[str] = mapped_column(String(20), nullable=False)


class PageType(Base):
    __tablename__ = "page_type"
    __table_args__ = (PrimaryKeyConstraint("code", name="pk_page_type_code"), {"schema": SCHEMA})

    code: Mapped[str] = mapped_column(String(20), nullable=False)


class Site(Base):
    __tablename__ = "site"
    __table_args__ = (
        PrimaryKeyConstraint("id", name="pk_site_id"),
        Index("idx_site_domain", "domain", unique=True),  # govsi extension: one row per host
        {"schema": SCHEMA},
    )

    id: Mapped[int] = mapped_column(Integer, autoincrement=True)
    domain: Mapped[str | None] = mapped_column(String(500))
    robots_content: Mapped[str | None] = mapped_column(Text)
    sitemap_content: Mapped[str | None] = mapped_column(Text)
    # govsi extensions: the address the host resolved to (hosts sharing one share its
    # politeness budget) and the delay used between its requests, in seconds.
    ip_address: Mapped[str | None] = mapped_column(String(64))
    crawl_delay: Mapped[float | None] = mapped_column(Float)
    # The HTTP status robots.txt was answered with and when (UTC): with robots_content,
    # the rules, which other workers of the crawl read instead of fetching it again.
    robots_status: Mapped[int | None] = mapped_column(Integer)
    robots_fetched_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=False))


class Page(Base):
    __tablename__ = "page"
    __table_args__ = (
        PrimaryKeyConstraint("id", name="pk_page_id"),
        Index("unq_url_idx", "url", unique=True),
        Index("idx_page_site_id", "site_id"),
        Index("idx_page_page_type_code", "page_type_code"),
        # govsi extension: each host's queue is "its FRONTIER rows by depth, then id".
        Index("idx_page_frontier", "site_id", "page_type_code", "depth", "id"),
        Index("idx_page_content_hash", "content_hash"),
        # govsi extension: each host's due revisits, soonest first.
        Index("idx_page_next_visit", "site_id", "next_visit"),
        {"schema": SCHEMA},
    )

    id: Mapped[int] = mapped_column(Integer, autoincrement=True)
    site_id: Mapped[int | None] = mapped_column(
        ForeignKey(f"{SCHEMA}.site.id", name="fk_page_site", ondelete="RESTRICT")
    )
    page_type_code: Mapped[items.PageType | None] = mapped_column(
        String(20),
        ForeignKey(f"{SCHEMA}.page_type.code", name="fk_page_page_type", ondelete="RESTRICT"),
    )
    url: Mapped[str | None] = mapped_column(String(3000))
    html_content: Mapped[str | None] = mapped_column(Text)
    http_status_code: Mapped[int | None] = mapped_column(Integer)
    accessed_time: Mapped[datetime | None] = mapped_column(DateTime(timezone=False))
    # govsi extensions
    depth: Mapped[int | None] = mapped_column(Integer)
    content_type: Mapped[str | None] = mapped_column(String(255))
    # Why a fetch produced no status (DNS failure, timeout, size limit, ...).
    fetch_error: Mapped[str | None] = mapped_column(Text)
    # The page said nofollow (meta robots or X-Robots-Tag), so its links were not followed.
    nofollow: Mapped[bool | None] = mapped_column(Boolean)
    # html_content is the DOM a browser built (RENDER_JS), not the HTML as served.
    rendered: Mapped[bool | None] = mapped_column(Boolean)
    # Duplicates (govsi.dedup.signature): the hash of the page's main content, its MinHash signature
    # (uint32 values), and for a DUPLICATE the page it copies.
    content_hash: Mapped[str | None] = mapped_column(String(64))
    minhash: Mapped[bytes | None] = mapped_column(LargeBinary)
    duplicate_of: Mapped[int | None] = mapped_column(
        ForeignKey(f"{SCHEMA}.page.id", name="fk_page_duplicate_of", ondelete="RESTRICT")
    )
    # Revisits (docs/stored.md, "History"). The validators as received, sent back verbatim.
    etag: Mapped[str | None] = mapped_column(String(1000))
    last_modified: Mapped[str | None] = mapped_column(String(200))
    # The visit at which the current content (main text, status, type) was first seen.
    changed_time: Mapped[datetime | None] = mapped_column(DateTime(timezone=False))
    # When the page is due again (NULL: not scheduled, e.g. FRONTIER), and the recent
    # visits its interval is learnt from (govsi/revisit/schedule.py's encoding).
    next_visit: Mapped[datetime | None] = mapped_column(DateTime(timezone=False))
    revisit_history: Mapped[str | None] = mapped_column(Text)
    # A worker's claim on a due page, so that each is revisited once per round.
    revisit_claim: Mapped[str | None] = mapped_column(String(200))
    revisit_claimed_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=False))
    # The last visit: what it found (govsi.revisit.change.Outcome; NULL before govsi kept
    # it) and when. Unlike accessed_time, a revisit that kept the copy sets it too.
    visit_outcome: Mapped[str | None] = mapped_column(String(16))
    visit_time: Mapped[datetime | None] = mapped_column(DateTime(timezone=False))


class PageData(Base):
    __tablename__ = "page_data"
    __table_args__ = (
        PrimaryKeyConstraint("id", name="pk_page_data_id"),
        Index("idx_page_data_page_id", "page_id"),
        Index("idx_page_data_data_type_code", "data_type_code"),
        {"schema": SCHEMA},
    )

    id: Mapped[int] = mapped_column(Integer, autoincrement=True)
    page_id: Mapped[int | None] = mapped_column(
        ForeignKey(f"{SCHEMA}.page.id", name="fk_page_data_page", ondelete="RESTRICT")
    )
    data_type_code: Mapped[contenttypes.DocumentType | None] = mapped_column(
        String(20),
        ForeignKey(f"{SCHEMA}.data_type.code", name="fk_page_data_data_type", ondelete="RESTRICT"),
    )
    data: Mapped[bytes | None] = mapped_column(LargeBinary)
    # govsi extension: the size as served, kept even when the bytes are not.
    size: Mapped[int | None] = mapped_column(BigInteger)


class Image(Base):
    __tablename__ = "image"
    __table_args__ = (
        PrimaryKeyConstraint("id", name="pk_image_id"),
        Index("idx_image_page_id", "page_id"),
        # govsi extension: one row per (page, image URL); the URL finds earlier downloads,
        # its first row (lowest id) holds the bytes.
        Index("idx_image_page_url", "page_id", "url", unique=True),
        Index("idx_image_url", "url", "id"),
        {"schema": SCHEMA},
    )

    id: Mapped[int] = mapped_column(Integer, autoincrement=True)
    page_id: Mapped[int | None] = mapped_column(
        ForeignKey(f"{SCHEMA}.page.id", name="fk_image_page_data", ondelete="RESTRICT")
    )
    filename: Mapped[str | None] = mapped_column(String(255))
    content_type: Mapped[str | None] = mapped_column(String(50))
    data: Mapped[bytes | None] = mapped_column(LargeBinary)
    accessed_time: Mapped[datetime | None] = mapped_column(DateTime(timezone=False))
    # govsi extensions
    url: Mapped[str | None] = mapped_column(String(3000))
    http_status_code: Mapped[int | None] = mapped_column(Integer)
    # Revisits: the bytes' hash (a change is a change of bytes) and the validators.
    content_hash: Mapped[str | None] = mapped_column(String(64))
    etag: Mapped[str | None] = mapped_column(String(1000))
    last_modified: Mapped[str | None] = mapped_column(String(200))
    # The worker revisiting the picture in this round, as on page (on every row of its URL).
    revisit_claim: Mapped[str | None] = mapped_column(String(200))
    revisit_claimed_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=False))


class PageVersion(Base):
    """govsi extension: one row per earlier version of a page that a change replaced (of
    main content, status or type); ``page`` always holds the current one."""

    __tablename__ = "page_version"
    __table_args__ = (
        PrimaryKeyConstraint("id", name="pk_page_version_id"),
        Index("idx_page_version_page_id", "page_id", "accessed_time"),
        {"schema": SCHEMA},
    )

    id: Mapped[int] = mapped_column(Integer, autoincrement=True)
    page_id: Mapped[int] = mapped_column(
        ForeignKey(f"{SCHEMA}.page.id", name="fk_page_version_page", ondelete="RESTRICT"),
        nullable=False,
    )
    # The replaced version as it was: its last visit, status and content key; its HTML
    # (NULL for documents, whose bytes are not copied again: content_hash names them).
    accessed_time: Mapped[datetime | None] = mapped_column(DateTime(timezone=False))
    http_status_code: Mapped[int | None] = mapped_column(Integer)
    content_hash: Mapped[str | None] = mapped_column(String(64))
    html_content: Mapped[str | None] = mapped_column(Text)
    # govsi extensions: its type, and when it was first seen.
    page_type_code: Mapped[str | None] = mapped_column(String(20))
    changed_time: Mapped[datetime | None] = mapped_column(DateTime(timezone=False))


class WarcCaptureRow(Base):
    """govsi extension: where each capture of a page lies in the WARC archive (WARC_DIR):
    its response or revisit record, and a rendered page's DOM (conversion); one row per
    record, so a page revisited in several rounds has several."""

    __tablename__ = "warc_capture"
    __table_args__ = (
        PrimaryKeyConstraint("id", name="pk_warc_capture_id"),
        Index("idx_warc_capture_page_id", "page_id", "captured_at"),
        Index("idx_warc_capture_record_id", "record_id", unique=True),
        {"schema": SCHEMA},
    )

    id: Mapped[int] = mapped_column(Integer, autoincrement=True)
    page_id: Mapped[int] = mapped_column(
        ForeignKey(f"{SCHEMA}.page.id", name="fk_warc_capture_page", ondelete="RESTRICT"),
        nullable=False,
    )
    warc_file: Mapped[str] = mapped_column(String(255), nullable=False)
    warc_offset: Mapped[int] = mapped_column(BigInteger, nullable=False)
    warc_length: Mapped[int] = mapped_column(BigInteger, nullable=False)
    record_id: Mapped[str] = mapped_column(String(100), nullable=False)
    record_type: Mapped[str] = mapped_column(String(20), nullable=False)
    captured_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=False))


class Link(Base):
    __tablename__ = "link"
    __table_args__ = (
        PrimaryKeyConstraint("from_page", "to_page", name="_0"),
        Index("idx_link_from_page", "from_page"),
        Index("idx_link_to_page", "to_page"),
        {"schema": SCHEMA},
    )

    from_page: Mapped[int] = mapped_column(
        ForeignKey(f"{SCHEMA}.page.id", name="fk_link_page", ondelete="RESTRICT"), nullable=False
    )
    to_page: Mapped[int] = mapped_column(
        ForeignKey(f"{SCHEMA}.page.id", name="fk_link_page_1", ondelete="RESTRICT"), nullable=False
    )


class PageLsh(Base):
    """govsi extension: LSH band keys of each original page's signature, so that candidate
    near copies are found by an indexed lookup rather than by comparing with every page."""

    __tablename__ = "page_lsh"
    __table_args__ = (
        PrimaryKeyConstraint("band_key", "page_id", name="pk_page_lsh"),
        {"schema": SCHEMA},
    )

    band_key: Mapped[int] = mapped_column(BigInteger, nullable=False)
    page_id: Mapped[int] = mapped_column(
        ForeignKey(f"{SCHEMA}.page.id", name="fk_page_lsh_page", ondelete="RESTRICT"),
        nullable=False,
    )


class PageTextRow(Base):
    """govsi extension: the text of a page (TEXT_EXTRACTION), for search and SQL: an HTML
    page's main text (without its site's template) or a document's text, its title,
    language and own date, and how reading it ended (``status``, ``reason``). One row per
    page, replaced when a revisit finds a new version; none for duplicates, errors and
    pages not fetched. ``extracted_at`` is when the row was written: what an index
    updated since then has to read again."""

    __tablename__ = "page_text"
    __table_args__ = (
        PrimaryKeyConstraint("page_id", name="pk_page_text"),
        Index("idx_page_text_extracted_at", "extracted_at"),
        {"schema": SCHEMA},
    )

    page_id: Mapped[int] = mapped_column(
        ForeignKey(f"{SCHEMA}.page.id", name="fk_page_text_page", ondelete="RESTRICT"),
        nullable=False,
    )
    # HTML or the document's type (PDF, DOC, DOCX, PPT, PPTX)
    kind: Mapped[str] = mapped_column(String(20), nullable=False)
    # ok, empty, encrypted, failed or timeout (govsi/text/limits.py)
    status: Mapped[str] = mapped_column(String(20), nullable=False)
    reason: Mapped[str | None] = mapped_column(Text)
    title: Mapped[str | None] = mapped_column(Text)
    language: Mapped[str | None] = mapped_column(String(8))
    text: Mapped[str | None] = mapped_column(Text)
    truncated: Mapped[bool] = mapped_column(Boolean, nullable=False, default=False)
    document_date: Mapped[datetime | None] = mapped_column(DateTime(timezone=False))
    extracted_at: Mapped[datetime] = mapped_column(DateTime(timezone=False), nullable=False)


class IpLease(Base):
    """govsi extension: which crawler process serves an IP address (and so every host on
    it) now, until when, and when a request last reached that address. Several processes
    on one crawldb take addresses from here; see govsi/sharing/leases.py."""

    __tablename__ = "ip_lease"
    __table_args__ = {"schema": SCHEMA}

    ip: Mapped[str] = mapped_column(String(64), primary_key=True)
    worker: Mapped[str] = mapped_column(String(200), nullable=False)
    # Seconds since the epoch on the database's clock: the one clock all workers share.
    expires_at: Mapped[float] = mapped_column(Float, nullable=False)
    last_arrival: Mapped[float | None] = mapped_column(Float)
    # Given back by its worker (expires_at is then the moment it was given back).
    released: Mapped[bool] = mapped_column(Boolean, nullable=False, default=False)
    # When another worker last asked for it in vain: its holder gives back addresses
    # beyond its share of the work when others want them.
    wanted_at: Mapped[float | None] = mapped_column(Float)


class CrawlWorker(Base):
    """govsi extension: the crawler processes that worked on this crawldb (PostgreSQL), one
    row per process run, with its figures as of its last heartbeat. Alive: ``ended_at`` is
    NULL and ``seen_at`` within LEASE_TTL. Times are seconds since the epoch, database clock."""

    __tablename__ = "crawl_worker"
    __table_args__ = {"schema": SCHEMA}

    worker: Mapped[str] = mapped_column(String(200), primary_key=True)
    seen_at: Mapped[float] = mapped_column(Float, nullable=False)
    # The scrapyd job it ran as (the spider's ``_job`` argument), if any.
    job: Mapped[str | None] = mapped_column(String(200))
    started_at: Mapped[float | None] = mapped_column(Float)
    ended_at: Mapped[float | None] = mapped_column(Float)
    # Responses it turned into page rows, of them fetch failures, and ERROR log lines.
    pages: Mapped[int | None] = mapped_column(Integer)
    fetch_errors: Mapped[int | None] = mapped_column(Integer)
    log_errors: Mapped[int | None] = mapped_column(Integer)
    # IP addresses it holds a lease on, and the hosts on them it knows.
    addresses: Mapped[int | None] = mapped_column(Integer)
    hosts: Mapped[int | None] = mapped_column(Integer)


class CrawlLimit(Base):
    """govsi extension: a limit one crawler run reached, as its stat (``govsi/budget/...``,
    ``govsi/robots/refused/...``, the reactor's longest stall, ...) and the stat's value when
    the run ended (``govsi.store.limits``); ``scrapy report`` shows them."""

    __tablename__ = "crawl_limit"
    __table_args__ = {"schema": SCHEMA}

    run: Mapped[str] = mapped_column(String(200), primary_key=True)
    name: Mapped[str] = mapped_column(String(200), primary_key=True)
    value: Mapped[float] = mapped_column(Float, nullable=False)
    recorded_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=False))


class CrawlMeta(Base):
    """govsi extension: facts about the crawl this crawldb holds. ``crawl_id`` (a UUID
    made by the first run) names it, so that a spill file is loaded only into the crawldb
    it was written for."""

    __tablename__ = "crawl_meta"
    __table_args__ = {"schema": SCHEMA}

    key: Mapped[str] = mapped_column(String(50), primary_key=True)
    value: Mapped[str] = mapped_column(String(200), nullable=False)


# Core handles on the tables, for the set-based SQL of the writer, the reader and the
# duplicate index (the models above are for typed rows).
SITE = cast(Table, Site.__table__)
PAGE = cast(Table, Page.__table__)
PAGE_DATA = cast(Table, PageData.__table__)
IMAGE = cast(Table, Image.__table__)
LINK = cast(Table, Link.__table__)
PAGE_LSH = cast(Table, PageLsh.__table__)
PAGE_VERSION = cast(Table, PageVersion.__table__)
WARC_CAPTURE = cast(Table, WarcCaptureRow.__table__)
PAGE_TEXT = cast(Table, PageTextRow.__table__)


def crawl_id(engine: Engine) -> str:
    """This crawldb's crawl id, made on first use; every process on it reads the same."""
    table = cast(Table, CrawlMeta.__table__)
    with engine.begin() as conn:
        insert = (sqlite_insert if engine.dialect.name == "sqlite" else pg_insert)(table)
        conn.execute(
            insert.values(key="crawl_id", value=str(uuid.uuid4())).on_conflict_do_nothing()
        )
        value = conn.execute(select(table.c.value).where(table.c.key == "crawl_id")).scalar_one()
    return str(value)


STANDARD_TABLES = ("data_type", "page_type", "site", "page", "page_data", "image", "link")


def unqualified_metadata() -> MetaData:
    """The models with the ``crawldb`` schema taken off, for comparing with a live database.

    Connections make ``crawldb`` their default schema (PostgreSQL's search_path; SQLite has
    no schemas), and reflection reports tables of the default schema without one, so
    Alembic's autogenerate must compare against unqualified tables.
    """
    plain = MetaData()
    for table in Base.metadata.sorted_tables:
        # schema=None and BLANK_SCHEMA are SQLAlchemy's documented way to drop the schema;
        # its annotations leave them out.
        table.to_metadata(
            plain,
            schema=None,  # type: ignore[arg-type]
            referred_schema_fn=lambda *_: BLANK_SCHEMA,  # type: ignore[arg-type]
        )
    return plain
