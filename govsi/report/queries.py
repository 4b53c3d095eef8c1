"""The report's numbers: SQL aggregates over crawldb, one query per table.

Every figure is counted by the database (``count``, ``sum``, ``GROUP BY``); Python only
formats the few rows that come back, so a report over millions of links reads a few
hundred rows. The SQL is plain, unqualified and the same on PostgreSQL and SQLite except
for timestamp arithmetic (``Dialect``), and each table carries the query that made it so
a reader can run it again.

The plumbing (``Table``, ``Scope``, ``Dialect``, running SQL) is ``govsi.report.sql``'s.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Connection, text

from govsi.items import STANDARD_PAGE_TYPES
from govsi.report.changes import last_round
from govsi.report.feeds import feed_problems, feeds_per_host
from govsi.report.history import history
from govsi.report.sql import (
    Dialect,
    Scope,
    Table,
    table,
    utc,
)

# Bucket widths for the crawl rate chart, seconds; the first that gives at most
# RATE_BUCKETS buckets over the crawl's span is used.
_MINUTES_AND_HOURS = (1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 21600, 43200)
NICE_WIDTHS: tuple[int, ...] = _MINUTES_AND_HOURS + tuple(
    86400 * d for d in (1, 2, 7, 14, 30, 90, 365)
)
RATE_BUCKETS = 120


def summary(conn: Connection, scope: Scope) -> Table:
    pf, sf = scope.pages(), scope.sites()
    fetched = "p.page_type_code <> 'FRONTIER'"
    sql = f"""
    SELECT
      (SELECT count(*) FROM site s WHERE 1 = 1{sf}) AS sites,
      (SELECT count(DISTINCT p.site_id) FROM page p WHERE {fetched}{pf}) AS sites_fetched,
      (SELECT count(*) FROM page p WHERE 1 = 1{pf}) AS pages,
      (SELECT count(*) FROM page p WHERE {fetched}{pf}) AS pages_fetched,
      (SELECT count(*) FROM page p WHERE p.page_type_code = 'FRONTIER'{pf}) AS frontier,
      (SELECT count(*) FROM page p WHERE p.page_type_code = 'HTML'{pf}) AS html,
      (SELECT count(*) FROM page p WHERE p.page_type_code = 'BINARY'{pf}) AS binary_pages,
      (SELECT count(*) FROM page p WHERE p.page_type_code = 'DUPLICATE'{pf}) AS duplicates,
      (SELECT count(*) FROM page p WHERE p.rendered{pf}) AS rendered,
      (SELECT count(*) FROM page_data d JOIN page p ON p.id = d.page_id
        WHERE 1 = 1{pf}) AS documents,
      (SELECT count(*) FROM image i JOIN page p ON p.id = i.page_id WHERE 1 = 1{pf}) AS images,
      (SELECT count(DISTINCT i.url) FROM image i JOIN page p ON p.id = i.page_id
        WHERE 1 = 1{pf}) AS image_urls,
      (SELECT count(*) FROM link l JOIN page p ON p.id = l.from_page WHERE 1 = 1{pf}) AS links,
      (SELECT count(*) FROM link l JOIN page p ON p.id = l.from_page
        JOIN page t ON t.id = l.to_page WHERE t.site_id <> p.site_id{pf}) AS links_to_other_sites,
      (SELECT max(p.depth) FROM page p WHERE {fetched}{pf}) AS depth_reached,
      (SELECT max(p.depth) FROM page p WHERE 1 = 1{pf}) AS depth_discovered
    """
    note = (
        "pages: rows of page (each canonical URL once); fetched: all but FRONTIER; "
        "images: rows of image, one per (page, picture); image_urls: distinct pictures; "
        "links: rows of link leaving the scope's pages; depth: link hops from a seed."
    )
    return table(conn, "summary", "At a glance", sql, note)


def pages_by_type(conn: Connection, scope: Scope) -> Table:
    sql = f"""
    SELECT t.code AS page_type, coalesce(x.pages, 0) AS pages
    FROM page_type t LEFT JOIN (
      SELECT p.page_type_code AS code, count(*) AS pages FROM page p
      WHERE 1 = 1{scope.pages()} GROUP BY p.page_type_code
    ) x ON x.code = t.code
    ORDER BY pages DESC, t.code
    """
    note = "OTHER: fetched, neither HTML nor a document; ERROR: no response (see fetch_errors)."
    return table(conn, "pages_by_type", "Pages by type", sql, note)


def duplicates(conn: Connection, scope: Scope) -> Table:
    sql = f"""
    SELECT kind, count(*) AS pages, avg(similarity) AS mean_similarity FROM (
      SELECT CASE WHEN o.id IS NULL THEN 'original unknown'
                  WHEN d.content_hash = o.content_hash THEN 'exact'
                  ELSE 'near' END AS kind, NULL AS similarity
      FROM page d LEFT JOIN page o ON o.id = d.duplicate_of
      WHERE d.page_type_code = 'DUPLICATE'{scope.pages("d")}
      UNION ALL
      SELECT 'near, kept (flagged)' AS kind, n.similarity AS similarity FROM page n
      WHERE n.near_duplicate_of IS NOT NULL{scope.pages("n")}
    ) x
    GROUP BY kind ORDER BY kind
    """
    note = (
        "exact: a DUPLICATE, stored without content, with the same main text as its "
        "original (equal content_hash); near: a DUPLICATE an earlier version stored for a "
        "MinHash near copy; near, kept (flagged): a page kept whole that resembles another "
        "(page.near_duplicate_of, page.similarity >= NEAR_DUPLICATE_THRESHOLD)."
    )
    return table(conn, "duplicates", "Duplicates", sql, note)


def documents_by_type(conn: Connection, scope: Scope) -> Table:
    sql = f"""
    SELECT t.code AS data_type, coalesce(x.documents, 0) AS documents, x.bytes AS bytes
    FROM data_type t LEFT JOIN (
      SELECT d.data_type_code AS code, count(*) AS documents, sum(d.size) AS bytes
      FROM page_data d JOIN page p ON p.id = d.page_id
      WHERE 1 = 1{scope.pages()} GROUP BY d.data_type_code
    ) x ON x.code = t.code
    ORDER BY documents DESC, t.code
    """
    return table(conn, "documents_by_type", "Documents by type", sql, "bytes: size as served.")


def image_types(conn: Connection, scope: Scope) -> Table:
    sql = f"""
    SELECT CASE WHEN i.accessed_time IS NULL THEN '(not downloaded yet)'
                ELSE coalesce(i.content_type, '(no Content-Type)') END AS content_type,
           count(*) AS images, count(DISTINCT i.url) AS distinct_urls
    FROM image i JOIN page p ON p.id = i.page_id
    WHERE 1 = 1{scope.pages()}
    GROUP BY 1 ORDER BY images DESC, content_type
    """
    note = "images: rows of image (a picture shown on three pages is three rows)."
    return table(conn, "image_types", "Images by content type", sql, note)


PER_PAGE = """
    SELECT p.id, (SELECT count(*) FROM image i WHERE i.page_id = p.id) AS n
    FROM page p WHERE p.page_type_code = 'HTML'{pf}
"""


def images_per_page(conn: Connection, scope: Scope) -> Table:
    sql = f"""
    SELECT count(*) AS html_pages, coalesce(sum(x.n), 0) AS images,
           avg(1.0 * x.n) AS images_per_html_page,
           sum(CASE WHEN x.n > 0 THEN 1 ELSE 0 END) AS pages_with_images,
           max(x.n) AS most_on_one_page
    FROM ({PER_PAGE.format(pf=scope.pages())}) x
    """
    note = (
        "Denominator: HTML pages (page_type_code 'HTML': fetched, not duplicates, not "
        "documents); numerator: their rows in image."
    )
    return table(conn, "images_per_page", "Images per HTML page", sql, note)


def images_per_page_histogram(conn: Connection, scope: Scope) -> Table:
    sql = f"""
    SELECT CASE WHEN x.n = 0 THEN '0' WHEN x.n = 1 THEN '1' WHEN x.n <= 5 THEN '2-5'
                WHEN x.n <= 10 THEN '6-10' WHEN x.n <= 20 THEN '11-20' ELSE 'over 20' END
             AS images_on_page,
           count(*) AS html_pages
    FROM ({PER_PAGE.format(pf=scope.pages())}) x
    GROUP BY 1 ORDER BY min(x.n)
    """
    return table(conn, "images_per_page_histogram", "HTML pages by number of images", sql)


def status_codes(conn: Connection, scope: Scope) -> Table:
    sql = f"""
    SELECT p.http_status_code AS status, count(*) AS pages
    FROM page p WHERE p.page_type_code <> 'FRONTIER'{scope.pages()}
    GROUP BY p.http_status_code ORDER BY p.http_status_code
    """
    note = "Fetched pages by HTTP status; empty status: no response (page type ERROR)."
    return table(conn, "status_codes", "HTTP status codes", sql, note)


def fetch_errors(conn: Connection, scope: Scope, limit: int = 20) -> Table:
    sql = f"""
    SELECT p.fetch_error AS error, count(*) AS pages
    FROM page p WHERE p.fetch_error IS NOT NULL{scope.pages()}
    GROUP BY p.fetch_error ORDER BY pages DESC, p.fetch_error LIMIT {int(limit)}
    """
    return table(conn, "fetch_errors", f"Fetches without a response (top {limit})", sql)


def budgets(conn: Connection, scope: Scope) -> Table:
    # The prefix is govsi.frontier.budgets.REASON_PREFIX (this module imports no govsi).
    sql = f"""
    SELECT s.domain AS host, p.fetch_error AS budget, count(*) AS pages_left
    FROM page p JOIN site s ON s.id = p.site_id
    WHERE p.page_type_code = 'FRONTIER' AND p.fetch_error LIKE 'budget: %'{scope.pages()}
    GROUP BY s.domain, p.fetch_error ORDER BY pages_left DESC, s.domain, p.fetch_error
    """
    note = (
        "Hosts a budget stopped (MAX_PAGES_PER_HOST, MAX_BYTES_PER_HOST, MAX_HOSTS), with "
        "their pages left in the frontier for a later run. Images past MAX_IMAGES_PER_HOST "
        "stay owed (image rows not downloaded); those and the spill and sitemap caps are "
        "counted in the crawl's stats, govsi/budget/<name>."
    )
    return table(conn, "budgets", "Budgets reached", sql, note)


def limits(conn: Connection, scope: Scope) -> Table:
    # Written by each run when it ends (govsi.store.limits): the whole crawl, any scope.
    sql = """
    SELECT name AS stat, sum(value) AS total, max(value) AS most_in_one_run,
      count(*) AS runs
    FROM crawl_limit WHERE name NOT LIKE 'govsi/warc/%' GROUP BY name ORDER BY name
    """
    note = (
        "The limits the crawl's runs reached, as their stats: budgets (govsi/budget/), trap "
        "rules (govsi/traps/), robots.txt checks refused unchecked, header caps, sitemaps "
        "cut at a cap, a rendered page's requests refused, the browser switched off, and the "
        "reactor's longest stall (govsi/reactor/max_stall_seconds: read most_in_one_run). "
        "See docs/failures.md."
    )
    return table(conn, "limits", "Limits reached", sql, note)


def archive(conn: Connection, scope: Scope) -> Table:
    # Written by each run when it ends, beside its limits: the whole crawl, any scope.
    sql = """
    SELECT substr(name, 12) AS figure, sum(value) AS total, count(*) AS runs
    FROM crawl_limit WHERE name LIKE 'govsi/warc/%' GROUP BY name ORDER BY name
    """
    note = (
        "What the runs wrote to the WARC archive (WARC_DIR; docs/archive.md): files, bytes "
        "on disk, records by type (request, response, revisit, conversion: a rendered "
        "page's DOM), and the payload bytes revisit records referred to instead of writing "
        "again (revisit_bytes_saved). Empty when no run archived."
    )
    return table(conn, "archive", "Web archive (WARC)", sql, note)


def depths(conn: Connection, scope: Scope) -> Table:
    kinds = STANDARD_PAGE_TYPES
    sums = ",\n".join(
        f"      sum(CASE WHEN p.page_type_code = '{k}' THEN 1 ELSE 0 END) AS {k.lower()}"
        for k in kinds
    )
    listed = ", ".join(f"'{k}'" for k in kinds)
    sql = f"""
    SELECT p.depth AS depth, count(*) AS pages,
{sums},
      sum(CASE WHEN p.page_type_code NOT IN ({listed})
          THEN 1 ELSE 0 END) AS other
    FROM page p WHERE 1 = 1{scope.pages()}
    GROUP BY p.depth ORDER BY p.depth
    """
    note = "depth: link hops from a seed (sitemap pages count as one hop below their host's root)."
    return table(conn, "depths", "Pages per depth", sql, note)


def rendering(conn: Connection, scope: Scope) -> Table:
    sql = f"""
    SELECT p.page_type_code AS page_type,
           sum(CASE WHEN p.rendered THEN 1 ELSE 0 END) AS rendered,
           sum(CASE WHEN p.rendered THEN 0 ELSE 1 END) AS as_served
    FROM page p WHERE p.page_type_code IN ('HTML', 'DUPLICATE'){scope.pages()}
    GROUP BY p.page_type_code ORDER BY p.page_type_code
    """
    note = "rendered: html_content is the DOM Chromium built (RENDER_JS), not the HTML as served."
    return table(conn, "rendering", "Pages rendered with JavaScript", sql, note)


def hosts(conn: Connection, scope: Scope, dialect: Dialect) -> Table:
    first, last = "min(p.accessed_time)", "max(p.accessed_time)"
    span = f"({dialect.epoch(last)} - {dialect.epoch(first)})"
    sql = f"""
    SELECT s.domain AS host, s.ip_address AS ip_address, s.crawl_delay AS crawl_delay,
      {span} / nullif(count(p.accessed_time) - 1, 0) AS mean_interval,
      count(p.id) AS pages,
      sum(CASE WHEN p.page_type_code <> 'FRONTIER' THEN 1 ELSE 0 END) AS fetched,
      sum(CASE WHEN p.page_type_code = 'HTML' THEN 1 ELSE 0 END) AS html,
      sum(CASE WHEN p.page_type_code = 'BINARY' THEN 1 ELSE 0 END) AS binary_pages,
      sum(CASE WHEN p.page_type_code = 'DUPLICATE' THEN 1 ELSE 0 END) AS duplicates,
      sum(CASE WHEN p.page_type_code = 'FRONTIER' THEN 1 ELSE 0 END) AS frontier,
      sum(CASE WHEN p.http_status_code >= 400 OR p.page_type_code = 'ERROR'
          THEN 1 ELSE 0 END) AS errors,
      {first} AS first_fetch, {last} AS last_fetch
    FROM site s LEFT JOIN page p ON p.site_id = s.id
    WHERE 1 = 1{scope.sites()}
    GROUP BY s.id, s.domain, s.ip_address, s.crawl_delay
    ORDER BY fetched DESC, s.domain
    """
    note = (
        "crawl_delay: the delay the crawler used for the host (seconds; DEFAULT_CRAWL_DELAY or "
        "its robots.txt Crawl-delay). mean_interval: seconds between its first and last "
        "fetch over the fetches between (pages only; hosts on one address share its delay)."
    )
    return table(conn, "hosts", "Hosts: pages and effective delay", sql, note)


def rate_width(span: float, buckets: int = RATE_BUCKETS) -> int:
    """The bucket width (s) of the crawl rate chart: the smallest nice width giving at most
    ``buckets`` buckets over ``span`` seconds."""
    for width in NICE_WIDTHS:
        if span / width < buckets:
            return width
    return NICE_WIDTHS[-1]


def crawl_rate(conn: Connection, scope: Scope, dialect: Dialect) -> Table:
    pf = scope.pages()
    epoch = dialect.epoch("p.accessed_time")
    bounds = f"SELECT min({epoch}), max({epoch}) FROM page p WHERE 1 = 1{pf}"
    start, end = conn.execute(text(bounds)).one()
    if start is None:
        return table(
            conn, "crawl_rate", "Crawl rate", "SELECT NULL AS minute, 0 AS pages WHERE 1 = 0"
        )
    t0, width = float(start), rate_width(float(end) - float(start))
    bucket = dialect.floor(f"({epoch} - {t0!r}) / {width}")
    sql = f"""
    SELECT {bucket} AS bucket, count(*) AS pages
    FROM page p WHERE p.accessed_time IS NOT NULL{pf}
    GROUP BY 1 ORDER BY 1
    """
    counted = table(conn, "crawl_rate", "Crawl rate", sql)
    per_bucket = {int(b): n for b, n in counted.rows}
    last = max(per_bucket, default=0)
    # Empty buckets are zero: a gap in the crawl shows as one.
    rows = [
        [utc(t0 + i * width), i * width, per_bucket.get(i, 0), per_bucket.get(i, 0) / width]
        for i in range(last + 1)
    ]
    note = (
        f"Fetches (page rows with accessed_time) per {width} s from the first, at {utc(t0)} "
        "UTC; seconds: since then."
    )
    return Table(
        "crawl_rate",
        "Crawl rate over time",
        ["bucket_start_utc", "seconds", "pages", "pages_per_second"],
        rows,
        counted.sql,
        note,
    )


def scope_tables(conn: Connection, scope: Scope, dialect: Dialect, now: datetime) -> list[Table]:
    """Every table of ``scope``, as of ``now`` (UTC, naive: the report's time)."""
    return [
        summary(conn, scope),
        pages_by_type(conn, scope),
        duplicates(conn, scope),
        documents_by_type(conn, scope),
        image_types(conn, scope),
        images_per_page(conn, scope),
        images_per_page_histogram(conn, scope),
        status_codes(conn, scope),
        fetch_errors(conn, scope),
        budgets(conn, scope),
        limits(conn, scope),
        archive(conn, scope),
        depths(conn, scope),
        rendering(conn, scope),
        hosts(conn, scope, dialect),
        last_round(conn, scope, dialect),
        history(conn, scope),
        feeds_per_host(conn, scope, dialect, now),
        feed_problems(conn, scope),
        crawl_rate(conn, scope, dialect),
    ]
