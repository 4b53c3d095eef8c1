"""Alembic environment: run by ``govsi.store.database.migrate`` (and by ``alembic``)."""

from __future__ import annotations

from alembic import context
from sqlalchemy import Connection

from govsi.store.database import is_sqlite, make_engine, resolve_crawldb_url
from govsi.store.schema import SCHEMA, unqualified_metadata

config = context.config


def _run(connection: Connection) -> None:
    sqlite = is_sqlite(str(connection.engine.url))
    context.configure(
        connection=connection,
        # Autogenerate compares with the default schema, which is crawldb on PostgreSQL
        # (search_path) and the only one on SQLite; the migrations name the schema.
        target_metadata=unqualified_metadata(),
        # SQLite has no schemas: the engine translates "crawldb" away, but Alembic
        # inspects the version table by name, so it must not be told about the schema.
        version_table_schema=None if sqlite else SCHEMA,
        render_as_batch=sqlite,
    )
    with context.begin_transaction():
        context.run_migrations()


connection = config.attributes.get("connection")
if connection is not None:
    _run(connection)
else:
    engine = make_engine(resolve_crawldb_url(config.get_main_option("sqlalchemy.url")))
    with engine.begin() as conn:
        _run(conn)
