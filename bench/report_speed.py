"""Crawl report benchmark (issue 7): ``scrapy report`` on a large generated crawldb.

Builds a crawldb of ``--pages`` pages on ``--sites`` hosts with ``--links`` links (set-based
SQL, so a million links take seconds to make), then runs the real command
(``python -m scrapy report``) and measures its wall time and peak memory (max RSS). Run
at two sizes to see that memory stays flat: the report pulls aggregates, not rows.

    PYTHONPATH=. python -m bench.report_speed        # 100 000 pages, 1 000 000 links, both DBs
    PYTHONPATH=. python -m bench.report_speed --backend sqlite --pages 20000 --links 200000

What the generated crawldb looks like (deterministic): pages spread over the sites
round-robin; 10 % FRONTIER, 2 % BINARY (with page_data), 2.5 % DUPLICATE (alternately an
exact and a near copy of the site's page before), the rest HTML with ``--html-bytes`` of
incompressible content, one fetch every 0.2 s, depth growing with the page number, 1 %
404s; the last round started halfway (its pages' first visits, the earlier ones' visits
before it); two images per HTML page out of a pool of 50 per site; per page ``links/pages``
links, nine in ten to pages of the same site and one in ten to one of 20 hub sites (as
.gov.si links mostly go to gov.si). Writes bench/results/report_speed.json; exits 1 when
the report took longer than ``--limit`` seconds; the reports are kept in
bench/results/report-<backend>/.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, text

from bench.lib.postgres import start_postgres
from bench.lib.results import RESULTS, write_run
from govsi.store import database
from govsi.store.rounds import STARTED
from testkit.crawl import run_report
from testkit.pgcluster import PgCluster


def series(dialect: str, n: int, alias: str = "q") -> str:
    """A FROM item ``alias`` whose column ``g`` runs 1..n."""
    if dialect == "sqlite":
        return (
            f"(WITH RECURSIVE s(g) AS (SELECT 1 UNION ALL SELECT g + 1 FROM s WHERE g < {n}) "
            f"SELECT g FROM s) {alias}"
        )
    return f"generate_series(1, {n}) AS {alias}(g)"


def filler(dialect: str, size: int) -> str:
    """``size`` characters of incompressible text per row (hex of random bytes)."""
    if dialect == "sqlite":
        return f"hex(randomblob({size // 2}))"
    parts = max(size // 32, 1)
    return (
        # The aggregate names the inner column (else it would belong to the outer query),
        # the series bound the outer one (else the subquery would run once for all rows).
        "(SELECT string_agg(md5(random()::text || i.n), '') "
        f"FROM generate_series(1, {parts} + 0 * q.g) AS i(n))"
    )


def generate(engine: Engine, sites: int, pages: int, links: int, html_bytes: int) -> dict[str, int]:
    d = engine.dialect.name
    per_site = pages // sites
    pages = per_site * sites  # every site the same number of pages: same-site links stay so
    # Frontier pages (one in ten) link nowhere: the fetched ones carry all the links.
    fanout = max(-(-links // (pages - pages // 10)), 1)
    epoch = "'2026-01-01 00:00:00'"
    at = (
        f"datetime({epoch}, '+' || (q.g / 5) || ' seconds')"
        if d == "sqlite"
        else f"timestamp {epoch} + q.g * interval '0.2 second'"
    )
    depth = "length(CAST(q.g AS TEXT)) - 1"
    # Types and statuses go by m, the page's number within its site (q.g is spread over
    # the sites round-robin, so q.g % 50 would give one site nothing but documents).
    m = f"((q.g - 1) / {sites})"
    kind = (
        f"CASE WHEN {m} % 10 = 9 THEN 'FRONTIER' WHEN {m} % 50 = 1 THEN 'BINARY' "
        f"WHEN {m} % 40 = 3 THEN 'DUPLICATE' ELSE 'HTML' END"
    )
    ignore = "INSERT OR IGNORE INTO" if d == "sqlite" else "INSERT INTO"
    conflict = "" if d == "sqlite" else " ON CONFLICT DO NOTHING"
    with engine.begin() as conn:
        conn.execute(text(
            "INSERT INTO site (id, domain, ip_address, crawl_delay) "
            "SELECT q.g, 'urad-' || q.g || '.gov.si', "
            "'10.0.' || (q.g / 200) || '.' || (q.g % 200), 5.0 "
            f"FROM {series(d, sites)}"
        ))  # fmt: skip
        conn.execute(text(
            "INSERT INTO page (id, site_id, page_type_code, url, html_content, http_status_code, "
            "accessed_time, depth, content_type, content_hash, rendered, "
            "changed_time, visit_time, visit_outcome) "
            f"SELECT q.g, 1 + (q.g - 1) % {sites}, {kind}, "
            f"'https://urad-' || (1 + (q.g - 1) % {sites}) || '.gov.si/stran-' || q.g, "
            f"CASE WHEN {kind} = 'HTML' THEN {filler(d, html_bytes)} END, "
            f"CASE WHEN {m} % 10 = 9 THEN NULL WHEN {m} % 100 = 7 THEN 404 ELSE 200 END, "
            f"CASE WHEN {m} % 10 = 9 THEN NULL ELSE {at} END, {depth}, "
            f"CASE WHEN {m} % 10 <> 9 THEN 'text/html' END, "
            f"CASE WHEN {m} % 10 <> 9 THEN 'h' || "
            f"(q.g - CASE WHEN {m} % 80 = 3 THEN {sites} ELSE 0 END) END, "
            f"q.g % 7 = 0, "
            f"CASE WHEN {m} % 10 <> 9 THEN {at} END, CASE WHEN {m} % 10 <> 9 THEN {at} END, "
            f"CASE WHEN {m} % 10 = 9 THEN NULL WHEN q.g > {pages // 2} THEN 'new' "
            "ELSE 'same' END "
            f"FROM {series(d, pages)}"
        ))  # fmt: skip
        conn.execute(text(
            f"UPDATE page SET duplicate_of = id - {sites}, html_content = NULL "
            "WHERE page_type_code = 'DUPLICATE'"
        ))  # fmt: skip
        conn.execute(text(
            "INSERT INTO page_data (page_id, data_type_code, size) "
            "SELECT id, 'PDF', 100000 + id FROM page WHERE page_type_code = 'BINARY'"
        ))  # fmt: skip
        for k in range(2):
            conn.execute(text(
                f"{ignore} image (page_id, url, filename, content_type, accessed_time) "
                "SELECT id, 'https://urad-' || site_id || '.gov.si/slika-' || "
                f"((id * 7 + {k}) % 50) || '.png', 'slika.png', 'image/png', accessed_time "
                f"FROM page WHERE page_type_code = 'HTML'{conflict}"
            ))  # fmt: skip
        # Link k of page g: mostly a page of the same site (same residue mod sites), every
        # tenth to a page of one of the hub sites 1..20 (each site's pages link to all 20).
        same = f"1 + ((q.g - 1) + {sites} * (1 + (k.g * 37 + q.g) % {per_site - 1})) % {pages}"
        hub = f"1 + ((q.g * 7919) % {per_site}) * {sites} + ((q.g - 1) / {sites}) % 20"
        conn.execute(text(
            f"{ignore} link (from_page, to_page) "
            f"SELECT q.g, CASE WHEN k.g % 10 = 9 THEN {hub} ELSE {same} END "
            f"FROM {series(d, pages)} "
            f"CROSS JOIN {series(d, fanout, 'k')} "
            f"WHERE {m} % 10 <> 9{conflict}"
        ))  # fmt: skip
        # The last round started halfway: the later half's pages are its new ones.
        started = datetime(2026, 1, 1) + timedelta(seconds=pages // 2 / 5)
        conn.execute(text(
            f"INSERT INTO crawl_meta (key, value) VALUES ('{STARTED}', "
            f"'{started:%Y-%m-%d %H:%M:%S.%f}')"
        ))  # fmt: skip
        counts = {
            t: int(conn.execute(text(f"SELECT count(*) FROM {t}")).scalar_one())
            for t in ("site", "page", "link", "image", "page_data")
        }
    if d == "postgresql":
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            conn.execute(text("VACUUM ANALYZE"))
    return counts


def timed_report(db_url: str, out: Path) -> dict[str, Any]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    done = run_report(db_url, out, timeout=None)
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {
        "ok": done.returncode == 0,
        "seconds": round(wall, 2),
        "cpu_seconds": round(
            after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, 2
        ),
        # ru_maxrss of the children so far: the report is the largest child this process runs.
        "max_rss_mib": round(after.ru_maxrss / 1024, 1),
        "log_tail": done.stderr[-2000:],
    }


def measure(
    backend: str, args: argparse.Namespace, work: Path, cluster: PgCluster | None
) -> dict[str, Any]:
    if backend == "sqlite":
        url = f"sqlite:///{work / 'crawldb.sqlite3'}"
    else:
        assert cluster is not None
        url = cluster.create_database(f"report{args.pages}")
    engine = database.make_engine(url)
    database.migrate(engine)
    started = time.monotonic()
    counts = generate(engine, args.sites, args.pages, args.links, args.html_bytes)
    engine.dispose()
    made = time.monotonic() - started
    size = (work / "crawldb.sqlite3").stat().st_size if backend == "sqlite" else None
    # The report itself is kept with the figures, for a look at a large crawl's report.
    result = timed_report(url, args.out / f"report-{backend}")
    result.update(backend=backend, rows=counts, generate_seconds=round(made, 1), sqlite_bytes=size)
    print(
        f"{backend}: {counts['page']} pages, {counts['link']} links, {counts['image']} images "
        f"(made in {made:.0f} s): report in {result['seconds']} s "
        f"(CPU {result['cpu_seconds']} s), max RSS {result['max_rss_mib']} MiB"
        f"{'' if result['ok'] else ' FAILED'}",
        flush=True,
    )
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--backend", choices=["sqlite", "postgresql", "both"], default="both")
    parser.add_argument("--sites", type=int, default=500)
    parser.add_argument("--pages", type=int, default=100_000)
    parser.add_argument("--links", type=int, default=1_000_000)
    parser.add_argument("--html-bytes", type=int, default=8000)
    parser.add_argument("--limit", type=float, default=60.0, help="seconds the report may take")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    backends = ["sqlite", "postgresql"] if args.backend == "both" else [args.backend]
    results = []
    work = Path(tempfile.mkdtemp(prefix="govsi-report-bench-"))
    cluster = None
    try:
        if "postgresql" in backends:
            cluster = start_postgres()
        for backend in backends:
            results.append(measure(backend, args, work, cluster))
    finally:
        if cluster is not None:
            cluster.stop()
        shutil.rmtree(work, ignore_errors=True)
    write_run(args.out / "report_speed.json", args, results)
    return 0 if all(r["ok"] and r["seconds"] <= args.limit for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
