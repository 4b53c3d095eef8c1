"""An image URL's first row (the one holding its bytes) found from the index alone.

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-24
"""

from __future__ import annotations

from alembic import op

from govsi.store.database import alter_schema

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    schema = alter_schema(op.get_bind())
    op.drop_index("idx_image_url", "image", schema=schema)
    op.create_index("idx_image_url", "image", ["url", "id"], schema=schema)


def downgrade() -> None:
    schema = alter_schema(op.get_bind())
    op.drop_index("idx_image_url", "image", schema=schema)
    op.create_index("idx_image_url", "image", ["url"], schema=schema)
