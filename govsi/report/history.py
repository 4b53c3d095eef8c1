"""The report's table of kept history: per host, the earlier versions crawldb holds and
their size.

A page's earlier versions are ``page_version`` rows; their HTML is stored once per page and
distinct content in ``page_version_content`` (``govsi.store.history``, which also drops
what HISTORY_KEEP_VERSIONS and HISTORY_KEEP_MONTHS do not keep). ``bytes`` is what the
HTML takes as stored; ``bytes_if_unshared`` what it would take with a copy per version,
which is what sharing saves.
"""

from __future__ import annotations

from sqlalchemy import Connection

from govsi.report.sql import Scope, Table, table

__all__ = ["COLUMNS", "history"]

NAME, TITLE = "history", "History kept"
COLUMNS = ["host", "pages", "versions", "contents", "bytes", "bytes_if_unshared", "oldest"]
NOTE = (
    "Earlier versions of pages that changed, by host: pages (with at least one), versions "
    "(rows of page_version), contents (distinct HTML stored, once per page and content: "
    "page_version_content), bytes (their size in UTF-8), bytes_if_unshared (a copy per "
    "version), oldest (when the oldest kept version was first seen). Each page keeps its "
    "last HISTORY_KEEP_VERSIONS versions and the last one of each of the "
    "HISTORY_KEEP_MONTHS months up to its latest change (docs/stored.md, History)."
)


def history(conn: Connection, scope: Scope) -> Table:
    pf = scope.pages()
    sql = f"""
    SELECT s.domain AS host, v.pages AS pages, v.versions AS versions,
      coalesce(c.contents, 0) AS contents, coalesce(c.bytes, 0) AS bytes,
      v.bytes_if_unshared AS bytes_if_unshared, v.oldest AS oldest
    FROM (
      SELECT p.site_id AS site_id, count(DISTINCT x.page_id) AS pages, count(*) AS versions,
        coalesce(sum(y.size), 0) AS bytes_if_unshared,
        min(coalesce(x.changed_time, x.accessed_time)) AS oldest
      FROM page_version x JOIN page p ON p.id = x.page_id
        LEFT JOIN page_version_content y ON y.id = x.content_id
      WHERE 1 = 1{pf}
      GROUP BY p.site_id
    ) v
    JOIN site s ON s.id = v.site_id
    LEFT JOIN (
      SELECT p.site_id AS site_id, count(*) AS contents, sum(y.size) AS bytes
      FROM page_version_content y JOIN page p ON p.id = y.page_id
      WHERE 1 = 1{pf}
      GROUP BY p.site_id
    ) c ON c.site_id = v.site_id
    ORDER BY bytes DESC, versions DESC, s.domain
    """
    return table(conn, NAME, TITLE, sql, NOTE)
