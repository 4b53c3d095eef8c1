"""Revisit claims on pictures: image.revisit_claim and image.revisit_claimed_at, as on
page, so that workers sharing a crawldb revisit each picture once per round.

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-26
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op

from govsi.store.database import alter_schema

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None

_IMAGE: list[sa.Column[Any]] = [
    sa.Column("revisit_claim", sa.String(200)),
    sa.Column("revisit_claimed_at", sa.DateTime()),
]


def upgrade() -> None:
    schema = alter_schema(op.get_bind())
    with op.batch_alter_table("image", schema=schema) as batch:
        for column in _IMAGE:
            batch.add_column(column)


def downgrade() -> None:
    schema = alter_schema(op.get_bind())
    with op.batch_alter_table("image", schema=schema) as batch:
        for column in _IMAGE:
            batch.drop_column(column.name)
