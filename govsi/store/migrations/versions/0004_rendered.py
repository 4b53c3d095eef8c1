"""JavaScript rendering: whether a page's stored content is the browser's DOM.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from govsi.store.database import alter_schema

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("page", schema=alter_schema(op.get_bind())) as batch:
        batch.add_column(sa.Column("rendered", sa.Boolean))


def downgrade() -> None:
    with op.batch_alter_table("page", schema=alter_schema(op.get_bind())) as batch:
        batch.drop_column("rendered")
