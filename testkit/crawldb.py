"""A crawldb read back in tests: a query's rows as plain tuples, and the time fetches get;
a crawldb at an earlier revision, to test what an upgrade does with it."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest
from sqlalchemy import Engine, text

from govsi.store import database
from govsi.store.schema import SCHEMA

T = datetime(2026, 11, 22, 12, 0, 0)


def q(engine: Engine, sql: str) -> list[tuple]:
    with engine.connect() as conn:
        return [tuple(r) for r in conn.execute(text(sql))]


def upgrade_to(engine: Engine, revision: str, down: bool = False) -> None:
    """Bring crawldb's schema up (or ``down``) to Alembic ``revision``."""
    # Imported here: a test that asks what a crawl loads imports this module too.
    from alembic import command
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(database.migrations_dir()))
    with engine.begin() as conn:
        if conn.dialect.name == "postgresql":
            conn.execute(text(f"CREATE SCHEMA IF NOT EXISTS {SCHEMA}"))
        cfg.attributes["connection"] = conn
        (command.downgrade if down else command.upgrade)(cfg, revision)


def crawldb_at(
    request: pytest.FixtureRequest, tmp_path: Path, revision: str, name: str
) -> Iterator[Engine]:
    """An empty crawldb at Alembic ``revision``, on the back end ``request.param`` names
    (sqlite or postgresql: ``name`` is the database's), for a migration's tests."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'old.sqlite3'}"
    else:
        url = request.getfixturevalue("pg_cluster").create_database(name)
    engine = database.make_engine(url)
    upgrade_to(engine, revision)
    yield engine
    engine.dispose()
