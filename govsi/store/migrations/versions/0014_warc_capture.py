"""The WARC archive's captures: warc_capture, one row per record of a page (its response
or revisit, a rendered page's DOM), with the file, offset and length that find it.

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-26
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from govsi.store.database import alter_schema

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    schema = alter_schema(op.get_bind())
    prefix = f"{schema}." if schema else ""
    op.create_table(
        "warc_capture",
        sa.Column("id", sa.Integer, autoincrement=True),
        sa.Column("page_id", sa.Integer, nullable=False),
        sa.Column("warc_file", sa.String(255), nullable=False),
        sa.Column("warc_offset", sa.BigInteger, nullable=False),
        sa.Column("warc_length", sa.BigInteger, nullable=False),
        sa.Column("record_id", sa.String(100), nullable=False),
        sa.Column("record_type", sa.String(20), nullable=False),
        sa.Column("captured_at", sa.DateTime()),
        sa.PrimaryKeyConstraint("id", name="pk_warc_capture_id"),
        sa.ForeignKeyConstraint(
            ["page_id"], [f"{prefix}page.id"], name="fk_warc_capture_page", ondelete="RESTRICT"
        ),
        schema=schema,
    )
    op.create_index(
        "idx_warc_capture_page_id", "warc_capture", ["page_id", "captured_at"], schema=schema
    )
    op.create_index(
        "idx_warc_capture_record_id", "warc_capture", ["record_id"], unique=True, schema=schema
    )


def downgrade() -> None:
    op.drop_table("warc_capture", schema=alter_schema(op.get_bind()))
