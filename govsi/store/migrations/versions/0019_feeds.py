"""The feeds and sitemaps the crawl polls: ``feed``, one row per feed or sitemap URL, with
where it was found, its validators, its last poll and its next (docs/stored.md, "Feeds").

Revision ID: 0019
Revises: 0018
Create Date: 2026-11-29
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from govsi.store.database import alter_schema

revision = "0019"
down_revision = "0018"
branch_labels = None
depends_on = None


def upgrade() -> None:
    S = alter_schema(op.get_bind())
    prefix = f"{S}." if S else ""
    op.create_table(
        "feed",
        sa.Column("id", sa.Integer, autoincrement=True, nullable=False),
        sa.Column("site_id", sa.Integer),
        sa.Column("url", sa.String(3000), nullable=False),
        sa.Column("kind", sa.String(10), nullable=False),
        sa.Column("found_on", sa.String(3000)),
        sa.Column("found_at", sa.DateTime()),
        sa.Column("etag", sa.String(1000)),
        sa.Column("last_modified", sa.String(200)),
        sa.Column("polled_at", sa.DateTime()),
        sa.Column("poll_status", sa.Integer),
        sa.Column("poll_error", sa.Text),
        sa.Column("entries", sa.Integer),
        sa.Column("new_entries", sa.Integer),
        sa.Column("next_poll", sa.DateTime()),
        sa.PrimaryKeyConstraint("id", name="pk_feed_id"),
        sa.ForeignKeyConstraint(
            ["site_id"], [f"{prefix}site.id"], name="fk_feed_site", ondelete="RESTRICT"
        ),
        schema=S,
    )
    op.create_index("idx_feed_url", "feed", ["url"], unique=True, schema=S)
    op.create_index("idx_feed_next_poll", "feed", ["next_poll"], schema=S)


def downgrade() -> None:
    S = alter_schema(op.get_bind())
    op.drop_table("feed", schema=S)
