"""Several crawler processes on one crawldb: leases on IP addresses.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from govsi.store.database import alter_schema

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "ip_lease",
        sa.Column("ip", sa.String(64), primary_key=True),
        sa.Column("worker", sa.String(200), nullable=False),
        sa.Column("expires_at", sa.Float, nullable=False),
        sa.Column("last_arrival", sa.Float),
        sa.Column("released", sa.Boolean, nullable=False, server_default=sa.false()),
        sa.Column("wanted_at", sa.Float),
        schema=alter_schema(op.get_bind()),
    )
    op.create_table(
        "crawl_worker",
        sa.Column("worker", sa.String(200), primary_key=True),
        sa.Column("seen_at", sa.Float, nullable=False),
        schema=alter_schema(op.get_bind()),
    )


def downgrade() -> None:
    op.drop_table("crawl_worker", schema=alter_schema(op.get_bind()))
    op.drop_table("ip_lease", schema=alter_schema(op.get_bind()))
