"""Assemble a report from one consistent snapshot of crawldb, without writing to it.

The report may run while a crawl writes: on PostgreSQL it reads in one REPEATABLE READ,
READ ONLY transaction (MVCC readers never block writers); on SQLite in one read
transaction of the WAL (the crawl keeps writing; its checkpoints wait for the report).
Either way every table describes the same moment, so the totals agree with each other.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Engine, event, inspect, text
from sqlalchemy.pool import ConnectionPoolEntry

from govsi.report import queries
from govsi.report.graphs import Graph, domain_graph, site_graph
from govsi.report.sql import Dialect, Scope, Table, seed_site_ids, site_ids_of
from govsi.store import database, schema
from govsi.web import urls


class ReportError(RuntimeError):
    """The report cannot be made (no such database, not a crawldb, unknown site)."""


@dataclass
class Report:
    generated_at: str
    crawldb: str
    seed_sites: list[str]
    scopes: list[tuple[Scope, list[Table]]]
    domain_graph: Graph
    site_graph: Graph | None

    def scopes_by_name(self) -> dict[str, dict[str, Table]]:
        return {scope.name: {t.name: t for t in tables} for scope, tables in self.scopes}

    def as_dict(self) -> dict[str, Any]:
        return {
            "generated_at": self.generated_at,
            "crawldb": self.crawldb,
            "seed_sites": self.seed_sites,
            "scopes": {
                scope.name: {
                    "title": scope.title,
                    "sites": list(scope.domains),
                    "tables": {t.name: t.as_dict() for t in tables},
                }
                for scope, tables in self.scopes
            },
            "domain_graph": self.domain_graph.as_dict(),
            "site_graph": self.site_graph.as_dict() if self.site_graph else None,
        }


def host_of(name: str) -> str:
    """A host name from ``name``, which may be a URL."""
    name = name.strip()
    return urls.host_of(name) if "://" in name else name.lower().rstrip(".")


def report_engine(url: str) -> Engine:
    try:
        engine = database.reading_engine(url)
    except database.NoCrawldb as e:
        raise ReportError(str(e)) from None
    if not database.is_sqlite(url):
        return engine

    # pysqlite runs SELECTs outside transactions; the report needs one snapshot, so it
    # begins the transaction itself (SQLAlchemy's documented pysqlite recipe).
    @event.listens_for(engine, "connect")
    def _no_implicit(dbapi_conn: sqlite3.Connection, _record: ConnectionPoolEntry) -> None:
        dbapi_conn.isolation_level = None

    @event.listens_for(engine, "begin")
    def _begin(conn: Connection) -> None:
        conn.exec_driver_sql("BEGIN")

    return engine


@contextmanager
def snapshot(engine: Engine) -> Iterator[Connection]:
    options: dict[str, Any] = {}
    if engine.dialect.name == "postgresql":
        options = {"isolation_level": "REPEATABLE READ", "postgresql_readonly": True}
    with engine.connect().execution_options(**options) as conn, conn.begin() as tx:
        if engine.dialect.name == "postgresql":
            # PostgreSQL compiles a costly-looking query (JIT) first: seconds spent for a
            # report's aggregates that run in less (bench/README.md, report_speed).
            conn.execute(text("SET LOCAL jit = off"))
        try:
            yield conn
        finally:
            tx.rollback()


def check_schema(conn: Connection) -> None:
    """A crawldb written by this govsi (or a newer one): every column the models have."""
    schema_name = None if conn.dialect.name == "sqlite" else schema.SCHEMA
    seen = inspect(conn)
    missing: list[str] = []
    # The standard tables, and the extensions a table of the report reads by name.
    for name in (*schema.STANDARD_TABLES, "page_version", "page_version_content", "feed"):
        model = schema.METADATA.tables[f"{schema.SCHEMA}.{name}"]
        if not seen.has_table(name, schema=schema_name):
            missing.append(name)
            continue
        have = {c["name"] for c in seen.get_columns(name, schema=schema_name)}
        missing += [f"{name}.{c.name}" for c in model.columns if c.name not in have]
    if missing:
        raise ReportError(
            "not a crawldb this govsi wrote: missing " + ", ".join(missing) + ". A crawl with "
            "this version migrates an older govsi crawldb to the current schema."
        )


def build_report(
    engine: Engine,
    seeds: Sequence[str] = (),
    site: str | None = None,
    max_sites: int = 300,
    max_pages: int = 300,
    now: datetime | None = None,
) -> Report:
    """The report of ``engine``'s crawldb. ``seeds``: host names or URLs of the seed sites
    (default: the sites of the crawl's depth-0 pages); ``site``: whose page graph to draw
    (default: the seed site with most pages); ``now``: the time it reports as of (UTC,
    naive; default: the clock), which what is overdue is counted against."""
    with snapshot(engine) as conn:
        check_schema(conn)
        at = now or schema.utcnow()
        hosts = [host_of(s) for s in seeds if host_of(s)]
        seed_rows = site_ids_of(conn, hosts) if hosts else seed_site_ids(conn)
        seed_ids = [i for i, _ in seed_rows]
        seed_names = [d for _, d in seed_rows]
        dialect = Dialect(conn.dialect.name)
        scopes = [
            Scope("seed", "Seed sites", seed_ids, seed_names),
            Scope("all", "Whole database"),
        ]
        tables = [(scope, queries.scope_tables(conn, scope, dialect, at)) for scope in scopes]
        domains = domain_graph(conn, set(seed_ids), max_sites)
        chosen = _site(conn, site, domains, seed_ids)
        pages = site_graph(conn, chosen[0], chosen[1], max_pages) if chosen else None
    return Report(
        generated_at=at.isoformat(sep=" ", timespec="seconds"),
        crawldb=database.display_url(engine.url),
        seed_sites=seed_names,
        scopes=tables,
        domain_graph=domains,
        site_graph=pages,
    )


def _site(
    conn: Connection, site: str | None, domains: Graph, seed_ids: list[int]
) -> tuple[int, str] | None:
    if site:
        found = site_ids_of(conn, [host_of(site)])
        if not found:
            raise ReportError(f"site {site!r} is not in crawldb (see the hosts table)")
        return found[0]
    ranked = sorted(domains.nodes, key=lambda n: (n["id"] not in seed_ids, -n["pages"], n["id"]))
    return (ranked[0]["id"], ranked[0]["label"]) if ranked else None
