"""What each visit found: page.visit_outcome (new, not_modified, same, changed, gone,
moved, kept) and page.visit_time (when; a revisit that kept the copy sets it too), for the
report's last round.

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-27
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op

from govsi.store.database import alter_schema

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None

_PAGE: list[sa.Column[Any]] = [
    sa.Column("visit_outcome", sa.String(16)),
    sa.Column("visit_time", sa.DateTime()),
]


def upgrade() -> None:
    schema = alter_schema(op.get_bind())
    with op.batch_alter_table("page", schema=schema) as batch:
        for column in _PAGE:
            batch.add_column(column)


def downgrade() -> None:
    schema = alter_schema(op.get_bind())
    with op.batch_alter_table("page", schema=schema) as batch:
        for column in _PAGE:
            batch.drop_column(column.name)
