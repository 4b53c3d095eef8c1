"""Revisits: validators, change time, next visit and history on page; image hashes and
validators; page_version, one row per earlier version a change replaced.

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-26
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op

from govsi.store.database import alter_schema

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None

_PAGE: list[sa.Column[Any]] = [
    sa.Column("etag", sa.String(1000)),
    sa.Column("last_modified", sa.String(200)),
    sa.Column("changed_time", sa.DateTime()),
    sa.Column("next_visit", sa.DateTime()),
    sa.Column("revisit_history", sa.Text()),
    sa.Column("revisit_claim", sa.String(200)),
    sa.Column("revisit_claimed_at", sa.DateTime()),
]
_IMAGE: list[sa.Column[Any]] = [
    sa.Column("content_hash", sa.String(64)),
    sa.Column("etag", sa.String(1000)),
    sa.Column("last_modified", sa.String(200)),
]


def upgrade() -> None:
    schema = alter_schema(op.get_bind())
    with op.batch_alter_table("page", schema=schema) as batch:
        for column in _PAGE:
            batch.add_column(column)
    with op.batch_alter_table("image", schema=schema) as batch:
        for column in _IMAGE:
            batch.add_column(column)
    op.create_index("idx_page_next_visit", "page", ["site_id", "next_visit"], schema=schema)
    op.create_table(
        "page_version",
        sa.Column("id", sa.Integer, autoincrement=True),
        sa.Column("page_id", sa.Integer, nullable=False),
        sa.Column("accessed_time", sa.DateTime()),
        sa.Column("http_status_code", sa.Integer),
        sa.Column("content_hash", sa.String(64)),
        sa.Column("html_content", sa.Text),
        sa.Column("page_type_code", sa.String(20)),
        sa.Column("changed_time", sa.DateTime()),
        sa.PrimaryKeyConstraint("id", name="pk_page_version_id"),
        sa.ForeignKeyConstraint(
            ["page_id"],
            [f"{schema}.page.id" if schema else "page.id"],
            name="fk_page_version_page",
            ondelete="RESTRICT",
        ),
        schema=schema,
    )
    op.create_index(
        "idx_page_version_page_id", "page_version", ["page_id", "accessed_time"], schema=schema
    )


def downgrade() -> None:
    schema = alter_schema(op.get_bind())
    op.drop_index("idx_page_version_page_id", "page_version", schema=schema)
    op.drop_table("page_version", schema=schema)
    op.drop_index("idx_page_next_visit", "page", schema=schema)
    with op.batch_alter_table("image", schema=schema) as batch:
        for column in _IMAGE:
            batch.drop_column(column.name)
    with op.batch_alter_table("page", schema=schema) as batch:
        for column in _PAGE:
            batch.drop_column(column.name)
