"""End-to-end: crawl the simulated web (SQLite and PostgreSQL), run ``scrapy report``, and
check its JSON against what the simulated web is known to hold and against independent
plain SQL; open ``index.html`` in headless Chromium; run the report while a crawl writes."""

from __future__ import annotations

import json
import os
import time
from collections import Counter
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from govsi.render.engine import find_chromium
from testkit.crawl import (
    ROOT,
    query,
    run_crawl,
    run_report,
    snapshot,
    start_crawl,
    wait_for_requests,
)
from testkit.simweb import govweb
from testkit.simweb.expected import (
    E2E_SETTINGS,
    EXPECTED_DOCUMENTS,
    EXPECTED_DUPLICATES,
    EXPECTED_IMAGES,
    EXPECTED_LINKS,
    EXPECTED_PAGES,
)
from testkit.simweb.server import SimWeb

# Screenshots of the rendered report, kept for a person to look at (CI keeps the folder).
ARTIFACTS = Path(os.environ.get("GOVSI_TEST_ARTIFACTS", ROOT / "tests" / "artifacts"))
SEED_HOSTS = sorted({urlsplit(s).hostname or "" for s in govweb.SEEDS})


def host(url: str) -> str:
    return urlsplit(url).hostname or ""


def report_of(db_url: str, out: Path, *args: str) -> dict[str, Any]:
    done = run_report(db_url, out, *args)
    assert done.returncode == 0, done.stderr[-5000:]
    assert "Traceback" not in done.stderr, done.stderr
    return json.loads((out / "report.json").read_text(encoding="utf-8"))


def records(report: dict[str, Any], scope: str, table: str) -> list[dict[str, Any]]:
    t = report["scopes"][scope]["tables"][table]
    return [dict(zip(t["columns"], row, strict=True)) for row in t["rows"]]


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def reported(
    request: pytest.FixtureRequest, gov_web: SimWeb, tmp_path_factory: Any
) -> tuple[str, Path, dict[str, Any]]:
    work: Path = tmp_path_factory.mktemp(f"report-{request.param}")
    if request.param == "sqlite":
        db_url = f"sqlite:///{work / 'crawldb.sqlite3'}"
    else:
        db_url = request.getfixturevalue("pg_cluster").create_database("report")
    run = run_crawl(gov_web, db_url, work, govweb.SEEDS, **E2E_SETTINGS)
    assert run.returncode == 0, run.log[-5000:]
    assert snapshot(db_url).pages == EXPECTED_PAGES
    out = work / "report"
    return db_url, out, report_of(db_url, out, "-a", "site=www.gov.si")


def test_seed_sites_are_the_crawls_seed_hosts(reported: tuple[str, Path, dict[str, Any]]) -> None:
    assert reported[2]["seed_sites"] == SEED_HOSTS


def test_page_figures_match_the_simulated_web(reported: tuple[str, Path, dict[str, Any]]) -> None:
    _, _, report = reported
    by_type = {r["page_type"]: r["pages"] for r in records(report, "all", "pages_by_type")}
    assert {k: v for k, v in by_type.items() if v} == Counter(t for t, _ in EXPECTED_PAGES.values())
    statuses = {r["status"]: r["pages"] for r in records(report, "all", "status_codes")}
    assert statuses == Counter(s for t, s in EXPECTED_PAGES.values() if t != "FRONTIER")
    [summary] = records(report, "all", "summary")
    assert summary["pages"] == len(EXPECTED_PAGES)
    assert summary["links"] == len(EXPECTED_LINKS)
    assert summary["links_to_other_sites"] == sum(host(a) != host(b) for a, b in EXPECTED_LINKS)
    assert summary["images"] == len(EXPECTED_IMAGES)
    assert summary["image_urls"] == len({i for _, i, _, _ in EXPECTED_IMAGES})
    assert summary["duplicates"] == len(EXPECTED_DUPLICATES)
    docs = {r["data_type"]: r["documents"] for r in records(report, "all", "documents_by_type")}
    assert {k: v for k, v in docs.items() if v} == Counter(EXPECTED_DOCUMENTS.values())
    [seed] = records(report, "seed", "summary")
    assert seed["sites"] == len(SEED_HOSTS)
    assert seed["pages"] == sum(host(u) in SEED_HOSTS for u in EXPECTED_PAGES)


def test_domain_graph_is_the_cross_site_links(reported: tuple[str, Path, dict[str, Any]]) -> None:
    graph = reported[2]["domain_graph"]
    name = {n["id"]: n["label"] for n in graph["nodes"]}
    edges = {(name[e["source"]], name[e["target"]]): e["links"] for e in graph["edges"]}
    assert edges == Counter((host(a), host(b)) for a, b in EXPECTED_LINKS if host(a) != host(b))
    internal = {n["label"]: n["internal_links"] for n in graph["nodes"] if n["internal_links"]}
    assert internal == Counter(host(a) for a, b in EXPECTED_LINKS if host(a) == host(b))


def test_numbers_agree_with_plain_sql(reported: tuple[str, Path, dict[str, Any]]) -> None:
    """Each figure recomputed from raw rows, counted in Python, as a user might check."""
    db_url, _, report = reported
    pages = query(
        db_url,
        "SELECT p.id, s.domain, p.page_type_code, p.depth, p.accessed_time, p.content_hash, "
        "p.duplicate_of FROM page p JOIN site s ON s.id = p.site_id",
    )
    hash_of = {pid: h for pid, *_, h, _ in pages}
    dups = Counter(
        "exact" if hash_of[orig] == h else "near" for *_, kind, _, _, h, orig in pages if orig
    )
    flagged = query(db_url, "SELECT count(*) FROM page WHERE near_duplicate_of IS NOT NULL")
    if flagged[0][0]:
        dups["near, kept (flagged)"] = flagged[0][0]
    assert {r["kind"]: r["pages"] for r in records(report, "all", "duplicates")} == dups
    depths = Counter(depth for _, _, _, depth, *_ in pages)
    assert {r["depth"]: r["pages"] for r in records(report, "all", "depths")} == depths
    html = {pid for pid, _, kind, *_ in pages if kind == "HTML"}
    images = query(db_url, "SELECT page_id FROM image")
    on_html = sum(1 for (pid,) in images if pid in html)
    [per_page] = records(report, "all", "images_per_page")
    assert (per_page["html_pages"], per_page["images"]) == (len(html), on_html)
    assert per_page["images_per_html_page"] == pytest.approx(on_html / len(html))
    times: dict[str, list[datetime]] = {}
    for _, domain, _, _, when, *_ in pages:
        if when is not None:
            times.setdefault(domain, []).append(
                when if isinstance(when, datetime) else datetime.fromisoformat(when)
            )
    for row in records(report, "all", "hosts"):
        fetched = sorted(times.get(row["host"], []))
        assert row["fetched"] == len(fetched)
        if len(fetched) > 1:
            mean = (fetched[-1] - fetched[0]).total_seconds() / (len(fetched) - 1)
            assert row["mean_interval"] == pytest.approx(mean, abs=0.01)
    rate = records(report, "all", "crawl_rate")
    assert sum(r["pages"] for r in rate) == sum(len(v) for v in times.values())


def test_discovery_latency_counts_the_new_pages_a_fetched_page_linked_to_first(
    reported: tuple[str, Path, dict[str, Any]],
) -> None:
    """The change table's discovery latency, worked out again in Python from the rows: a
    first crawl's pages are all new, and each one a fetched page linked to before it was
    fetched (not itself, not a copy of it) has a figure."""
    db_url, _, report = reported
    [(started,)] = query(db_url, "SELECT value FROM crawl_meta WHERE key = 'round_started'")
    at = lambda v: v if isinstance(v, datetime) or v is None else datetime.fromisoformat(v)  # noqa: E731
    rows = query(
        db_url,
        "SELECT p.id, s.domain, p.visit_outcome, p.visit_time, p.duplicate_of, "
        "coalesce(p.changed_time, p.accessed_time) FROM page p JOIN site s ON s.id = p.site_id",
    )
    page = {pid: (domain, found, at(when), copy, at(seen))
            for pid, domain, found, when, copy, seen in rows}  # fmt: skip
    linked: dict[int, list[datetime]] = {}
    round_start = datetime.fromisoformat(started)
    for source, target in query(db_url, "SELECT from_page, to_page FROM link"):
        _, _, _, copy, seen = page[source]
        _, found, when, _, _ = page[target]
        new = found == "new" and when is not None and when >= round_start
        if new and source != target and copy != target and seen is not None and seen <= when:
            linked.setdefault(target, []).append(seen)
    hours: dict[str, list[float]] = {}
    for target, seen in linked.items():
        domain, _, when, _, _ = page[target]
        hours.setdefault(domain, []).append((when - min(seen)).total_seconds() / 3600)
    table = records(report, "all", "last_round")
    assert sum(1 for r in table if r["discovery_latency_pages"]) > len(table) / 2  # most hosts
    for row in table:
        waited = sorted(hours.get(row["host"], []))
        assert row["discovery_latency_pages"] == len(waited) <= row["new"]
        if waited:  # nearest rank
            median, p90 = (
                waited[(len(waited) + 1) // 2 - 1],
                waited[(9 * len(waited) + 9) // 10 - 1],
            )
            assert row["discovery_latency_median_h"] == pytest.approx(median, abs=0.006)
            assert row["discovery_latency_p90_h"] == pytest.approx(p90, abs=0.006)


def test_csv_files_hold_the_same_rows(reported: tuple[str, Path, dict[str, Any]]) -> None:
    _, out, report = reported
    for scope in ("seed", "all"):
        for name, t in report["scopes"][scope]["tables"].items():
            lines = (out / "csv" / f"{scope}_{name}.csv").read_text(encoding="utf-8").splitlines()
            assert lines[0].split(",") == t["columns"]
            assert len(lines) == 1 + len(t["rows"]), name
    edges = (out / "csv" / "domain_graph_edges.csv").read_text().splitlines()
    assert len(edges) == 1 + len(report["domain_graph"]["edges"])
    assert (out / "domain_graph.svg").read_text().startswith("<svg")


def test_index_html_renders_offline_in_chromium(
    reported: tuple[str, Path, dict[str, Any]], request: pytest.FixtureRequest
) -> None:
    from playwright.sync_api import sync_playwright

    chromium = find_chromium()
    if chromium is None:
        pytest.fail("Chromium is missing: scripts/setup.sh installs Debian's chromium")
    _, out, report = reported
    problems: list[str] = []
    fetched: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.on("console", lambda m: m.type in ("error", "warning") and problems.append(m.text))
            page.on("pageerror", lambda e: problems.append(str(e)))
            page.on("request", lambda r: r.url.startswith("file:") or fetched.append(r.url))
            page.goto((out / "index.html").as_uri())
            page.wait_for_function("window.govsiGraphs && window.govsiGraphs.domain")
            tables = page.eval_on_selector_all(
                "table[data-table]", "els => els.map(e => e.dataset.table)"
            )
            drawn = page.evaluate("window.govsiGraphs.domain.nodes().length")
            site_drawn = page.evaluate("window.govsiGraphs.site.nodes().length")
            canvas = page.locator("#domain-graph canvas").count()
            # Hover shows a site's figures.
            tip = page.evaluate(
                "(() => { const n = window.govsiGraphs.domain.nodes()[0];"
                " n.emit('mouseover'); const t = document.getElementById('tip');"
                " return [t.hidden, t.textContent, n.data('label')]; })()"
            )
            shot = ARTIFACTS / f"report-{request.node.callspec.id}.png"
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(shot), full_page=True)
        finally:
            browser.close()
    assert problems == []
    assert fetched == []  # nothing from the network: the page is self-contained
    assert sorted(tables) == sorted(
        f"{scope}_{name}"
        for scope in ("seed", "all")
        for name, t in report["scopes"][scope]["tables"].items()
        if t["rows"] and name not in ("summary", "crawl_rate")
    )
    assert drawn == len(report["domain_graph"]["nodes"]) and canvas >= 1
    assert site_drawn == len(report["site_graph"]["nodes"])
    hidden, text, label = tip
    assert not hidden and text.startswith(label) and "pages" in text
    assert shot.stat().st_size > 10_000


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_a_report_while_a_crawl_writes_is_consistent_and_does_not_stop_it(
    backend: str, gov_web: SimWeb, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    if backend == "sqlite":
        db_url = f"sqlite:///{tmp_path / 'crawldb.sqlite3'}"
    else:
        db_url = request.getfixturevalue("pg_cluster").create_database("report_live")
    gov_web.reset_log()
    # A delay per host keeps the crawl going for several seconds.
    crawl = start_crawl(
        gov_web, db_url, tmp_path / "crawl", govweb.SEEDS, DEFAULT_CRAWL_DELAY=0.6, **E2E_SETTINGS
    )
    try:
        wait_for_requests(gov_web, 12)
        deadline = time.monotonic() + 60
        while not query(db_url, "SELECT count(*) FROM page WHERE page_type_code = 'HTML'")[0][0]:
            assert time.monotonic() < deadline, "the crawl stored nothing"
            time.sleep(0.2)
        # The first report overlaps the crawl's writes (checked); the second, taken a
        # moment later, may land after the crawl's end on a slow machine.
        reports = [report_of(db_url, tmp_path / "r0")]
        still_running = crawl.proc.poll() is None
        reports.append(report_of(db_url, tmp_path / "r1"))
    finally:
        run = crawl.wait(timeout=300)
    assert run.returncode == 0, run.log[-5000:]
    assert still_running, "the crawl ended before the reports were read: no overlap tested"
    for report in reports:
        [summary] = records(report, "all", "summary")
        by_type = records(report, "all", "pages_by_type")
        assert summary["pages"] == sum(r["pages"] for r in by_type) > 0
        fetched = sum(r["pages"] for r in records(report, "all", "status_codes"))
        assert summary["pages_fetched"] == fetched
    # The second report, read later, saw at least what the first saw.
    first, second = (records(r, "all", "summary")[0]["pages_fetched"] for r in reports)
    assert 0 < first <= second
    assert snapshot(db_url).pages == EXPECTED_PAGES


def readme_queries() -> dict[str, str]:
    """The "Example SQL" of docs/stored.md (linked from the README), by their comment: the
    queries users copy."""
    text = (ROOT / "docs" / "stored.md").read_text(encoding="utf-8")
    block = text.split("## Example SQL", 1)[1].split("```sql", 1)[1].split("```", 1)[0]
    queries: dict[str, str] = {}
    for part in block.split("\n-- ")[1:] if block.startswith("\n-- ") else []:
        title, sql = part.split("\n", 1)
        queries[title.strip()] = sql.strip().rstrip(";")
    return queries


def test_numbers_agree_with_the_readme_example_sql(
    reported: tuple[str, Path, dict[str, Any]],
) -> None:
    db_url, _, report = reported
    sql = readme_queries()
    assert set(sql) >= {
        "pages by type", "documents by type", "average images per HTML page",
        "deepest level reached", "link graph between sites",
    }  # fmt: skip
    by_type = {r["page_type"]: r["pages"] for r in records(report, "all", "pages_by_type")}
    assert dict(query(db_url, sql["pages by type"])) == {k: v for k, v in by_type.items() if v}
    docs = {r["data_type"]: r["documents"] for r in records(report, "all", "documents_by_type")}
    assert dict(query(db_url, sql["documents by type"])) == {k: v for k, v in docs.items() if v}
    [average] = query(db_url, sql["average images per HTML page"])[0]
    [per_page] = records(report, "all", "images_per_page")
    assert float(average) == pytest.approx(per_page["images_per_html_page"])
    [deepest] = query(db_url, sql["deepest level reached"])[0]
    assert deepest == records(report, "all", "summary")[0]["depth_reached"]
    graph = report["domain_graph"]
    name = {n["id"]: n["label"] for n in graph["nodes"]}
    edges = {(name[e["source"]], name[e["target"]]): e["links"] for e in graph["edges"]}
    assert {(a, b): n for a, b, n in query(db_url, sql["link graph between sites"])} == edges
