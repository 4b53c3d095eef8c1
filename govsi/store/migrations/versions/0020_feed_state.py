"""A feed's or sitemap's state across polls: ``failures`` (failed polls in a row, reset by a
success, which back its next poll off), ``state`` (``items.FeedStatus``: polled, parked as
gone, moved, no longer listed by robots.txt), ``moved_to`` (where a permanent redirect
took it) and ``last_seen`` (when a page or robots.txt last named it; rows not named for
FEED_FORGET_AFTER are forgotten). docs/stored.md, "Feeds and sitemaps, polled".

Revision ID: 0020
Revises: 0019
Create Date: 2026-11-29
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from govsi.store.database import alter_schema

revision = "0020"
down_revision = "0019"
branch_labels = None
depends_on = None


def upgrade() -> None:
    S = alter_schema(op.get_bind())
    with op.batch_alter_table("feed", schema=S) as batch:
        batch.add_column(sa.Column("failures", sa.Integer, nullable=False, server_default="0"))
        batch.add_column(
            sa.Column("state", sa.String(10), nullable=False, server_default="active")
        )
        batch.add_column(sa.Column("moved_to", sa.String(3000)))
        batch.add_column(sa.Column("last_seen", sa.DateTime()))
    # A row found before this revision was last named when it was found.
    op.execute(f"UPDATE {S + '.' if S else ''}feed SET last_seen = found_at")


def downgrade() -> None:
    S = alter_schema(op.get_bind())
    with op.batch_alter_table("feed", schema=S) as batch:
        for column in ("last_seen", "moved_to", "state", "failures"):
            batch.drop_column(column)
