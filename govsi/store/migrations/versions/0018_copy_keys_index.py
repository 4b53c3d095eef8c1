"""A page's exact-copy candidates read from one index: idx_page_copy_keys on (content_hash,
page_type_code, text_hash) replaces idx_page_content_hash (on content_hash alone), so that
the stored originals with both keys of a page are an index range read, not a walk over
every page sharing its main text's key (docs/duplicates.md, "Cost").

Revision ID: 0018
Revises: 0017
Create Date: 2026-11-29
"""

from __future__ import annotations

from alembic import op

from govsi.store.database import alter_schema

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None


def upgrade() -> None:
    S = alter_schema(op.get_bind())
    op.create_index(
        "idx_page_copy_keys", "page", ["content_hash", "page_type_code", "text_hash"], schema=S
    )
    op.drop_index("idx_page_content_hash", table_name="page", schema=S)


def downgrade() -> None:
    S = alter_schema(op.get_bind())
    op.create_index("idx_page_content_hash", "page", ["content_hash"], schema=S)
    op.drop_index("idx_page_copy_keys", table_name="page", schema=S)
