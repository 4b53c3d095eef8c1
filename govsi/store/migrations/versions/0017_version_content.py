"""Earlier versions' HTML stored once per page and content: page_version_content, pointed at
by page_version.content_id; page_version.html_content moved there, equal copies of one page
merged into one row. Retention (HISTORY_KEEP_VERSIONS, HISTORY_KEEP_MONTHS) applies to a
page at its next change, in the writer (govsi/store/history.py).

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-29
"""

from __future__ import annotations

import hashlib

import sqlalchemy as sa
from alembic import op

from govsi.store.database import alter_schema

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None

# Versions converted at a time: their HTML is held in memory meanwhile.
_ROWS = 200


def _hash(html: str) -> str:
    # As govsi.store.history.html_hash, written out: a migration does not change later.
    return hashlib.sha256(html.encode("utf-8", "surrogatepass")).hexdigest()


def upgrade() -> None:
    conn = op.get_bind()
    schema = alter_schema(conn)
    prefix = f"{schema}." if schema else ""
    op.create_table(
        "page_version_content",
        sa.Column("id", sa.Integer, autoincrement=True, nullable=False),
        sa.Column("page_id", sa.Integer, nullable=False),
        sa.Column("html_hash", sa.String(64), nullable=False),
        sa.Column("html_content", sa.Text, nullable=False),
        sa.Column("size", sa.Integer, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_page_version_content_id"),
        sa.ForeignKeyConstraint(
            ["page_id"],
            [f"{prefix}page.id"],
            name="fk_page_version_content_page",
            ondelete="RESTRICT",
        ),
        schema=schema,
    )
    op.create_index(
        "idx_page_version_content_page_hash", "page_version_content", ["page_id", "html_hash"],
        unique=True, schema=schema,
    )  # fmt: skip
    op.add_column("page_version", sa.Column("content_id", sa.Integer), schema=schema)
    version, content = f"{prefix}page_version", f"{prefix}page_version_content"
    find = sa.text(f"SELECT id FROM {content} WHERE page_id = :p AND html_hash = :h")
    add = sa.text(
        f"INSERT INTO {content} (page_id, html_hash, html_content, size) VALUES (:p, :h, :c, :s)"
    )
    point = sa.text(f"UPDATE {version} SET content_id = :c WHERE id = :v")
    read = sa.text(
        f"SELECT id, page_id, html_content FROM {version} WHERE html_content IS NOT NULL "
        f"AND id > :after ORDER BY id LIMIT {_ROWS}"
    )
    after = 0
    while rows := conn.execute(read, {"after": after}).all():
        for vid, pid, html in rows:
            key = _hash(html)
            cid = conn.execute(find, {"p": pid, "h": key}).scalar()
            if cid is None:
                size = len(html.encode("utf-8", "surrogatepass"))
                conn.execute(add, {"p": pid, "h": key, "c": html, "s": size})
                cid = conn.execute(find, {"p": pid, "h": key}).scalar_one()
            conn.execute(point, {"c": cid, "v": vid})
        after = rows[-1][0]
    # SQLite adds the FOREIGN KEY by copying page_version, which no other table references.
    with op.batch_alter_table("page_version", schema=schema) as batch:
        batch.drop_column("html_content")
        batch.create_foreign_key(
            "fk_page_version_content", "page_version_content", ["content_id"], ["id"],
            referent_schema=schema, ondelete="RESTRICT",
        )  # fmt: skip


def downgrade() -> None:
    conn = op.get_bind()
    schema = alter_schema(conn)
    prefix = f"{schema}." if schema else ""
    op.add_column("page_version", sa.Column("html_content", sa.Text), schema=schema)
    op.execute(
        f"UPDATE {prefix}page_version SET html_content = (SELECT c.html_content FROM "
        f"{prefix}page_version_content c WHERE c.id = {prefix}page_version.content_id)"
    )
    with op.batch_alter_table("page_version", schema=schema) as batch:
        batch.drop_constraint("fk_page_version_content", type_="foreignkey")
        batch.drop_column("content_id")
    op.drop_table("page_version_content", schema=schema)
