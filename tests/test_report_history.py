"""The report's kept history (``govsi.report.history``) on a crawldb the writer filled
(SQLite and PostgreSQL): per host, pages with earlier versions, versions, distinct contents
and their bytes, shared and not; in the HTML, JSON and CSV files."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

from sqlalchemy import Engine

from govsi.dedup.signature import exact_key
from govsi.items import FetchedPage
from govsi.report.output import write_report
from govsi.store.writer import CrawlWriter
from testkit.crawldb import T
from tests.support.govpages import NEWS_1, NEWS_2, semantic
from tests.test_report_changes import report_of

ONE, TWO = semantic(NEWS_1), semantic(NEWS_2)
A, B, C = "a.gov.si", "b.gov.si", "c.gov.si"


def html(url: str, depth: int, day: int, content: str) -> FetchedPage:
    return FetchedPage(url, depth, "HTML", T + timedelta(days=day), 200, html_content=content,
                       content_hash=exact_key(content))  # fmt: skip


def fill(engine: Engine) -> None:
    w = CrawlWriter(engine, store_binary_data=True)
    # a.gov.si/: flips five times (versions ONE, TWO, ONE, TWO, ONE); a.gov.si/x changes once.
    for day in range(6):
        w.add(html(f"https://{A}/", 0, day, TWO if day % 2 else ONE))
        w.add(html(f"https://{A}/x", 1, day, ONE if day == 0 else TWO))
        assert w.flush()
    # b.gov.si/doc: a document replaced: a version with no HTML. c.gov.si: never changed.
    for day, key in ((0, "a" * 64), (1, "b" * 64)):
        w.add(FetchedPage(f"https://{B}/doc", 1, "BINARY", T + timedelta(days=day), 200,
                          data_type="PDF", data=b"%PDF", size=4, content_hash=key))  # fmt: skip
        w.add(html(f"https://{C}/", 1, day, ONE))
        assert w.flush()


def test_history_per_host(engine: Engine, tmp_path: Path) -> None:
    fill(engine)
    report = report_of(engine)
    one, two = len(ONE.encode()), len(TWO.encode())
    got = report.scopes_by_name()["all"]["history"].records()
    assert [{k: v for k, v in r.items() if k != "oldest"} for r in got] == [
        {"host": A, "pages": 2, "versions": 6, "contents": 3, "bytes": 2 * one + two,
         "bytes_if_unshared": 4 * one + 2 * two},
        {"host": B, "pages": 1, "versions": 1, "contents": 0, "bytes": 0,
         "bytes_if_unshared": 0},
    ]  # fmt: skip
    assert str(got[0]["oldest"])[:19] == str(T)
    assert [r["host"] for r in report.scopes_by_name()["seed"]["history"].records()] == [A]
    write_report(report, tmp_path)
    assert "History kept" in (tmp_path / "index.html").read_text()
    csv = (tmp_path / "csv" / "all_history.csv").read_text().splitlines()
    assert csv[0] == "host,pages,versions,contents,bytes,bytes_if_unshared,oldest"
    assert csv[1].startswith(f"{A},2,6,3,{2 * one + two},")
    shown = json.loads((tmp_path / "report.json").read_text())
    assert shown["scopes"]["all"]["tables"]["history"]["rows"][1][:3] == [B, 1, 1]
