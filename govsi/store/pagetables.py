"""govsi's tables beside ``page`` (``# govsi extension``s, SQLAlchemy Core): a page's
earlier versions and their HTML, where its captures lie in the WARC archive, the LSH band
keys of its signature, its text, the changes its visits found. ``govsi.store.schema``
holds the standard tables they refer to, and every table is imported from there."""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    PrimaryKeyConstraint,
    String,
    Table,
    Text,
)

from govsi.store.metadata import METADATA, SCHEMA

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


# govsi extension: what a visit found a page to be, when it was news to a reader of the
# copy (govsi/store/changes.py): a page fetched for the first time with a copy (``new``),
# its main content changed (``changed``), now a 404/410 (``gone``), now a redirect
# (``moved``); items.ChangeKind. A steady page, a 304 or a template-only change adds none.
# ``title`` is the page's after the visit (a gone or moved page's: before it);
# ``text_before`` the main text the visit replaced, as page_text held it (NULL for a new
# page, or once retention let it go): the diff's left side, whose right side is the next
# change's ``text_before`` or, for the page's latest change, its page_text.
PAGE_CHANGE = Table(
    "page_change",
    METADATA,
    Column("id", Integer, autoincrement=True, nullable=False),
    Column(
        "page_id",
        ForeignKey(f"{SCHEMA}.page.id", name="fk_page_change_page", ondelete="RESTRICT"),
        nullable=False,
    ),
    Column("visit_time", DateTime(timezone=False), nullable=False),
    Column("kind", String(10), nullable=False),
    Column("title", String(1000)),
    Column("text_before", Text),
    PrimaryKeyConstraint("id", name="pk_page_change_id"),
    Index("idx_page_change_time", "visit_time", "id"),
    Index("idx_page_change_page", "page_id", "visit_time"),
)
