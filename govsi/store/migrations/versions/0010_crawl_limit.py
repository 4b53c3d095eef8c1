"""The limits each run reached (budgets, refusals, caps), for the crawl report.

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-25
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from govsi.store.database import alter_schema

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "crawl_limit",
        sa.Column("run", sa.String(200), primary_key=True),
        sa.Column("name", sa.String(200), primary_key=True),
        sa.Column("value", sa.Float, nullable=False),
        sa.Column("recorded_at", sa.DateTime()),
        schema=alter_schema(op.get_bind()),
    )


def downgrade() -> None:
    op.drop_table("crawl_limit", schema=alter_schema(op.get_bind()))
