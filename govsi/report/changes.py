"""The report's table of the last round: per host, what its visits found, and how late
its new pages were stored after the crawl could have known of them.

The last round starts at ``crawl_meta.round_started`` (``govsi.store.rounds``: the run that
started it and those that joined it within ``REVISIT_MIN_INTERVAL``); every page visited
since counts once, by its last visit's ``page.visit_outcome`` (``govsi.revisit.change``).
The start goes into the SQL as a literal in the form both databases compare timestamps
with, so the text shown runs unchanged in psql or sqlite3. No round recorded (no run with
REVISIT on since govsi marked rounds): the table is empty and says so.

Discovery latency, of each page the round visited first (``new``): its first fetch
(``visit_time``) less the earliest first fetch of the stored version (``changed_time``;
``accessed_time`` for rows older than it) of a fetched page linking to it (``link``; not
itself, nor a copy to its original), among those versions first fetched no later than it.
crawldb keeps a page's links of its last fetch only, and no time a link or a feed's or
sitemap's entry was first seen, so this is the closest recorded measure of "the crawl
could have known of it since": a link a page's template gained while its main content
stayed the same counts from that content's first fetch (too long), one an earlier version
held already from the stored version's (too short); a page no such version links to (found
in a feed, a sitemap or as a seed only) has none. Per host: the pages with a figure, their
median and 90th percentile (nearest rank), in hours.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Connection, text

from govsi.report.sql import Dialect, Scope, Table, flat, table
from govsi.revisit.change import OUTCOMES
from govsi.store.rounds import STARTED

__all__ = ["COLUMNS", "last_round", "round_start"]

NAME, TITLE = "last_round", "Changes in the last round"
LATENCY = ["discovery_latency_pages", "discovery_latency_median_h", "discovery_latency_p90_h"]
COLUMNS = [
    "host", "new", "revisited", *(o for o in OUTCOMES if o != "new"), "bytes_saved_by_304",
    *LATENCY,
]  # fmt: skip
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
    "answers would have carried, before any compression. Pictures are not counted. "
    "discovery_latency: for the new pages a fetched page links to, the hours from the "
    "earliest first fetch of a linking page's stored version (no later than the new "
    "page's) to the new page's first fetch: their number, median and 90th percentile. "
    "Pages found only in a feed, a sitemap or as seeds have none."
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
    since = f"'{start:%Y-%m-%d %H:%M:%S.%f}'"
    sql = f"""
    WITH visited AS {dialect.lookup_cte} (
      SELECT id, site_id, visit_outcome, visit_time, duplicate_of,
        coalesce(changed_time, accessed_time) AS seen
      FROM page WHERE accessed_time IS NOT NULL
    ),
    latency AS ({_latency(since, scope, dialect)}
    )
    SELECT s.domain AS host,
      sum(CASE WHEN p.visit_outcome = 'new' THEN 1 ELSE 0 END) AS new,
      sum(CASE WHEN p.visit_outcome <> 'new' THEN 1 ELSE 0 END) AS revisited,
{counts},
      coalesce(sum(CASE WHEN p.visit_outcome = 'not_modified' THEN {size} END), 0)
        AS bytes_saved_by_304,
      coalesce(max(l.pages), 0) AS discovery_latency_pages,
      max(l.median) AS discovery_latency_median_h,
      max(l.p90) AS discovery_latency_p90_h
    FROM page p JOIN site s ON s.id = p.site_id
    LEFT JOIN latency l ON l.site_id = s.id
    WHERE p.visit_time >= {since}{scope.pages()}
    GROUP BY s.id, s.domain
    ORDER BY count(*) DESC, s.domain
    """
    began = start.isoformat(sep=" ", timespec="seconds")
    return table(conn, NAME, TITLE, sql, f"The last round started {began} UTC. {NOTE}")


def _latency(since: str, scope: Scope, dialect: Dialect) -> str:
    """Per site: the round's new pages with a discovery latency, its median and 90th
    percentile in hours (nearest rank: the ceil(q n)-th smallest, in integer arithmetic,
    as SQLite has no percentile function)."""
    hours = f"({dialect.epoch('n.visit_time')} - {dialect.epoch('min(f.seen)')}) / 3600.0"
    # ``visited``: the fetched pages' columns the figure needs. On SQLite, a table of its
    # own, read from the linking pages through link's primary key (from_page, to_page),
    # which holds both ends: page's rows, with their HTML, are slow to look up one by one.
    return f"""
      SELECT site_id, count(*) AS pages,
        round(CAST(max(CASE WHEN r = (cnt + 1) / 2 THEN hours END) AS NUMERIC), 2) AS median,
        round(CAST(max(CASE WHEN r = (9 * cnt + 9) / 10 THEN hours END) AS NUMERIC), 2) AS p90
      FROM (
        SELECT site_id, hours,
          row_number() OVER (PARTITION BY site_id ORDER BY hours) AS r,
          count(*) OVER (PARTITION BY site_id) AS cnt
        FROM (
          SELECT n.site_id, {hours} AS hours
          FROM visited f {dialect.join_in_order} link k ON k.from_page = f.id
            {dialect.join_in_order} visited n ON n.id = k.to_page
          WHERE n.visit_outcome = 'new' AND n.visit_time >= {since}{scope.pages("n")}
            AND f.id <> n.id AND coalesce(f.duplicate_of, 0) <> n.id
            AND f.seen <= n.visit_time
          GROUP BY n.id, n.site_id, n.visit_time
        ) w
      ) ranked
      GROUP BY site_id"""
