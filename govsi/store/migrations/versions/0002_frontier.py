"""Politeness per host and address, nofollow, and a per-host frontier index.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from govsi.store.database import alter_schema

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    S = alter_schema(op.get_bind())
    with op.batch_alter_table("site", schema=S) as site:
        site.add_column(sa.Column("ip_address", sa.String(64)))
        site.add_column(sa.Column("crawl_delay", sa.Float))
    with op.batch_alter_table("page", schema=S) as page:
        page.add_column(sa.Column("nofollow", sa.Boolean))
    # The scheduler reads one host's queue at a time: its FRONTIER rows by depth, then id.
    op.drop_index("idx_page_frontier", "page", schema=S)
    op.create_index(
        "idx_page_frontier", "page", ["site_id", "page_type_code", "depth", "id"], schema=S
    )


def downgrade() -> None:
    S = alter_schema(op.get_bind())
    op.drop_index("idx_page_frontier", "page", schema=S)
    op.create_index("idx_page_frontier", "page", ["page_type_code", "depth", "id"], schema=S)
    with op.batch_alter_table("page", schema=S) as page:
        page.drop_column("nofollow")
    with op.batch_alter_table("site", schema=S) as site:
        site.drop_column("crawl_delay")
        site.drop_column("ip_address")
