"""The report's SQL plumbing: the ``Table`` a query makes, the ``Scope`` it counts over, the
``Dialect`` differences, and running plain SQL text.

A *scope* is a set of sites: the seed sites (those with a depth-0 page, i.e. a seed URL)
or the whole database. Site ids are read from the database and written into the SQL as
integer literals, so the same text runs in psql or sqlite3 unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from sqlalchemy import Connection, text


@dataclass(frozen=True)
class Table:
    """One table of the report: what the JSON, CSV and HTML show, and the SQL behind it."""

    name: str
    title: str
    columns: list[str]
    rows: list[list[Any]]
    sql: str
    note: str = ""
    # A line of this scope's own under the table (its totals, what was left out), shown in
    # place of "None." when it has no row.
    caption: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {
            "title": self.title,
            "columns": self.columns,
            "rows": self.rows,
            "note": self.note,
            "caption": self.caption,
            "sql": self.sql,
        }

    def records(self) -> list[dict[str, Any]]:
        return [dict(zip(self.columns, row, strict=True)) for row in self.rows]


@dataclass(frozen=True)
class Scope:
    name: str
    title: str
    # None: the whole database.
    site_ids: Sequence[int] | None = None
    domains: Sequence[str] = field(default_factory=tuple)

    def pages(self, alias: str = "p") -> str:
        """A WHERE condition (with its leading AND) keeping ``alias``'s pages in scope."""
        return "" if self.site_ids is None else f" AND {alias}.site_id IN ({self._ids()})"

    def sites(self, alias: str = "s") -> str:
        return "" if self.site_ids is None else f" AND {alias}.id IN ({self._ids()})"

    def _ids(self) -> str:
        # NULL keeps "IN ()" valid SQL when no seed site is known: nothing is in scope.
        return ", ".join(str(int(i)) for i in self.site_ids or ()) or "NULL"


class Dialect:
    """The SQL that differs between PostgreSQL and SQLite: timestamps as epoch seconds
    (SQLite keeps them as ISO text), text lengths in bytes and rounding down."""

    def __init__(self, name: str) -> None:
        self.sqlite = name == "sqlite"

    def epoch(self, expr: str) -> str:
        if self.sqlite:
            # julianday's double is good to ~40 µs at today's dates: round to the ms.
            return f"round((julianday({expr}) - 2440587.5) * 86400.0, 3)"
        return f"EXTRACT(EPOCH FROM {expr})"

    def octets(self, expr: str) -> str:
        """The length of text ``expr`` in bytes (UTF-8), not characters."""
        return f"length(CAST({expr} AS BLOB))" if self.sqlite else f"octet_length({expr})"

    @property
    def join_in_order(self) -> str:
        """A join kept in the order written: SQLite's planner keeps a CROSS JOIN's, and
        may pick a far slower one for a JOIN of several tables; PostgreSQL's is free."""
        return "CROSS JOIN" if self.sqlite else "JOIN"

    @property
    def lookup_cte(self) -> str:
        """A CTE of a table's few columns that a query looks rows up in: a table of its own
        on SQLite (a row lookup in the table reads past its wide columns), folded into
        the query on PostgreSQL (whose planner then has the table's statistics)."""
        return "" if self.sqlite else "NOT MATERIALIZED"

    def floor(self, expr: str) -> str:
        # Bucket numbers are never negative, where truncation is floor.
        return f"CAST({expr} AS INTEGER)" if self.sqlite else f"floor({expr})"


def plain(value: Any) -> Any:
    """A database value as JSON has it: Decimal → int or float, timestamps as ISO text."""
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, datetime):
        return value.isoformat(sep=" ", timespec="seconds")
    return value


def utc(epoch: float) -> str:
    return (
        datetime.fromtimestamp(epoch, UTC)
        .replace(tzinfo=None)
        .isoformat(sep=" ", timespec="seconds")
    )


def flat(sql: str) -> str:
    """SQL on one line, as the report shows it."""
    return " ".join(sql.split())


def run(conn: Connection, sql: str) -> list[list[Any]]:
    return [[plain(v) for v in row] for row in conn.execute(text(sql))]


def table(conn: Connection, name: str, title: str, sql: str, note: str = "") -> Table:
    result = conn.execute(text(sql))
    columns = list(result.keys())
    return Table(name, title, columns, [[plain(v) for v in row] for row in result], flat(sql), note)


def seed_site_ids(conn: Connection) -> list[tuple[int, str]]:
    """The sites of the seed URLs: a crawl stores each seed as a depth-0 page."""
    sql = (
        "SELECT s.id, s.domain FROM site s WHERE EXISTS "
        "(SELECT 1 FROM page p WHERE p.site_id = s.id AND p.depth = 0) ORDER BY s.domain"
    )
    return [(int(i), str(d)) for i, d in conn.execute(text(sql))]


def site_ids_of(conn: Connection, domains: Sequence[str]) -> list[tuple[int, str]]:
    if not domains:
        return []
    names = ", ".join("'" + d.replace("'", "''") + "'" for d in domains)
    sql = f"SELECT id, domain FROM site WHERE domain IN ({names}) ORDER BY domain"
    return [(int(i), str(d)) for i, d in conn.execute(text(sql))]
