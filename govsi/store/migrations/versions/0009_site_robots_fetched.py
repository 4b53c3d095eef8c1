"""When each host's robots.txt was fetched and with what status, so that the workers of
a shared crawl read it from crawldb instead of fetching it once each.

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-24
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from govsi.store.database import alter_schema

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    schema = alter_schema(op.get_bind())
    op.add_column("site", sa.Column("robots_status", sa.Integer()), schema=schema)
    op.add_column("site", sa.Column("robots_fetched_at", sa.DateTime()), schema=schema)


def downgrade() -> None:
    schema = alter_schema(op.get_bind())
    op.drop_column("site", "robots_fetched_at", schema=schema)
    op.drop_column("site", "robots_status", schema=schema)
