"""The standard crawldb schema with govsi's first extension columns.

Written out rather than generated from the models: a migration must keep describing the
schema as it was at this revision, whatever the models become later.

Revision ID: 0001
Revises:
Create Date: 2026-11-22
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

S = "crawldb"


def upgrade() -> None:
    data_type = op.create_table(
        "data_type",
        sa.Column("code", sa.String(20), nullable=False),
        sa.PrimaryKeyConstraint("code", name="pk_data_type_code"),
        schema=S,
    )
    page_type = op.create_table(
        "page_type",
        sa.Column("code", sa.String(20), nullable=False),
        sa.PrimaryKeyConstraint("code", name="pk_page_type_code"),
        schema=S,
    )
    op.create_table(
        "site",
        sa.Column("id", sa.Integer, autoincrement=True, nullable=False),
        sa.Column("domain", sa.String(500)),
        sa.Column("robots_content", sa.Text),
        sa.Column("sitemap_content", sa.Text),
        sa.PrimaryKeyConstraint("id", name="pk_site_id"),
        schema=S,
    )
    op.create_index("idx_site_domain", "site", ["domain"], unique=True, schema=S)
    op.create_table(
        "page",
        sa.Column("id", sa.Integer, autoincrement=True, nullable=False),
        sa.Column("site_id", sa.Integer),
        sa.Column("page_type_code", sa.String(20)),
        sa.Column("url", sa.String(3000)),
        sa.Column("html_content", sa.Text),
        sa.Column("http_status_code", sa.Integer),
        sa.Column("accessed_time", sa.DateTime(timezone=False)),
        sa.Column("depth", sa.Integer),
        sa.Column("content_type", sa.String(255)),
        sa.Column("fetch_error", sa.Text),
        sa.PrimaryKeyConstraint("id", name="pk_page_id"),
        sa.ForeignKeyConstraint(
            ["site_id"], [f"{S}.site.id"], name="fk_page_site", ondelete="RESTRICT"
        ),
        sa.ForeignKeyConstraint(
            ["page_type_code"],
            [f"{S}.page_type.code"],
            name="fk_page_page_type",
            ondelete="RESTRICT",
        ),
        schema=S,
    )
    op.create_index("unq_url_idx", "page", ["url"], unique=True, schema=S)
    op.create_index("idx_page_site_id", "page", ["site_id"], schema=S)
    op.create_index("idx_page_page_type_code", "page", ["page_type_code"], schema=S)
    op.create_index("idx_page_frontier", "page", ["page_type_code", "depth", "id"], schema=S)
    op.create_table(
        "page_data",
        sa.Column("id", sa.Integer, autoincrement=True, nullable=False),
        sa.Column("page_id", sa.Integer),
        sa.Column("data_type_code", sa.String(20)),
        sa.Column("data", sa.LargeBinary),
        sa.Column("size", sa.BigInteger),
        sa.PrimaryKeyConstraint("id", name="pk_page_data_id"),
        sa.ForeignKeyConstraint(
            ["page_id"], [f"{S}.page.id"], name="fk_page_data_page", ondelete="RESTRICT"
        ),
        sa.ForeignKeyConstraint(
            ["data_type_code"],
            [f"{S}.data_type.code"],
            name="fk_page_data_data_type",
            ondelete="RESTRICT",
        ),
        schema=S,
    )
    op.create_index("idx_page_data_page_id", "page_data", ["page_id"], schema=S)
    op.create_index("idx_page_data_data_type_code", "page_data", ["data_type_code"], schema=S)
    op.create_table(
        "image",
        sa.Column("id", sa.Integer, autoincrement=True, nullable=False),
        sa.Column("page_id", sa.Integer),
        sa.Column("filename", sa.String(255)),
        sa.Column("content_type", sa.String(50)),
        sa.Column("data", sa.LargeBinary),
        sa.Column("accessed_time", sa.DateTime(timezone=False)),
        sa.Column("url", sa.String(3000)),
        sa.Column("http_status_code", sa.Integer),
        sa.PrimaryKeyConstraint("id", name="pk_image_id"),
        sa.ForeignKeyConstraint(
            ["page_id"], [f"{S}.page.id"], name="fk_image_page_data", ondelete="RESTRICT"
        ),
        schema=S,
    )
    op.create_index("idx_image_page_id", "image", ["page_id"], schema=S)
    op.create_index("idx_image_page_url", "image", ["page_id", "url"], unique=True, schema=S)
    op.create_index("idx_image_url", "image", ["url"], schema=S)
    op.create_table(
        "link",
        sa.Column("from_page", sa.Integer, nullable=False),
        sa.Column("to_page", sa.Integer, nullable=False),
        sa.PrimaryKeyConstraint("from_page", "to_page", name="_0"),
        sa.ForeignKeyConstraint(
            ["from_page"], [f"{S}.page.id"], name="fk_link_page", ondelete="RESTRICT"
        ),
        sa.ForeignKeyConstraint(
            ["to_page"], [f"{S}.page.id"], name="fk_link_page_1", ondelete="RESTRICT"
        ),
        schema=S,
    )
    op.create_index("idx_link_from_page", "link", ["from_page"], schema=S)
    op.create_index("idx_link_to_page", "link", ["to_page"], schema=S)
    op.bulk_insert(data_type, [{"code": c} for c in ("PDF", "DOC", "DOCX", "PPT", "PPTX")])
    op.bulk_insert(
        page_type,
        [{"code": c} for c in ("HTML", "BINARY", "DUPLICATE", "FRONTIER", "OTHER", "ERROR")],
    )


def downgrade() -> None:
    for table in ("link", "image", "page_data", "page", "site", "page_type", "data_type"):
        op.drop_table(table, schema=S)
