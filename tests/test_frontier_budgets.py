"""Budgets: the decisions as tables (``Budgets``), and what the scheduler does when one is
spent (a fake clock, DNS and store, as in test_frontier_scheduler)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace

import pytest
from scrapy.http import Response
from sqlalchemy import text

from govsi.frontier import budgets
from govsi.frontier.admission import Admission
from govsi.frontier.budgets import Budgets, reason
from govsi.frontier.traps import TrapGuard
from govsi.items import DiscoveredPage, FetchedPage, SitemapFile
from govsi.report import queries, sql
from govsi.requestmeta import KIND_IMAGE, META_HOST
from govsi.store import database
from govsi.store.writer import SITEMAP_CUT, CrawlWriter, capped_append
from govsi.web.scope import Scope
from tests.support.scheduler import DELAY, Harness, harnesses, make, urls
from tests.support.stats import DictStats
from tests.support.store import close, pages, spills, store, stored, writes_at_once

__all__ = ["harnesses", "writes_at_once"]  # fixtures, used by name

A, B = "a.gov.si", "b.gov.si"


@pytest.mark.parametrize(
    ("limits", "releases", "expected"),
    [
        # (host, image?) released in order -> the budget each one hits (None: released)
        ({}, [(A, False)] * 3, [None, None, None]),
        ({"pages_per_host": 2}, [(A, False)] * 3, [None, None, budgets.PAGES_PER_HOST]),
        ({"pages_per_host": 1}, [(A, False), (B, False), (A, False)],
         [None, None, budgets.PAGES_PER_HOST]),
        # Images and pages count apart.
        ({"pages_per_host": 1, "images_per_host": 1}, [(A, True), (A, False), (A, True)],
         [None, None, budgets.IMAGES_PER_HOST]),
        ({"images_per_host": 0}, [(A, True)] * 3, [None, None, None]),
    ],
)  # fmt: skip
def test_pages_and_images_per_host(
    limits: dict[str, int], releases: list[tuple[str, bool]], expected: list[str | None]
) -> None:
    b = Budgets(**limits)
    assert [b.release(host, image) for host, image in releases] == expected


def test_a_spent_byte_budget_refuses_pages_and_images_of_that_host_only() -> None:
    b = Budgets(bytes_per_host=100)
    assert b.received(A, 60) is False
    assert b.release(A, False) is None
    assert b.received(A, 40) is True  # reached: at the limit
    assert b.release(A, False) == budgets.BYTES_PER_HOST
    assert b.release(A, True) == budgets.BYTES_PER_HOST
    assert b.release(B, False) is None
    assert Budgets().received(A, 10**15) is False  # 0 = no limit


def test_hosts_and_logging_once() -> None:
    b = Budgets(hosts=2)
    assert [b.new_host() for _ in range(4)] == [True, True, False, False]
    assert [b.first_time(budgets.HOSTS), b.first_time(budgets.HOSTS)] == [True, False]
    assert b.first_time(budgets.PAGES_PER_HOST, A) and b.first_time(budgets.PAGES_PER_HOST, B)
    assert Budgets().new_host()


def test_the_reason_names_the_setting() -> None:
    assert reason(budgets.HOSTS, 5) == "budget: MAX_HOSTS (5) reached"
    assert Budgets(pages_per_host=3).reason(budgets.PAGES_PER_HOST) == (
        "budget: MAX_PAGES_PER_HOST (3) reached"
    )


# -- the scheduler ---------------------------------------------------------------------


def ready(h: Harness, *hosts: str) -> None:
    """Answer each host's robots.txt (allow all)."""
    for _ in hosts:
        robots = h.take()
        assert robots is not None
        h.answer_robots(robots)


def fetch_all(h: Harness, rounds: int = 20) -> list[str]:
    got: list[str] = []
    for _ in range(rounds):
        h.at(DELAY)
        got += urls(h.drain())
    return got


def test_pages_beyond_the_host_budget_stay_frontier_with_the_reason(
    harnesses: list[Harness], monkeypatch: pytest.MonkeyPatch
) -> None:
    h = make(harnesses, monkeypatch, {A: "10.0.0.1", B: "10.0.0.2"}, max_pages_per_host=2)
    for i in range(4):
        h.page(f"https://{A}/{i}")
    h.page(f"https://{B}/0")
    h.page(f"https://{A}/logo.png", kind=KIND_IMAGE)
    ready(h, A, B)
    got = fetch_all(h)
    assert sorted(got) == [f"https://{A}/0", f"https://{A}/1", f"https://{B}/0"]
    refused = {(r.url, r.fetch_error) for r in h.store.not_fetched()}
    why = "budget: MAX_PAGES_PER_HOST (2) reached"
    assert refused == {(f"https://{A}/2", why), (f"https://{A}/3", why)}
    # The host is done for the run, its image too (its row stays owed).
    assert h.stats.get_value("govsi/budget/pages_per_host") == 3
    assert h.stats.get_value("govsi/budget/pages_per_host/hosts") == 1
    assert not h.scheduler.has_pending_requests()


def test_images_beyond_the_host_budget_are_not_requested_pages_go_on(
    harnesses: list[Harness], monkeypatch: pytest.MonkeyPatch
) -> None:
    h = make(harnesses, monkeypatch, {A: "10.0.0.1"}, max_images_per_host=2)
    for i in range(5):
        h.page(f"https://{A}/logo.png?v={i}", kind=KIND_IMAGE)
    h.page(f"https://{A}/page")
    ready(h, A)
    got = fetch_all(h)
    assert len([u for u in got if "logo" in u]) == 2
    assert f"https://{A}/page" in got
    assert h.stats.get_value("govsi/budget/images_per_host") == 3
    assert h.stats.get_value("govsi/budget/images_per_host/hosts") == 1
    assert h.store.not_fetched() == []  # an image has no FRONTIER row: its row stays owed


def test_hosts_beyond_the_budget_are_never_contacted(
    harnesses: list[Harness], monkeypatch: pytest.MonkeyPatch
) -> None:
    h = make(harnesses, monkeypatch, {A: "10.0.0.1", B: "10.0.0.2"}, max_hosts=1)
    h.page(f"https://{A}/0")
    h.page(f"https://{B}/0")
    h.page(f"https://{B}/1")
    ready(h, A)
    got = fetch_all(h)
    assert got == [f"https://{A}/0"]  # and no robots.txt of B
    refused = {(r.url, r.fetch_error) for r in h.store.not_fetched()}
    why = "budget: MAX_HOSTS (1) reached"
    assert refused == {(f"https://{B}/0", why), (f"https://{B}/1", why)}
    assert h.stats.get_value("govsi/budget/hosts") == 2
    assert h.stats.get_value("govsi/budget/hosts/hosts") == 1


def test_a_host_past_its_byte_budget_stops_others_go_on(
    harnesses: list[Harness], monkeypatch: pytest.MonkeyPatch
) -> None:
    h = make(harnesses, monkeypatch, {A: "10.0.0.1", B: "10.0.0.2"}, max_bytes_per_host=1000)
    for i in range(3):
        h.page(f"https://{A}/{i}")
        h.page(f"https://{B}/{i}")
    ready(h, A, B)
    got: list[str] = []
    for _ in range(20):
        h.at(DELAY)
        for request in h.drain():
            got.append(request.url)
            body = b"x" * (1000 if request.meta[META_HOST] == A else 10)
            response = Response(request.url, body=body, request=request)
            h.scheduler.inflight.response_received(response, request, h.spider)
    assert [u for u in got if A in u] == [f"https://{A}/0"]
    assert len([u for u in got if B in u]) == 3
    why = "budget: MAX_BYTES_PER_HOST (1000) reached"
    assert {r.fetch_error for r in h.store.not_fetched()} == {why}
    assert len(h.store.not_fetched()) == 2
    assert h.stats.get_value("govsi/budget/bytes_per_host/hosts") == 1


# -- images through the trap rules (the spider) ----------------------------------------


def image_spider(**traps: int) -> SimpleNamespace:
    stats = DictStats()
    guard = TrapGuard(on_refusal=lambda r: stats.inc_value(f"govsi/traps/{r}"), **traps)
    admission = Admission(Scope(("gov.si",), 2000), guard, stats.inc_value, lambda url: True)
    # The spider's admission, and its stats where the spider has them.
    return SimpleNamespace(admission=admission, crawler=SimpleNamespace(stats=stats))


def test_image_variants_past_the_trap_rule_are_neither_recorded_nor_requested() -> None:
    s = image_spider(max_query_variants=3)
    sources = [f"https://{A}/logo.png?v={i}" for i in range(10)]
    sources += [f"https://{A}/logo.png?v=0", f"https://{A}/a/a/a/x.png", "https://x.com/o.png"]
    got = asyncio.run(s.admission.admitted(sources, s.admission.image))
    # Out of scope: recorded (the page shows it), never requested (may_fetch_image).
    assert got == [f"https://{A}/logo.png?v={i}" for i in range(3)] + ["https://x.com/o.png"]
    assert s.crawler.stats.get_value("govsi/traps/query_variants") == 7
    assert s.crawler.stats.get_value("govsi/traps/repeated_segment") == 1
    # A page met again gets the same images (admitted once, always).
    assert asyncio.run(s.admission.admitted(sources, s.admission.image)) == got


# -- spill files on disk (CrawlStore) --------------------------------------------------


def test_spill_files_past_their_cap_keep_items_in_memory_and_hold_requests_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    s = store(tmp_path, DB_SPILL_MAX_BYTES=1, DB_BUFFER_MAX_ITEMS=5)
    real_write = s.writer.write
    monkeypatch.setattr(s.writer, "write", lambda batch: False)
    for item in pages(1, 2):
        s.add(item)
    s.flush()
    assert len(spills(tmp_path)) == 1 and s.spills.full()
    for item in pages(3):
        s.add(item)
    s.flush()  # crawldb still away, the spill files full: the batch stays in memory
    assert len(spills(tmp_path)) == 1
    assert [i.url for i in s.writer.pending] == ["http://a.gov.si/3"]  # type: ignore[union-attr]
    assert s.stats.get_value("govsi/budget/spill_bytes") == 1
    for item in pages(4, 5, 6, 7):
        s.add(item)
    assert s.saturated()  # the scheduler takes no new requests
    assert len(spills(tmp_path)) == 1
    # When the crawl ends with crawldb away, what memory holds is saved all the same.
    s._spill_pending(final=True)
    assert len(spills(tmp_path)) == 2 and s.writer.pending == []
    monkeypatch.setattr(s.writer, "write", real_write)
    s.flush()
    assert stored(s) == {f"http://a.gov.si/{n}" for n in range(1, 8)}
    assert spills(tmp_path) == [] and not s.spills.full()
    close(s)


# -- site.sitemap_content across runs (CrawlWriter) ------------------------------------


@pytest.mark.parametrize(
    ("previous", "text", "limit", "expected"),
    [
        ("", "abc", 0, "abc"),  # no limit
        ("ab", "cd", 4, "abcd"),
        ("x" * 10, "y" * 100, 60, "x" * 10 + "y" * (50 - len(SITEMAP_CUT)) + SITEMAP_CUT),
        ("x" * 50, "y", 50, None),  # full: nothing more
        ("x" * 40, "y" * 100, 50, None),  # room for less than the note: nothing
        ("", "č" * 40, 45, "č" * ((45 - len(SITEMAP_CUT)) // 2) + SITEMAP_CUT),  # whole chars
    ],
)
def test_sitemap_content_is_appended_within_its_cap(
    previous: str, text: str, limit: int, expected: str | None
) -> None:
    got = capped_append(previous, text, limit)
    assert got == expected
    assert got is None or limit == 0 or len(got.encode()) <= limit


def test_sitemap_content_stays_within_its_cap_across_runs(tmp_path: Path) -> None:
    engine = database.make_engine(f"sqlite:///{tmp_path / 'crawldb.sqlite3'}")
    database.migrate(engine)
    limit = 1000
    for run in range(3):  # each run a writer of its own, as each crawl has
        w = CrawlWriter(engine, sitemap_store_max=limit)
        for n in range(3):
            w.add(SitemapFile(A, f"https://{A}/sitemap{run}-{n}.xml", "<url/>" * 20))
        assert w.flush()
    with engine.connect() as conn:
        [content] = conn.execute(text("SELECT sitemap_content FROM site")).scalars()
    assert limit - 100 < len(content.encode()) <= limit
    assert "sitemap1-0.xml" in content and "sitemap2" not in content
    engine.dispose()


# -- the report ------------------------------------------------------------------------


def test_the_report_lists_the_hosts_a_budget_stopped(tmp_path: Path) -> None:
    engine = database.make_engine(f"sqlite:///{tmp_path / 'crawldb.sqlite3'}")
    database.migrate(engine)
    pages_budget, hosts_budget = reason(budgets.PAGES_PER_HOST, 2), reason(budgets.HOSTS, 1)
    w = CrawlWriter(engine)
    for url, why in [
        (f"https://{A}/1", pages_budget),
        (f"https://{A}/2", pages_budget),
        (f"https://{A}/3", "forbidden by robots.txt"),
        (f"https://{B}/1", hosts_budget),
    ]:
        w.add(DiscoveredPage(url, 1))
        w.add(FetchedPage(url, 1, "FRONTIER", None, fetch_error=why))
    assert w.flush()
    with engine.connect() as conn:
        got = queries.budgets(conn, sql.Scope("all", "all")).records()
    assert got == [
        {"host": A, "budget": pages_budget, "pages_left": 2},
        {"host": B, "budget": hosts_budget, "pages_left": 1},
    ]
    engine.dispose()
