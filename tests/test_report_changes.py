"""The report's last round (``govsi.report.changes``) on a hand-made crawldb (SQLite and
PostgreSQL): per host, what each visit since ``round_started`` found, worked out by hand
below; nothing before the round or without an outcome; an empty table without a round;
and the example SQL of docs/stored.md giving the same counts."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, insert

from govsi.report.build import Report, build_report, report_engine
from govsi.report.output import write_report
from govsi.store import schema
from tests.support.crawldb import q

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
            bytes_saved_by_304=12 + 1000 + 12),  # HTML, the document, the copy's original
    B: dict(new=1, revisited=1, not_modified=1, same=0, changed=0, gone=0, moved=0, kept=0,
            bytes_saved_by_304=3),
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
