"""Duplicate detection: content hash, MinHash signature, original, LSH band keys.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from govsi.store.database import alter_schema

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    S = alter_schema(op.get_bind())
    page = f"{S}.page" if S else "page"
    with op.batch_alter_table("page", schema=S) as batch:
        batch.add_column(sa.Column("content_hash", sa.String(64)))
        batch.add_column(sa.Column("minhash", sa.LargeBinary))
        batch.add_column(sa.Column("duplicate_of", sa.Integer))
        batch.create_foreign_key(
            "fk_page_duplicate_of",
            "page",
            ["duplicate_of"],
            ["id"],
            ondelete="RESTRICT",
            referent_schema=S,
        )
    op.create_index("idx_page_content_hash", "page", ["content_hash"], schema=S)
    op.create_table(
        "page_lsh",
        sa.Column("band_key", sa.BigInteger, nullable=False),
        sa.Column("page_id", sa.Integer, nullable=False),
        sa.PrimaryKeyConstraint("band_key", "page_id", name="pk_page_lsh"),
        sa.ForeignKeyConstraint(
            ["page_id"], [f"{page}.id"], name="fk_page_lsh_page", ondelete="RESTRICT"
        ),
        schema=S,
    )


def downgrade() -> None:
    S = alter_schema(op.get_bind())
    op.drop_table("page_lsh", schema=S)
    op.drop_index("idx_page_content_hash", "page", schema=S)
    with op.batch_alter_table("page", schema=S) as batch:
        batch.drop_constraint("fk_page_duplicate_of", type_="foreignkey")
        batch.drop_column("duplicate_of")
        batch.drop_column("minhash")
        batch.drop_column("content_hash")
