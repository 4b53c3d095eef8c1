"""Near copies flagged, not dropped: page.near_duplicate_of and page.similarity; the key
of all a reader sees (page.text_hash), which an exact copy shares with its original; the
definition stored keys were made by (page.key_version). A near copy an earlier version
stored as a DUPLICATE without its content goes back to the frontier, to be fetched again.

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-29
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from govsi.store.database import alter_schema

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None

# DUPLICATE rows whose main text's key differs from their original's (or is unknown): near
# copies, whose content was not kept. An exact copy shares its original's key.
_LOST = (
    "SELECT d.id FROM {page} d LEFT JOIN {page} o ON o.id = d.duplicate_of "
    "WHERE d.page_type_code = 'DUPLICATE' AND (o.id IS NULL OR d.content_hash IS NULL "
    "OR o.content_hash IS NULL OR d.content_hash <> o.content_hash)"
)


def upgrade() -> None:
    S = alter_schema(op.get_bind())
    page = f"{S}.page" if S else "page"
    # A page id, with no FOREIGN KEY: SQLite adds one only by copying the table, and
    # dropping the old one fails once other tables' rows reference it.
    op.add_column("page", sa.Column("near_duplicate_of", sa.Integer), schema=S)
    op.add_column("page", sa.Column("similarity", sa.Float), schema=S)
    op.add_column("page", sa.Column("text_hash", sa.String(64)), schema=S)
    op.add_column("page", sa.Column("key_version", sa.SmallInteger), schema=S)
    link = f"{S}.link" if S else "link"
    # Materialized first: the UPDATE changes the rows the query reads.
    lost = [row[0] for row in op.get_bind().execute(sa.text(_LOST.format(page=page)))]
    for start in range(0, len(lost), 10_000):
        ids = ", ".join(str(int(i)) for i in lost[start : start + 10_000])
        op.execute(f"DELETE FROM {link} WHERE from_page IN ({ids})")
        op.execute(
            f"UPDATE {page} SET page_type_code = 'FRONTIER', duplicate_of = NULL, "
            "content_hash = NULL, http_status_code = NULL, accessed_time = NULL, "
            "content_type = NULL, changed_time = NULL, next_visit = NULL, "
            "revisit_history = NULL, visit_outcome = NULL, visit_time = NULL, "
            f"fetch_error = NULL WHERE id IN ({ids})"
        )


def downgrade() -> None:
    S = alter_schema(op.get_bind())
    with op.batch_alter_table("page", schema=S) as batch:
        batch.drop_column("key_version")
        batch.drop_column("text_hash")
        batch.drop_column("similarity")
        batch.drop_column("near_duplicate_of")
