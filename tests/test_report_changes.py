"""The report's last round (``govsi.report.changes``) on a hand-made crawldb (SQLite and
PostgreSQL): per host, what each visit since ``round_started`` found, worked out by hand
below; nothing before the round or without an outcome; an empty table without a round;
the example SQL of docs/stored.md giving the same counts; the new pages' discovery latency,
a table of cases (one host each) and a host's median and 90th percentile."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, insert

from govsi.report.build import Report, build_report, report_engine
from govsi.report.output import write_report
from govsi.store import schema
from testkit.crawldb import q

ROUND = datetime(2026, 11, 20, 8, 0)
A, B = "a.gov.si", "b.gov.si"
ZABA = "<p>žaba</p>"  # 11 characters, 12 bytes in UTF-8

# id: (site, path, type, status, html, outcome, visit hours after ROUND, extra columns)
Row = tuple[str, str, str, int | None, str | None, str | None, float | None, dict[str, Any]]
PAGES: dict[int, Row] = {
    1: (A, "/", "HTML", 200, ZABA, "not_modified", 1, {"depth": 0}),
    2: (A, "/doc.pdf", "BINARY", 200, None, "not_modified", 1, {}),
    3: (A, "/copy", "DUPLICATE", 200, None, "not_modified", 2, {"duplicate_of": 1}),
    4: (A, "/new", "HTML", 200, "<p>n</p>", "new", 1, {}),
    5: (A, "/news", "HTML", 200, "<p>v2</p>", "changed", 3, {}),
    6: (A, "/old", "HTML", 404, "<h1>Ni strani</h1>", "gone", 1, {}),
    7: (A, "/r", "HTML", 301, None, "moved", 1, {}),
    8: (A, "/same", "HTML", 200, "<p>s</p>", "same", 0, {}),  # at the round's start
    9: (A, "/down", "HTML", 200, "<p>d</p>", "kept", 1, {}),
    10: (A, "/before", "HTML", 200, "x" * 100, "not_modified", -1, {}),  # the round before
    11: (A, "/legacy", "HTML", 200, "<p>l</p>", None, None, {}),  # stored before outcomes
    12: (A, "/frontier", "FRONTIER", None, None, None, None, {}),
    13: (A, "/data.json", "OTHER", 200, None, "not_modified", 1, {}),  # no size known
    14: (B, "/", "HTML", 200, "<p>b</p>", "new", 1, {}),
    15: (B, "/x", "HTML", 200, "abc", "not_modified", 1, {}),
}
EXPECTED = {
    A: dict(new=1, revisited=9, not_modified=4, same=1, changed=1, gone=1, moved=1, kept=1,
            bytes_saved_by_304=12 + 1000 + 12,  # HTML, the document, the copy's original
            discovery_latency_pages=0, discovery_latency_median_h=None,
            discovery_latency_p90_h=None),  # no links
    B: dict(new=1, revisited=1, not_modified=1, same=0, changed=0, gone=0, moved=0, kept=0,
            bytes_saved_by_304=3, discovery_latency_pages=0, discovery_latency_median_h=None,
            discovery_latency_p90_h=None),
}  # fmt: skip


def fill(engine: Engine, started: str | None = f"{ROUND:%Y-%m-%d %H:%M:%S.%f}") -> None:
    with engine.begin() as conn:
        conn.execute(insert(schema.SITE), [{"id": 1, "domain": A}, {"id": 2, "domain": B}])
        site = {A: 1, B: 2}
        for batch in ([p for p in PAGES.items() if p[0] != 3], [(3, PAGES[3])]):
            conn.execute(insert(schema.PAGE), [
                {
                    "id": pid, "site_id": site[host], "url": f"https://{host}{path}",
                    "page_type_code": kind, "http_status_code": status, "html_content": html,
                    "accessed_time": None if hours is None else ROUND + timedelta(hours=hours),
                    "visit_outcome": found, "duplicate_of": None, "depth": 1,
                    "visit_time": None if hours is None else ROUND + timedelta(hours=hours),
                    **extra,
                }
                for pid, (host, path, kind, status, html, found, hours, extra) in batch
            ])  # fmt: skip
        conn.execute(
            insert(schema.PAGE_DATA), [{"page_id": 2, "data_type_code": "PDF", "size": 1000}]
        )
        if started is not None:
            meta = schema.CRAWL_META
            conn.execute(insert(meta), [{"key": "round_started", "value": started}])


def report_of(engine: Engine) -> Report:
    reader = report_engine(engine.url.render_as_string(hide_password=False))
    try:
        return build_report(reader, max_sites=10, max_pages=10)
    finally:
        reader.dispose()


def last_round(report: Report, scope: str) -> list[dict[str, Any]]:
    return report.scopes_by_name()[scope]["last_round"].records()


def test_the_last_round_per_host(engine: Engine, tmp_path: Path) -> None:
    fill(engine)
    report = report_of(engine)
    got = last_round(report, "all")
    assert [r["host"] for r in got] == [A, B]  # most visits first
    assert {r.pop("host"): r for r in got} == EXPECTED
    assert [r["host"] for r in last_round(report, "seed")] == [A]
    table = report.scopes_by_name()["all"]["last_round"]
    assert table.note.startswith("The last round started 2026-11-20 08:00:00 UTC.")
    assert "2026-11-20 08:00:00.000000" in table.sql  # reruns as it is shown
    write_report(report, tmp_path)
    assert "Changes in the last round" in (tmp_path / "index.html").read_text()
    header = (tmp_path / "csv" / "all_last_round.csv").read_text().splitlines()[0]
    assert header.startswith("host,new,revisited,not_modified,same,changed,gone,moved,kept,")


def test_without_a_round_the_table_is_empty_and_says_why(engine: Engine) -> None:
    fill(engine, started=None)
    table = report_of(engine).scopes_by_name()["all"]["last_round"]
    assert table.rows == [] and table.note.startswith("No round recorded")
    with engine.begin() as conn:  # a value no govsi wrote: no round either
        meta = schema.CRAWL_META
        conn.execute(insert(meta), [{"key": "round_started", "value": "soon"}])
    assert report_of(engine).scopes_by_name()["all"]["last_round"].rows == []


def docs_sql() -> list[str]:
    """The example queries of docs/stored.md, "The last round"."""
    doc = (Path(__file__).resolve().parent.parent / "docs" / "stored.md").read_text()
    block = doc.split("## The last round", 1)[1].split("```sql", 1)[1].split("```", 1)[0]
    return [s.strip() for s in block.split(";") if s.strip()]


def test_the_docs_queries_count_as_the_report(engine: Engine) -> None:
    fill(engine)
    started, per_outcome = docs_sql()
    [(value,)] = q(engine, started)
    counted = q(engine, per_outcome.replace("'2026-11-22 12:00:00.000000'", f"'{value}'"))
    got: dict[str, dict[str, int]] = {}
    for host, found, pages in counted:
        got.setdefault(host, {})[found] = pages
    for host, expected in EXPECTED.items():
        for found, pages in got[host].items():
            assert expected[found] == pages
        assert sum(got[host].values()) == expected["new"] + expected["revisited"]


# Discovery latency. A linking page: (its changed_time, its accessed_time) in hours after
# ROUND (None: NULL), or "self" (the new page's link to itself), "copy" (a DUPLICATE of the
# new page, first fetched an hour after ROUND), "frontier" (a FRONTIER row, which has no
# links stored, given one here). Linking pages have no visit_time: they are not in the
# table themselves.
Linker = tuple[float | None, float | None] | str
# case: (the new page's first fetch, hours after ROUND; its linking pages; its outcome;
#        the latency expected in hours, None: no figure)
LATENCY_CASES: dict[str, tuple[float, list[Linker], str, float | None]] = {
    "fetched 2 h after a linking page": (3, [(1, 1)], "new", 2),
    "from the earliest linking version, before the round": (4, [(2, 2), (-5, 3)], "new", 9),
    "a linking version first fetched later does not count": (3, [(5, 5), (1, 6)], "new", 2),
    "only versions first fetched later: none": (3, [(5, 5)], "new", None),
    "a row older than changed_time: its last fetch": (2, [(None, 0.5)], "new", 1.5),
    "fetched with its linking version: 0": (1, [(1, 1)], "new", 0),
    "a quarter of an hour": (0.25, [(0, 0)], "new", 0.25),
    "its own link and its copy's do not count": (3, ["self", "copy"], "new", None),
    "a FRONTIER row's link does not count": (3, ["frontier"], "new", None),
    "no page links to it (a feed's, a sitemap's): none": (3, [], "new", None),
    "revisited, not new: none": (3, [(1, 1)], "same", None),
}
SPREAD = "spread.gov.si"  # ten new pages, latencies 1 to 10 hours


def fill_latency(engine: Engine) -> dict[str, str]:
    """One host per case (and ``SPREAD``); returns the host of each case."""
    at = lambda hours: None if hours is None else ROUND + timedelta(hours=hours)  # noqa: E731
    sites: list[dict[str, Any]] = [{"id": 1, "domain": "links.gov.si"}]
    pages: list[dict[str, Any]] = []
    links: list[dict[str, int]] = []
    hosts: dict[str, str] = {}

    def page(
        site: int, kind: str, changed: float | None, accessed: float | None, **extra: Any
    ) -> int:
        pid = len(pages) + 1
        pages.append({
            "id": pid, "site_id": site, "url": f"https://x/{pid}", "page_type_code": kind,
            "http_status_code": None if kind == "FRONTIER" else 200, "html_content": None,
            "changed_time": at(changed), "accessed_time": at(accessed), "depth": 1,
            "visit_outcome": None, "visit_time": None, "duplicate_of": None, **extra,
        })  # fmt: skip
        return pid

    def new_page(site: int, fetched: float, found: str = "new") -> int:
        return page(site, "HTML", fetched, fetched, visit_outcome=found, visit_time=at(fetched))

    for number, (case, (fetched, linkers, found, _)) in enumerate(LATENCY_CASES.items(), 2):
        hosts[case] = f"case{number}.gov.si"
        sites.append({"id": number, "domain": hosts[case]})
        target = new_page(number, fetched, found)
        for linker in linkers:
            if linker == "self":
                source = target
            elif linker == "copy":
                source = page(1, "DUPLICATE", 1, 1, duplicate_of=target)
            elif linker == "frontier":
                source = page(1, "FRONTIER", None, None)
            else:
                assert not isinstance(linker, str)
                source = page(1, "HTML", *linker)
            links.append({"from_page": source, "to_page": target})
    sites.append({"id": 100, "domain": SPREAD})
    hub = page(1, "HTML", 0, 0)
    for hours in range(10, 0, -1):
        links.append({"from_page": hub, "to_page": new_page(100, hours)})
    with engine.begin() as conn:
        conn.execute(insert(schema.SITE), sites)
        conn.execute(insert(schema.PAGE), [p for p in pages if p["duplicate_of"] is None])
        conn.execute(insert(schema.PAGE), [p for p in pages if p["duplicate_of"] is not None])
        conn.execute(insert(schema.LINK), links)
        started = f"{ROUND:%Y-%m-%d %H:%M:%S.%f}"
        conn.execute(insert(schema.CRAWL_META), [{"key": "round_started", "value": started}])
    return hosts


def test_discovery_latency_per_host(engine: Engine) -> None:
    hosts = fill_latency(engine)
    rows = {r["host"]: r for r in last_round(report_of(engine), "all")}
    latency = lambda r: (  # noqa: E731
        r["discovery_latency_pages"], r["discovery_latency_median_h"],
        r["discovery_latency_p90_h"],
    )  # fmt: skip
    for case, (_, _, _, hours) in LATENCY_CASES.items():
        expected = (0, None, None) if hours is None else (1, hours, hours)
        assert latency(rows[hosts[case]]) == expected, case
    # Nearest rank: the 5th and the 9th smallest of ten.
    assert latency(rows[SPREAD]) == (10, 5, 9)
