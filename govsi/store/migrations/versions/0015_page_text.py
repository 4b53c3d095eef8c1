"""The text of pages and documents, for search and SQL: page_text, one row per page with
its main text or document text, title, language, own date and how reading it ended.

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from govsi.store.database import alter_schema

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None


def upgrade() -> None:
    schema = alter_schema(op.get_bind())
    prefix = f"{schema}." if schema else ""
    op.create_table(
        "page_text",
        sa.Column("page_id", sa.Integer, nullable=False),
        sa.Column("kind", sa.String(20), nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("reason", sa.Text),
        sa.Column("title", sa.Text),
        sa.Column("language", sa.String(8)),
        sa.Column("text", sa.Text),
        sa.Column("truncated", sa.Boolean, nullable=False),
        sa.Column("document_date", sa.DateTime()),
        sa.Column("extracted_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("page_id", name="pk_page_text"),
        sa.ForeignKeyConstraint(
            ["page_id"], [f"{prefix}page.id"], name="fk_page_text_page", ondelete="RESTRICT"
        ),
        schema=schema,
    )
    op.create_index("idx_page_text_extracted_at", "page_text", ["extracted_at"], schema=schema)


def downgrade() -> None:
    op.drop_table("page_text", schema=alter_schema(op.get_bind()))
