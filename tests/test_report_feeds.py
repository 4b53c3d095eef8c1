"""The report's feeds and sitemaps (``govsi.report.feeds``) on a hand-made crawldb (SQLite
and PostgreSQL) with rows in every state: per host and kind, the counts worked out by hand
below, the totals line, the problem list (worst first, bounded, errors cut), both scopes;
the HTML, JSON and CSV files; an empty feed table saying so in a plain line; the rows as
the crawl's writer leaves them after its polls."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, insert

from govsi.items import FeedKind, FeedState
from govsi.report import feeds
from govsi.report.build import Report, build_report, report_engine
from govsi.report.output import write_report
from govsi.store import schema
from govsi.store.writer import CrawlWriter

NOW = datetime(2026, 11, 20, 12, 0)  # the report's time
A, B = "a.gov.si", "b.gov.si"  # A has the seed page: the seed scope is A's
LONG_ERROR = "connection lost: " + "x" * 500

# id: (host, kind, path, state, failures, polled (hours before NOW; None: never), status,
#      error, entries, new entries, next_poll (hours after NOW), found (hours before NOW),
#      moved_to)
Feed = tuple[str, str, str, str, int, float | None, int | None, str | None, int | None,
             int | None, float | None, float, str | None]  # fmt: skip
FEEDS: dict[int, Feed] = {
    1: (A, "feed", "/rss", "active", 0, 1, 200, None, 20, 3, 1, 100, None),
    2: (A, "feed", "/news.xml", "active", 0, 30, 304, None, 10, 0, -5, 100, None),  # 5 h late
    3: (A, "feed", "/broken", "active", 2, 2, 503, None, 0, 0, 2, 100, None),
    4: (A, "feed", "/old", "gone", 3, 10, 404, None, 0, 0, 1000, 100, None),
    5: (A, "feed", "/was", "moved", 0, 3, 301, None, 4, 4, -20, 100, f"https://{A}/rss"),
    6: (A, "feed", "/found", "active", 0, None, None, None, None, None, None, 48, None),
    7: (A, "sitemap", "/sitemap.xml", "active", 0, 1, 200, None, 100, 7, 1, 100, None),
    8: (A, "sitemap", "/old.xml", "unlisted", 0, 100, 200, None, 50, 0, -50, 200, None),
    9: (B, "feed", "/rss", "active", 7, 1, None, "timeout", 0, 0, 10, 300, None),
    10: (B, "feed", "/x", "active", 1, 1, None, LONG_ERROR, 0, 0, 1, 300, None),
    11: (B, "sitemap", "/sitemap.xml", "gone", 4, 5, 410, None, 0, 0, -10, 300, None),
}
GOOD_A = (NOW - timedelta(hours=30)).isoformat(sep=" ")  # row 2's poll, older than row 1's
GOOD_A_SITEMAP = (NOW - timedelta(hours=1)).isoformat(sep=" ")
# Per host and kind, as the table lists them: most failing first, then most gone.
EXPECTED: list[dict[str, Any]] = [
    dict(host=A, kind="feed", urls=6, active=4, gone=1, moved=1, unlisted=0, never_polled=1,
         failing=2, most_failures_in_a_row=3, oldest_good_poll=GOOD_A, overdue=2,
         most_overdue_h=48, entries=30, new_entries=3),  # not the moved row's entries
    dict(host=B, kind="feed", urls=2, active=2, gone=0, moved=0, unlisted=0, never_polled=0,
         failing=2, most_failures_in_a_row=7, oldest_good_poll=None, overdue=0,
         most_overdue_h=None, entries=0, new_entries=0),
    dict(host=B, kind="sitemap", urls=1, active=0, gone=1, moved=0, unlisted=0,
         never_polled=0, failing=1, most_failures_in_a_row=4, oldest_good_poll=None,
         overdue=0, most_overdue_h=None, entries=0, new_entries=0),  # gone: never overdue
    dict(host=A, kind="sitemap", urls=2, active=1, gone=0, moved=0, unlisted=1,
         never_polled=0, failing=0, most_failures_in_a_row=0, oldest_good_poll=GOOD_A_SITEMAP,
         overdue=0, most_overdue_h=None, entries=100, new_entries=7),
]  # fmt: skip
TOTALS = (
    "8 feeds and 3 sitemaps on 2 hosts: 5 failing, 2 gone, 1 moved, 1 unlisted; 1 never "
    "polled; 2 overdue (the most by 48.0 h); 10 new entries in the last polls."
)
# The problem list a user reads: (feed id, last_error as shown), longest failing first.
PROBLEMS = [(9, "timeout"), (11, None), (4, None), (3, None), (10, LONG_ERROR[:300]), (5, None)]


def url(fid: int) -> str:
    return f"https://{FEEDS[fid][0]}{FEEDS[fid][2]}"


def at(hours: float | None) -> datetime | None:
    return None if hours is None else NOW + timedelta(hours=hours)


def fill(engine: Engine, with_feeds: bool = True) -> None:
    site = {A: 1, B: 2}
    with engine.begin() as conn:
        conn.execute(insert(schema.SITE), [{"id": i, "domain": d} for d, i in site.items()])
        conn.execute(insert(schema.PAGE), [
            {"id": i, "site_id": i, "url": f"https://{d}/", "page_type_code": "HTML",
             "depth": i - 1, "http_status_code": 200, "accessed_time": NOW}
            for d, i in site.items()
        ])  # fmt: skip
        if not with_feeds:
            return
        conn.execute(insert(schema.FEED), [
            {"id": fid, "site_id": site[host], "url": url(fid), "kind": kind, "state": state,
             "failures": failures, "polled_at": at(None if polled is None else -polled),
             "poll_status": status, "poll_error": error, "entries": entries,
             "new_entries": new, "next_poll": at(next_poll), "found_at": at(-found),
             "moved_to": moved_to, "found_on": f"https://{host}/"}
            for fid, (host, kind, _, state, failures, polled, status, error, entries, new,
                      next_poll, found, moved_to) in FEEDS.items()
        ])  # fmt: skip


def report_of(engine: Engine) -> Report:
    reader = report_engine(engine.url.render_as_string(hide_password=False))
    try:
        return build_report(reader, max_sites=10, max_pages=10, now=NOW)
    finally:
        reader.dispose()


def records(report: Report, scope: str, name: str) -> list[dict[str, Any]]:
    rows = report.scopes_by_name()[scope][name].records()
    for row in rows:  # SQLite keeps timestamps as text, with microseconds
        for column in ("oldest_good_poll", "last_polled", "next_poll"):
            if row.get(column) is not None:
                row[column] = str(row[column])[:19]
    return rows


def test_feeds_per_host_and_kind(engine: Engine, tmp_path: Path) -> None:
    fill(engine)
    report = report_of(engine)
    assert records(report, "all", "feeds") == EXPECTED
    assert records(report, "seed", "feeds") == [r for r in EXPECTED if r["host"] == A]
    tables = report.scopes_by_name()
    assert tables["all"]["feeds"].caption == TOTALS
    assert tables["seed"]["feeds"].caption.startswith("6 feeds and 2 sitemaps on 1 host:")
    assert "'2026-11-20 12:00:00.000000'" in tables["all"]["feeds"].sql  # reruns as shown
    write_report(report, tmp_path)
    page = (tmp_path / "index.html").read_text()
    assert "Feeds and sitemaps polled" in page and TOTALS in page
    shown = json.loads((tmp_path / "report.json").read_text())["scopes"]["all"]["tables"]
    assert shown["feeds"]["caption"] == TOTALS
    assert shown["feeds"]["rows"][0][:4] == [A, "feed", 6, 4]
    csv = (tmp_path / "csv" / "all_feeds.csv").read_text().splitlines()
    assert csv[0] == ",".join(feeds.HOST_COLUMNS)
    assert csv[1].startswith(f"{A},feed,6,4,1,1,0,1,2,3,")


def test_the_problem_list(engine: Engine, tmp_path: Path) -> None:
    fill(engine)
    report = report_of(engine)
    got = records(report, "all", "feed_problems")
    assert [(r["url"], r["last_error"]) for r in got] == [(url(i), e) for i, e in PROBLEMS]
    assert got[0] == {
        "url": url(9), "host": B, "kind": "feed", "state": "active", "failures": 7,
        "last_status": None, "last_error": "timeout", "last_polled": str(at(-1)),
        "next_poll": str(at(10)), "moved_to": None,
    }  # fmt: skip
    assert got[-1]["state"] == "moved" and got[-1]["moved_to"] == f"https://{A}/rss"
    assert [r["last_status"] for r in got[1:4]] == [410, 404, 503]
    seed = records(report, "seed", "feed_problems")
    assert [r["url"] for r in seed] == [url(4), url(3), url(5)]
    tables = report.scopes_by_name()
    assert tables["all"]["feed_problems"].caption == "All 6."
    write_report(report, tmp_path)
    page = (tmp_path / "index.html").read_text()
    assert "Feeds and sitemaps failing, gone or moved" in page and url(9) in page
    csv = (tmp_path / "csv" / "all_feed_problems.csv").read_text().splitlines()
    assert csv[1].startswith(f"{url(9)},{B},feed,active,7,,timeout,")


def test_the_problem_list_is_bounded(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    fill(engine)
    monkeypatch.setattr(feeds, "PROBLEMS_SHOWN", 2)
    table = report_of(engine).scopes_by_name()["all"]["feed_problems"]
    assert [r["url"] for r in table.records()] == [url(9), url(11)]
    assert table.caption == "The 2 worst of 6; 4 more."
    assert "LIMIT 2" in table.sql


def test_no_feeds_is_a_plain_line(engine: Engine, tmp_path: Path) -> None:
    fill(engine, with_feeds=False)
    report = report_of(engine)
    for scope in ("seed", "all"):
        per_host = report.scopes_by_name()[scope]["feeds"]
        problems = report.scopes_by_name()[scope]["feed_problems"]
        assert (per_host.rows, per_host.caption) == ([], feeds.EMPTY)
        assert (problems.rows, problems.caption) == ([], feeds.NO_PROBLEMS)
    write_report(report, tmp_path)
    page = (tmp_path / "index.html").read_text()
    assert page.count('<p class="empty">No feeds or sitemaps polled') == 2
    assert page.count(f'<p class="empty">{feeds.NO_PROBLEMS}</p>') == 2


def test_the_rows_the_writer_leaves(engine: Engine) -> None:
    """Found, polled, failing, parked, moved, as the spider records them (``FeedState``)."""
    rss, page, hour = f"https://{A}/rss", f"https://{A}/novice/", timedelta(hours=1)
    found, failed, gone, was = (f"https://{A}/{p}" for p in ("found", "failed", "gone", "was"))
    sitemap = f"https://{A}/sitemap.xml"
    w = CrawlWriter(engine)
    for u in (rss, found, failed, gone, was):
        w.add(FeedState(u, A, found_on=page, seen_at=NOW))
    w.add(FeedState(sitemap, A, "sitemap", found_on=f"https://{A}/robots.txt", seen_at=NOW))
    assert w.flush()
    polls: list[tuple[str, FeedKind, dict[str, Any]]] = [
        (rss, "feed", dict(status=200, entries=5, new_entries=2, next_poll=NOW + hour)),
        (failed, "feed", dict(error="timeout", failures=3, next_poll=NOW + 8 * hour)),
        (gone, "feed", dict(status=410, failures=3, state="gone", next_poll=NOW + 1000 * hour)),
        (was, "feed", dict(status=301, state="moved", moved_to=rss)),
        (sitemap, "sitemap", dict(status=304, next_poll=NOW + 2 * hour)),
    ]
    for u, kind, outcome in polls:
        w.add(FeedState(u, A, kind, polled_at=NOW, **outcome))
    assert w.flush()
    reader = report_engine(engine.url.render_as_string(hide_password=False))
    try:  # four hours on: the found feed is due since found, the sitemap since NOW + 2 h
        report = build_report(reader, max_sites=10, max_pages=10, now=NOW + 4 * hour)
    finally:
        reader.dispose()
    good = str(NOW)
    assert records(report, "all", "feeds") == [
        dict(host=A, kind="feed", urls=5, active=3, gone=1, moved=1, unlisted=0,
             never_polled=1, failing=2, most_failures_in_a_row=3, oldest_good_poll=good,
             overdue=2, most_overdue_h=4, entries=5, new_entries=2),
        dict(host=A, kind="sitemap", urls=1, active=1, gone=0, moved=0, unlisted=0,
             never_polled=0, failing=0, most_failures_in_a_row=0, oldest_good_poll=good,
             overdue=1, most_overdue_h=2, entries=0, new_entries=0),
    ]  # fmt: skip
    problems = records(report, "all", "feed_problems")
    assert [(r["url"], r["state"], r["last_status"], r["last_error"], r["moved_to"])
            for r in problems] == [
        (failed, "active", None, "timeout", None), (gone, "gone", 410, None, None),
        (was, "moved", 301, None, rss),
    ]  # fmt: skip
