"""crawldb's schema (govsi.store.schema): the migrations build exactly the models, the
lookup rows are there, and on PostgreSQL the standard tables are as the course defines them."""

from __future__ import annotations

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import Engine, inspect

from govsi.items import EXTRA_PAGE_TYPES, STANDARD_PAGE_TYPES
from govsi.store import schema
from govsi.web.contenttypes import DOCUMENT_TYPES
from testkit.crawldb import q


def test_migrations_match_models(engine: Engine) -> None:
    with engine.connect() as conn:
        ctx = MigrationContext.configure(conn)
        diff = [
            d
            for d in compare_metadata(ctx, schema.unqualified_metadata())
            if not (
                isinstance(d, tuple) and d[0] == "remove_table" and d[1].name == "alembic_version"
            )
        ]
    assert diff == []


def test_lookup_rows(engine: Engine) -> None:
    assert {r[0] for r in q(engine, "SELECT code FROM data_type")} == set(DOCUMENT_TYPES)
    assert {r[0] for r in q(engine, "SELECT code FROM page_type")} == set(
        STANDARD_PAGE_TYPES + EXTRA_PAGE_TYPES
    )


STANDARD_COLUMNS = {
    "data_type": [("code", "character varying", 20, "NO")],
    "page_type": [("code", "character varying", 20, "NO")],
    "site": [
        ("id", "integer", None, "NO"),
        ("domain", "character varying", 500, "YES"),
        ("robots_content", "text", None, "YES"),
        ("sitemap_content", "text", None, "YES"),
    ],
    "page": [
        ("id", "integer", None, "NO"),
        ("site_id", "integer", None, "YES"),
        ("page_type_code", "character varying", 20, "YES"),
        ("url", "character varying", 3000, "YES"),
        ("html_content", "text", None, "YES"),
        ("http_status_code", "integer", None, "YES"),
        ("accessed_time", "timestamp without time zone", None, "YES"),
    ],
    "page_data": [
        ("id", "integer", None, "NO"),
        ("page_id", "integer", None, "YES"),
        ("data_type_code", "character varying", 20, "YES"),
        ("data", "bytea", None, "YES"),
    ],
    "image": [
        ("id", "integer", None, "NO"),
        ("page_id", "integer", None, "YES"),
        ("filename", "character varying", 255, "YES"),
        ("content_type", "character varying", 50, "YES"),
        ("data", "bytea", None, "YES"),
        ("accessed_time", "timestamp without time zone", None, "YES"),
    ],
    "link": [("from_page", "integer", None, "NO"), ("to_page", "integer", None, "NO")],
}


@pytest.mark.parametrize("engine", ["postgresql"], indirect=True)
def test_postgres_standard_schema_exactly(engine: Engine) -> None:
    for table, expected in STANDARD_COLUMNS.items():
        rows = q(
            engine,
            "SELECT column_name, data_type, character_maximum_length, is_nullable "
            "FROM information_schema.columns "
            f"WHERE table_schema='crawldb' AND table_name='{table}'",
        )
        assert set(expected) <= set(rows), table
    # serial ids, unique url, RESTRICT foreign keys, the standard index names
    defaults = dict(
        q(
            engine,
            "SELECT table_name, column_default FROM information_schema.columns "
            "WHERE table_schema='crawldb' AND column_name='id'",
        )
    )
    for table in ("site", "page", "page_data", "image"):
        assert defaults[table].startswith("nextval("), table
    insp = inspect(engine)
    for fk_table in ("page", "page_data", "image", "link"):
        for fk in insp.get_foreign_keys(fk_table, schema="crawldb"):
            assert fk["options"].get("ondelete") == "RESTRICT", fk
    indexes = {i["name"] for t in STANDARD_COLUMNS for i in insp.get_indexes(t, schema="crawldb")}
    assert {
        "unq_url_idx",
        "idx_page_site_id",
        "idx_page_page_type_code",
        "idx_page_data_page_id",
        "idx_page_data_data_type_code",
        "idx_image_page_id",
        "idx_link_from_page",
        "idx_link_to_page",
    } <= indexes
    pk = insp.get_pk_constraint("link", schema="crawldb")
    assert pk["constrained_columns"] == ["from_page", "to_page"]
