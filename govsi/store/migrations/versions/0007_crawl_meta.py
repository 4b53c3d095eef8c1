"""The crawl's own identity, so that what belongs to one crawldb (spill files) is never
loaded into another.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-24
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from govsi.store.database import alter_schema

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "crawl_meta",
        sa.Column("key", sa.String(50), primary_key=True),
        sa.Column("value", sa.String(200), nullable=False),
        schema=alter_schema(op.get_bind()),
    )


def downgrade() -> None:
    op.drop_table("crawl_meta", schema=alter_schema(op.get_bind()))
