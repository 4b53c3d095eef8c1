"""A crawldb read back in tests: a query's rows as plain tuples, and the time fetches get."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Engine, text

T = datetime(2026, 11, 22, 12, 0, 0)


def q(engine: Engine, sql: str) -> list[tuple]:
    with engine.connect() as conn:
        return [tuple(r) for r in conn.execute(text(sql))]
