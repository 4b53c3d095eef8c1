"""A later run on crawldb's clock: ``move_clock`` moves every stored time back, as if the
wall clock had gone forward between two crawls (the crawler's own clock is left alone)."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import DateTime, Table, select, update

from govsi.store.database import make_engine
from govsi.store.schema import FEED, IMAGE, PAGE, PAGE_VERSION, SITE

__all__ = ["TIMES", "move_clock"]

# Every stored time a run reads back: each time column of the tables of pages (visits,
# changes, next visits, claims), pictures, the history, sites (robots.txt's age) and feeds.
TIMES: dict[Table, tuple[str, ...]] = {
    table: tuple(c.name for c in table.columns if isinstance(c.type, DateTime))
    for table in (PAGE, IMAGE, PAGE_VERSION, SITE, FEED)
}


def move_clock(db_url: str, by: timedelta) -> None:
    """crawldb as it would be ``by`` later: every stored time moved back by it."""
    engine = make_engine(db_url)
    try:
        with engine.begin() as conn:
            for table, columns in TIMES.items():
                cols = [table.c[c] for c in columns]
                for row in conn.execute(select(table.c.id, *cols)).all():
                    values = {c: v - by for c, v in zip(columns, row[1:], strict=True) if v}
                    if values:
                        conn.execute(update(table).where(table.c.id == row[0]).values(**values))
    finally:
        engine.dispose()
