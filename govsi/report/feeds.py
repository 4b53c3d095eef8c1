"""The report's feeds and sitemaps: per host and kind, what the crawl polls and how it goes;
and the worst of those failing, gone or moved, by URL.

Both tables read crawldb's ``feed`` table (``govsi.store.feeds``): a row per feed or
sitemap URL, its last poll written over it. Per host and kind: rows in each state
(``items.FeedStatus``), rows never polled, rows failing (``failures > 0``: failed polls in a
row, so their last poll failed; parked ones among them) and the longest run, the oldest
last poll of an active row whose last poll succeeded (crawldb keeps no time of a failing
row's last success), the active rows whose next poll (never polled: since found) is past
the report's time and the one most overdue, and the entries and new entries active rows'
last polls read. The list: ``PROBLEMS_SHOWN`` rows failing, gone or moved, longest failing
first, each with its last status or error (cut to ``ERROR_CHARS``), and how many there are.
The report's time goes into the SQL as a literal, so the text shown reruns unchanged.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from typing import get_args

from sqlalchemy import Connection, text

from govsi.items import FeedStatus
from govsi.report.sql import Dialect, Scope, Table, table

__all__ = ["HOST_COLUMNS", "PROBLEM_COLUMNS", "feed_problems", "feeds_per_host"]

STATES: tuple[FeedStatus, ...] = get_args(FeedStatus)
# The problem list's length, and the characters of a poll's error it shows: a report over
# a year's crawl of every gov.si host stays a page an operator reads.
PROBLEMS_SHOWN, ERROR_CHARS = 50, 300

HOSTS, HOSTS_TITLE = "feeds", "Feeds and sitemaps polled"
HOST_COLUMNS = [
    "host", "kind", "urls", *STATES, "never_polled", "failing", "most_failures_in_a_row",
    "oldest_good_poll", "overdue", "most_overdue_h", "entries", "new_entries",
]  # fmt: skip
HOSTS_NOTE = (
    "urls: rows of crawldb's feed table by host and kind (feed: RSS, Atom, JSON Feed a page "
    "declares; sitemap: robots.txt's, and those a sitemap index names), by state: active "
    "(polled when due), gone (parked after 404/410 answers in a row, asked again only "
    "FEED_FORGET_AFTER later), moved (a permanent redirect: moved_to is polled instead), "
    "unlisted (a sitemap robots.txt no longer lists). never_polled: found, no poll yet. "
    "failing: its last poll failed (failures > 0: no answer, an HTTP error, a redirect not "
    "followed, a body without entries; gone rows among them); most_failures_in_a_row: the "
    "longest such run (each doubles the wait, up to FEED_BACKOFF_MAX). oldest_good_poll: "
    "the oldest last poll among active rows whose last poll succeeded. overdue: active rows "
    "whose next_poll (never polled: when found) is before the report's time; "
    "most_overdue_h: hours the most overdue one is late (a run polls the due ones at its "
    "start: well past the time between runs, the runs stopped polling it). "
    "entries, new_entries: what active rows' last polls read, and of it what the crawl "
    "did not know (a 304 keeps the earlier poll's counts). docs/stored.md, Feeds and "
    "sitemaps, polled."
)
EMPTY = "No feeds or sitemaps polled: the feed table has no row for these sites."

PROBLEMS, PROBLEMS_TITLE = "feed_problems", "Feeds and sitemaps failing, gone or moved"
PROBLEM_COLUMNS = [
    "url", "host", "kind", "state", "failures", "last_status", "last_error", "last_polled",
    "next_poll", "moved_to",
]  # fmt: skip
PROBLEMS_NOTE = (
    f"The {PROBLEMS_SHOWN} worst: the longest runs of failed polls first, then the active "
    "ones failing, the gone, the moved. last_status: the last poll's HTTP status (empty: "
    f"no answer, last_error says why, its first {ERROR_CHARS} characters). moved_to: the "
    "URL polled instead of a moved one. All of them: the SQL without its LIMIT."
)
NO_PROBLEMS = "No feed or sitemap failing, gone or moved."


def feeds_per_host(conn: Connection, scope: Scope, dialect: Dialect, now: datetime) -> Table:
    """Per host and kind, the feed rows' states, failures, lateness and entries as of
    ``now`` (UTC, naive); its caption says the totals, or that there is none."""
    at, epoch = _literal(now), now.replace(tzinfo=UTC).timestamp()
    states = ",\n".join(
        f"      sum(CASE WHEN f.state = '{s}' THEN 1 ELSE 0 END) AS {s}" for s in STATES
    )
    late = f"round(CAST(({epoch!r} - {dialect.epoch('min(f.due)')}) / 3600.0 AS NUMERIC), 1)"
    sql = f"""
    SELECT s.domain AS host, f.kind AS kind, count(*) AS urls,
{states},
      sum(CASE WHEN f.polled_at IS NULL THEN 1 ELSE 0 END) AS never_polled,
      sum(CASE WHEN f.failures > 0 THEN 1 ELSE 0 END) AS failing,
      max(f.failures) AS most_failures_in_a_row,
      min(CASE WHEN f.state = 'active' AND f.failures = 0 THEN f.polled_at END)
        AS oldest_good_poll,
      sum(CASE WHEN f.due < {at} THEN 1 ELSE 0 END) AS overdue,
      CASE WHEN min(f.due) < {at} THEN {late} END AS most_overdue_h,
      coalesce(sum(CASE WHEN f.state = 'active' THEN f.entries END), 0) AS entries,
      coalesce(sum(CASE WHEN f.state = 'active' THEN f.new_entries END), 0) AS new_entries
    FROM (
      SELECT x.site_id, x.kind, x.state, x.failures, x.polled_at, x.entries, x.new_entries,
        CASE WHEN x.state = 'active' THEN coalesce(x.next_poll, x.found_at) END AS due
      FROM feed x WHERE 1 = 1{scope.pages("x")}
    ) f
    LEFT JOIN site s ON s.id = f.site_id
    GROUP BY f.site_id, s.domain, f.kind
    ORDER BY failing DESC, gone DESC, overdue DESC, host, kind
    """
    made = table(conn, HOSTS, HOSTS_TITLE, sql, HOSTS_NOTE)
    return replace(made, caption=totals(made) if made.rows else EMPTY)


def totals(per_host: Table) -> str:
    """One line of the per-host table's totals, as an operator reads them first."""
    rows = per_host.records()

    def count(column: str, kind: str | None = None) -> int:
        return sum(int(r[column] or 0) for r in rows if kind is None or r["kind"] == kind)

    hosts = len({r["host"] for r in rows})
    late = max((r["most_overdue_h"] for r in rows if r["most_overdue_h"] is not None), default=None)
    line = (
        f"{_n(count('urls', 'feed'), 'feed')} and {_n(count('urls', 'sitemap'), 'sitemap')} "
        f"on {_n(hosts, 'host')}: {count('failing')} failing, "
        + ", ".join(f"{count(s)} {s}" for s in STATES if s != "active")
        + f"; {count('never_polled')} never polled; {count('overdue')} overdue"
    )
    if late is not None:
        line += f" (the most by {float(late):.1f} h)"
    return f"{line}; {count('new_entries')} new entries in the last polls."


def feed_problems(conn: Connection, scope: Scope) -> Table:
    """The ``PROBLEMS_SHOWN`` worst rows failing, gone or moved; its caption says how many
    there are, or that there is none."""
    where = f"(f.failures > 0 OR f.state IN ('gone', 'moved')){scope.pages('f')}"
    sql = f"""
    SELECT f.url AS url, s.domain AS host, f.kind AS kind, f.state AS state,
      f.failures AS failures, f.poll_status AS last_status,
      substr(f.poll_error, 1, {ERROR_CHARS}) AS last_error, f.polled_at AS last_polled,
      f.next_poll AS next_poll, f.moved_to AS moved_to
    FROM feed f LEFT JOIN site s ON s.id = f.site_id
    WHERE {where}
    ORDER BY f.failures DESC,
      CASE f.state WHEN 'active' THEN 0 WHEN 'gone' THEN 1 ELSE 2 END, f.url
    LIMIT {PROBLEMS_SHOWN}
    """
    made = table(conn, PROBLEMS, PROBLEMS_TITLE, sql, PROBLEMS_NOTE)
    counted = int(conn.execute(text(f"SELECT count(*) FROM feed f WHERE {where}")).scalar_one())
    if not counted:
        caption = NO_PROBLEMS
    elif counted > len(made.rows):
        caption = f"The {len(made.rows)} worst of {counted}; {counted - len(made.rows)} more."
    else:
        caption = f"All {counted}."
    return replace(made, caption=caption)


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def _literal(when: datetime) -> str:
    """A time as both databases compare it with a timestamp column (SQLite's stored text)."""
    return f"'{when:%Y-%m-%d %H:%M:%S.%f}'"
