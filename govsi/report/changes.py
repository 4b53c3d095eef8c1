"""The report's table of the last round: per host, what its visits found.

The last round starts at ``crawl_meta.round_started`` (``govsi.store.rounds``: the run that
started it and those that joined it within ``REVISIT_MIN_INTERVAL``); every page visited
since counts once, by its last visit's ``page.visit_outcome`` (``govsi.revisit.change``).
The start goes into the SQL as a literal in the form both databases compare timestamps
with, so the text shown runs unchanged in psql or sqlite3. No round recorded (no run with
REVISIT on since govsi marked rounds): the table is empty and says so.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Connection, text

from govsi.report.sql import Dialect, Scope, Table, flat, table
from govsi.revisit.change import OUTCOMES
from govsi.store.rounds import STARTED

__all__ = ["COLUMNS", "last_round", "round_start"]

NAME, TITLE = "last_round", "Changes in the last round"
COLUMNS = ["host", "new", "revisited", *(o for o in OUTCOMES if o != "new"), "bytes_saved_by_304"]
_STARTED_SQL = f"SELECT value FROM crawl_meta WHERE key = '{STARTED}'"
NOTE = (
    "Pages visited since the last round started, by host and by what their last visit "
    "found: new (first visit); revisited (all the others): not_modified (a 304 to a "
    "conditional request), same (fetched again: main content, status and type as stored), "
    "changed (main content, a document's bytes, type or another status), gone (now 404 or "
    "410), moved (now a redirect, or one leading elsewhere), kept (no usable answer, or "
    "robots.txt now forbids it: the stored copy kept, the reason in fetch_error). "
    "bytes_saved_by_304: the stored copy's size for each 304 (html_content as stored, in "
    "UTF-8; a document's size as served; a copy's, its original's): about what the full "
    "answers would have carried, before any compression. Pictures are not counted."
)


def round_start(conn: Connection) -> datetime | None:
    """When the last round started (None: none recorded, or unreadable)."""
    value = conn.execute(text(_STARTED_SQL)).scalar()
    try:
        return None if value is None else datetime.fromisoformat(str(value))
    except ValueError:
        return None


def last_round(conn: Connection, scope: Scope, dialect: Dialect) -> Table:
    start = round_start(conn)
    if start is None:
        none = "No round recorded: no run with REVISIT on since govsi began marking rounds."
        return Table(NAME, TITLE, COLUMNS, [], flat(_STARTED_SQL), none)
    counts = ",\n".join(
        f"      sum(CASE WHEN p.visit_outcome = '{o}' THEN 1 ELSE 0 END) AS {o}"
        for o in OUTCOMES
        if o != "new"
    )
    # The stored copy's size: its HTML, its document's, or its original's (a DUPLICATE).
    document = "(SELECT max(d.size) FROM page_data d WHERE d.page_id = p.id)"
    html = dialect.octets("o.html_content")
    original = f"(SELECT {html} FROM page o WHERE o.id = p.duplicate_of)"
    size = f"coalesce({dialect.octets('p.html_content')}, {document}, {original})"
    sql = f"""
    SELECT s.domain AS host,
      sum(CASE WHEN p.visit_outcome = 'new' THEN 1 ELSE 0 END) AS new,
      sum(CASE WHEN p.visit_outcome <> 'new' THEN 1 ELSE 0 END) AS revisited,
{counts},
      coalesce(sum(CASE WHEN p.visit_outcome = 'not_modified' THEN {size} END), 0)
        AS bytes_saved_by_304
    FROM page p JOIN site s ON s.id = p.site_id
    WHERE p.visit_time >= '{start:%Y-%m-%d %H:%M:%S.%f}'{scope.pages()}
    GROUP BY s.id, s.domain
    ORDER BY count(*) DESC, s.domain
    """
    began = start.isoformat(sep=" ", timespec="seconds")
    return table(conn, NAME, TITLE, sql, f"The last round started {began} UTC. {NOTE}")
