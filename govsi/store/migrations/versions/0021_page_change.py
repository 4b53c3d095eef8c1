"""The changes visits found, as rows: ``page_change`` (docs/stored.md, "Changes"): one row
per visit that found a page new, changed in its main content, gone or moved, with the
page's title and the main text the visit replaced.

Rows for the visits before this revision are made from what crawldb kept
(``govsi.store.changes.backfill``): each fetched page's first visit (``new``), and each
earlier version a change replaced (``page_version``: changed, gone or moved by what came
after it); their ``text_before`` is NULL (the replaced main text was not kept).

Revision ID: 0021
Revises: 0020
Create Date: 2026-11-29
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from govsi.store.changes import backfill
from govsi.store.database import alter_schema

revision = "0021"
down_revision = "0020"
branch_labels = None
depends_on = None


def upgrade() -> None:
    S = alter_schema(op.get_bind())
    prefix = f"{S}." if S else ""
    op.create_table(
        "page_change",
        sa.Column("id", sa.Integer, autoincrement=True, nullable=False),
        sa.Column("page_id", sa.Integer, nullable=False),
        sa.Column("visit_time", sa.DateTime(), nullable=False),
        sa.Column("kind", sa.String(10), nullable=False),
        sa.Column("title", sa.String(1000)),
        sa.Column("text_before", sa.Text),
        sa.PrimaryKeyConstraint("id", name="pk_page_change_id"),
        sa.ForeignKeyConstraint(
            ["page_id"], [f"{prefix}page.id"], name="fk_page_change_page", ondelete="RESTRICT"
        ),
        schema=S,
    )
    op.create_index("idx_page_change_time", "page_change", ["visit_time", "id"], schema=S)
    op.create_index("idx_page_change_page", "page_change", ["page_id", "visit_time"], schema=S)
    backfill(op.get_bind())


def downgrade() -> None:
    S = alter_schema(op.get_bind())
    op.drop_table("page_change", schema=S)
