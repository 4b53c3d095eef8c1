"""Shared fixtures: the simulated web, a throwaway PostgreSQL cluster, and the crawl of the
web the end-to-end tests of the crawl and its archive share."""

from __future__ import annotations

import itertools
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine

from govsi.store import database
from testkit.govcrawl import Result, crawl_gov
from testkit.pgcluster import PgCluster, find_pg_bin
from testkit.simweb import govweb
from testkit.simweb.server import SimWeb


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # Every test in a test_e2e_* file crawls the simulated web with real processes (about
    # ten minutes in all); the marker lets `-m "not e2e"` be the quick loop.
    for item in items:
        if item.path.name.startswith("test_e2e_"):
            item.add_marker(pytest.mark.e2e)
    # The end-to-end files first (a stable sort: each file's tests keep their order): they
    # are the longest, and the workers (loadfile) then end together on short unit files
    # instead of one of them running a long crawl alone at the end.
    items.sort(key=lambda item: not item.path.name.startswith("test_e2e_"))


def pytest_make_parametrize_id(config: pytest.Config, val: object, argname: str) -> str | None:
    # Bytes that are not plain text (gzip's header holds the time it was made) get an id
    # of their length: every xdist worker must collect the same test ids.
    if isinstance(val, bytes) and not (val.isascii() and val.decode().isprintable()):
        return f"{argname}-{len(val)}-bytes"
    return None


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[PgCluster]:
    bin_dir = find_pg_bin()
    if bin_dir is None:
        # CI must never pass by silently skipping the PostgreSQL half.
        if os.environ.get("CI"):
            pytest.fail("PostgreSQL server binaries (initdb, pg_ctl) not found")
        pytest.skip("PostgreSQL server binaries not found (set PG_BIN)")
    cluster = PgCluster(bin_dir)
    cluster.start()
    yield cluster
    cluster.stop()


@pytest.fixture(scope="session")
def gov_web() -> Iterator[SimWeb]:
    web = govweb.build().start()
    yield web
    web.stop()


@pytest.fixture(scope="session", params=["sqlite", "postgresql"])
def crawled(
    request: pytest.FixtureRequest, gov_web: SimWeb, tmp_path_factory: pytest.TempPathFactory
) -> Result:
    """The web crawled once per database (PostgreSQL keeping documents' bytes)."""
    work = tmp_path_factory.mktemp(f"crawl-{request.param}")
    if request.param == "sqlite":
        return crawl_gov(gov_web, f"sqlite:///{work / 'crawldb.sqlite3'}", work, False)
    db_url = request.getfixturevalue("pg_cluster").create_database("e2e")
    return crawl_gov(gov_web, db_url, work, True)


_db_names = itertools.count()


# Migrating an empty crawldb takes most of a second on either back end, and hundreds of
# tests ask for one: each worker migrates one of each once, and every test gets a copy.
@pytest.fixture(scope="session")
def migrated_sqlite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An empty crawldb migrated once per worker: the SQLite file ``engine`` copies."""
    path = tmp_path_factory.mktemp("migrated") / "crawldb.sqlite3"
    eng = database.make_engine(f"sqlite:///{path}")
    database.migrate(eng)
    eng.dispose()
    return path


@pytest.fixture(scope="session")
def migrated_pg(pg_cluster: PgCluster) -> str:
    """The name of an empty crawldb migrated once per worker on the test PostgreSQL, the
    template of ``engine``'s and ``pg``'s databases (nothing stays connected to it)."""
    name = "migrated_template"
    eng = database.make_engine(pg_cluster.create_database(name))
    database.migrate(eng)
    eng.dispose()
    return name


@pytest.fixture(params=["sqlite", "postgresql"])
def engine(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Engine]:
    """A migrated, empty crawldb: an SQLite file, then a database on the test PostgreSQL."""
    if request.param == "sqlite":
        path = tmp_path / "crawldb.sqlite3"
        shutil.copyfile(request.getfixturevalue("migrated_sqlite"), path)
        yield from _migrated(f"sqlite:///{path}")
    else:
        yield from _migrated_pg(request)


@pytest.fixture
def pg(request: pytest.FixtureRequest) -> Iterator[Engine]:
    """A migrated, empty crawldb on the test PostgreSQL only: what several workers share."""
    yield from _migrated_pg(request)


def _migrated_pg(request: pytest.FixtureRequest) -> Iterator[Engine]:
    cluster: PgCluster = request.getfixturevalue("pg_cluster")
    template: str = request.getfixturevalue("migrated_pg")
    yield from _migrated(cluster.create_database(f"unit{next(_db_names)}", template=template))


def _migrated(url: str) -> Iterator[Engine]:
    eng = database.make_engine(url)
    database.migrate(eng)  # a copy of a migrated crawldb: a check of its revision
    yield eng
    eng.dispose()
