"""Each crawler process's own figures in crawl_worker, kept after it ends.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-23
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op

from govsi.store.database import alter_schema

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

COLUMNS: list[tuple[str, sa.types.TypeEngine[Any] | type[sa.types.TypeEngine[Any]]]] = [
    ("job", sa.String(200)),
    ("started_at", sa.Float),
    ("ended_at", sa.Float),
    ("pages", sa.Integer),
    ("fetch_errors", sa.Integer),
    ("log_errors", sa.Integer),
    ("addresses", sa.Integer),
    ("hosts", sa.Integer),
]


def upgrade() -> None:
    schema = alter_schema(op.get_bind())
    with op.batch_alter_table("crawl_worker", schema=schema) as batch:
        for name, type_ in COLUMNS:
            batch.add_column(sa.Column(name, type_))


def downgrade() -> None:
    schema = alter_schema(op.get_bind())
    with op.batch_alter_table("crawl_worker", schema=schema) as batch:
        for name, _ in reversed(COLUMNS):
            batch.drop_column(name)
