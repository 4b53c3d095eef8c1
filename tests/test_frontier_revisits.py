"""Revisits through FrontierScheduler: a fake clock, DNS and spider (tests/support/scheduler.py)
over a real SQLite crawldb a first crawl filled, its revisits read and claimed by
``RevisitRows`` on the harness's clock.

What a user relies on: REVISIT=off revisits nothing and due only what is due; robots.txt
is read again first and decides; a host's new pages go before its revisits, but an overdue
revisit goes out among them; the delays hold; each stored URL is asked for once, as a
conditional request carrying what the stored copy is checked by.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from scrapy import Request
from sqlalchemy import Engine, update

import govsi.frontier.revisits as revisits_module
from govsi.items import DiscoveredPage, FetchedImage, FetchedPage, Revisit
from govsi.requestmeta import KIND_IMAGE, KIND_PAGE, META_KIND, META_LASTMOD, META_REVISIT, META_URL
from govsi.revisit.due import RevisitMode
from govsi.store import database
from govsi.store.due import CLAIM_LEASE
from govsi.store.reader import StoredRobots
from govsi.store.revisits import RevisitRows
from govsi.store.schema import IMAGE, PAGE
from govsi.store.writer import CrawlWriter
from testkit.crawldb import q
from tests.support.scheduler import DELAY, Harness, harnesses, make, urls

__all__ = ["harnesses"]  # a fixture, used by name

DAY = 24 * 3600.0
T = datetime(2026, 11, 1, 12, 0)  # the first crawl
A = "https://a.gov.si"
STORED = [f"{A}/", f"{A}/o-nas", f"{A}/zasebno/porocilo", f"{A}/dokument.pdf"]
# What a due round revisits: the stored pages, and the picture they show with them.
DUE = [*STORED, f"{A}/logo.png"]


@pytest.fixture
def crawldb(tmp_path: Path) -> Iterator[Engine]:
    """A first crawl of a.gov.si: four stored pages, a picture, one page still FRONTIER."""
    engine = database.make_engine(f"sqlite:///{tmp_path / 'crawldb.sqlite3'}")
    database.migrate(engine)
    w = CrawlWriter(engine)
    w.add(DiscoveredPage(f"{A}/", 0))
    links = [*STORED[1:], f"{A}/se-ne"]
    w.add(
        FetchedPage(
            f"{A}/", 0, "HTML", T, 200, html_content="<p>root</p>",
            links=links, images=[f"{A}/logo.png"],
        )
    )  # fmt: skip
    for url in STORED[1:3]:
        w.add(FetchedPage(url, 1, "HTML", T, 200, html_content="<p>x</p>"))
    w.add(FetchedPage(STORED[3], 1, "BINARY", T, 200, data_type="PDF"))
    w.add(FetchedImage(f"{A}/logo.png", T, 200, "image/png", b"png"))
    assert w.flush()
    with engine.begin() as conn:
        conn.execute(
            update(PAGE).where(PAGE.c.url == f"{A}/o-nas").values(etag='"v1"', content_hash="h1")
        )
    yield engine
    engine.dispose()


def revisiting(
    harnesses: list[Harness],
    monkeypatch: pytest.MonkeyPatch,
    engine: Engine,
    mode: RevisitMode = "due",
    days: float = 10.0,
    **changes: Any,
) -> Harness:
    """A run ``days`` after the first crawl; crawldb's wall clock follows the harness's
    (which patches the revisits module's ``time``, and starts at 1000)."""
    rows = RevisitRows(
        engine,
        mode=mode,
        min_interval=DAY,
        overdue_after=DAY,
        clock=lambda: T + timedelta(days=days, seconds=revisits_module.time.monotonic() - 1000),
    )
    addresses = {"a.gov.si": "10.0.0.1", "b.gov.si": "10.0.0.1", "c.gov.si": "10.0.0.3"}
    h = make(harnesses, monkeypatch, addresses, revisit_rows=rows, revisit=mode, **changes)
    return h


def start(h: Harness, robots: str = "User-agent: *\nAllow: /\n") -> None:
    robots_request = h.take()
    assert robots_request is not None and robots_request.url == f"{A}/robots.txt"
    h.answer_robots(robots_request, body=robots)


def claimed(h: Harness) -> None:
    """robots.txt read, the delay waited: the first ask claims the host's due pages."""
    start(h)
    h.at(DELAY)
    assert h.take() is None  # claimed and queued now, to go out one by one


def crawl(h: Harness, seconds: float = 600.0, step: float = DELAY) -> list[Request]:
    """Ask as the engine does, ``step`` seconds apart, for ``seconds``."""
    out: list[Request] = []
    for _ in range(int(seconds / step) + 1):
        for request in h.drain():
            out.append(request)
            if request.meta[META_KIND] == KIND_PAGE:
                # Its record reaches the store: its links are known (late entries wait).
                done = FetchedPage(request.url, request.meta["depth"], "HTML", None)
                h.scheduler.pages_out.item_done(done)
        h.at(step)
    return out


def revisits_of(requests: list[Request]) -> list[str]:
    return [r.url for r in requests if META_REVISIT in r.meta]


def test_off_revisits_nothing(
    harnesses: list[Harness], monkeypatch: pytest.MonkeyPatch, crawldb: Engine
) -> None:
    h = revisiting(harnesses, monkeypatch, crawldb, mode="off")
    assert h.take() is None  # not even robots.txt: no host has work
    assert h.scheduler.has_pending_requests() is False
    assert h.stats.get_value("govsi/revisit/due") is None


def test_due_within_a_day_revisits_nothing(
    harnesses: list[Harness], monkeypatch: pytest.MonkeyPatch, crawldb: Engine
) -> None:
    h = revisiting(harnesses, monkeypatch, crawldb, days=0.5)
    assert h.take() is None and h.scheduler.has_pending_requests() is False
    assert h.stats.get_value("govsi/revisit/due") == 0


@pytest.mark.parametrize("mode", ["due", "all"])
def test_every_stored_url_is_asked_for_once_robots_txt_first(
    harnesses: list[Harness], monkeypatch: pytest.MonkeyPatch, crawldb: Engine, mode: RevisitMode
) -> None:
    # all: half a day after the first crawl, too soon for due. The picture in both: in
    # due with the page showing it, which is due (found in the round, before its visit).
    h = revisiting(harnesses, monkeypatch, crawldb, mode=mode, days=10 if mode == "due" else 0.5)
    expected = DUE
    assert h.stats.get_value("govsi/revisit/due") == len(expected)
    start(h)
    got = crawl(h)
    assert sorted(revisits_of(got)) == sorted(expected)
    assert len(got) == len(expected)  # nothing twice, and no FRONTIER row among them
    [about] = [r for r in got if r.url == f"{A}/o-nas"]
    assert about.meta[META_REVISIT] == Revisit(
        etag='"v1"', content_hash="h1", page_type="HTML", http_status_code=200, accessed_time=T
    )
    assert h.stats.get_value("govsi/revisit/sent") == len(expected)
    if mode == "all":
        return
    # due: a picture whose download was never recorded is due in the next round, once a
    # page showing it was visited (the fetch side writes the visit, its next one and
    # clears the claim) though none is due any more.
    with crawldb.begin() as conn:
        conn.execute(
            update(PAGE).values(
                accessed_time=T + timedelta(days=10),
                next_visit=T + timedelta(days=40),
                revisit_claim=None,
            )
        )
    h2 = revisiting(harnesses, monkeypatch, crawldb, mode="due", days=11.5)
    start(h2)
    [picture] = crawl(h2)
    assert (picture.url, picture.meta[META_KIND]) == (f"{A}/logo.png", KIND_IMAGE)
    assert picture.meta[META_REVISIT].http_status_code == 200


def test_robots_txt_is_fetched_again_even_when_crawldb_has_it(
    harnesses: list[Harness], monkeypatch: pytest.MonkeyPatch, crawldb: Engine
) -> None:
    h = revisiting(harnesses, monkeypatch, crawldb)
    # What another worker fetched an hour ago (a host taken over) is not taken.
    h.scheduler.robots_read({"a.gov.si": StoredRobots(200, "User-agent: *\n", 3600.0)})
    assert h.stats.get_value("govsi/robots/from_crawldb") is None
    robots = h.take()
    assert robots is not None and robots.url == f"{A}/robots.txt"


def test_a_page_robots_txt_now_forbids_keeps_its_copy_and_gets_the_reason(
    harnesses: list[Harness], monkeypatch: pytest.MonkeyPatch, crawldb: Engine
) -> None:
    h = revisiting(harnesses, monkeypatch, crawldb)
    start(h, robots="User-agent: *\nDisallow: /zasebno/\n")
    got = crawl(h)
    # (The logo with the pages showing it.)
    expected = set(DUE) - {f"{A}/zasebno/porocilo"}
    assert sorted(revisits_of(got)) == sorted(expected)
    assert h.stats.get_value("govsi/revisit/refused_by_robots") == 1
    h.scheduler.revisits.stop()  # what a run's end writes
    [(ptype, html, error, claim)] = q(
        crawldb,
        "SELECT page_type_code, html_content, fetch_error, revisit_claim FROM page "
        f"WHERE url = '{A}/zasebno/porocilo'",
    )
    assert (ptype, html, error, claim) == ("HTML", "<p>x</p>", "forbidden by robots.txt", None)
    assert h.store.not_fetched() == []  # no FRONTIER record over the stored page


def test_new_pages_go_before_revisits_and_the_delays_hold(
    harnesses: list[Harness], monkeypatch: pytest.MonkeyPatch, crawldb: Engine
) -> None:
    # Due for less than a day: not overdue, so after every new page of the host.
    with crawldb.begin() as conn:
        conn.execute(update(PAGE).values(next_visit=T + timedelta(days=9, hours=12)))
    h = revisiting(harnesses, monkeypatch, crawldb)
    new = [f"{A}/novo/{i}" for i in range(3)] + [f"{A}/novo/globlje"]
    for url in new[:3]:
        h.page(url, depth=1)
    h.page(new[3], depth=2)
    h.page("https://b.gov.si/", depth=0)  # another host on the same address
    start(h)
    times: dict[str, float] = {}
    order: list[str] = []
    for _ in range(200):
        for r in h.drain():
            times[r.url] = h.clock.monotonic()
            order.append(r.url)
        h.at(0.5)
    a_pages = [u for u in order if u.startswith(A) and not u.endswith("robots.txt")]
    assert a_pages == new + a_pages[len(new) :] and sorted(a_pages[len(new) :]) == sorted(DUE)
    # No two requests to one address closer than the delay (a.gov.si and b.gov.si share it).
    moments = sorted(times.values())
    assert all(b - a >= DELAY for a, b in itertools.pairwise(moments))


def test_an_overdue_revisit_is_not_starved_by_new_pages(
    harnesses: list[Harness], monkeypatch: pytest.MonkeyPatch, crawldb: Engine
) -> None:
    # Only the document is overdue (due for nine days); the others are due since an hour.
    with crawldb.begin() as conn:
        conn.execute(update(PAGE).values(next_visit=T + timedelta(days=9, hours=23)))
        conn.execute(
            update(PAGE).where(PAGE.c.url == STORED[3]).values(next_visit=T + timedelta(days=1))
        )
    h = revisiting(harnesses, monkeypatch, crawldb)
    deep = [f"{A}/globoko/{i}" for i in range(20)]
    for url in deep:
        h.page(url, depth=2)  # a host with far more new pages than time
    start(h)
    got = urls(crawl(h, seconds=DELAY * 10))
    # The document (depth 1) goes out among the new pages, before the deeper ones.
    assert got[0] == STORED[3]
    assert not set(got) & set(STORED[:3])  # the rest wait for the new pages
    assert h.stats.get_value("govsi/revisit/queued/overdue") == 1


def test_a_claim_too_old_to_use_is_claimed_again_not_sent_twice(
    harnesses: list[Harness], monkeypatch: pytest.MonkeyPatch, crawldb: Engine
) -> None:
    h = revisiting(harnesses, monkeypatch, crawldb)
    claimed(h)
    h.at(CLAIM_LEASE)  # held here longer than a claim may be used (another worker may
    got = crawl(h)  # have taken them): dropped, claimed again, sent once each
    assert sorted(revisits_of(got)) == sorted(DUE)
    assert h.stats.get_value("govsi/revisit/claim_expired") == len(STORED)


def test_a_sitemaps_lastmod_makes_a_known_page_due_now(
    harnesses: list[Harness], monkeypatch: pytest.MonkeyPatch, crawldb: Engine
) -> None:
    with crawldb.begin() as conn:
        conn.execute(update(PAGE).values(next_visit=T + timedelta(days=30)))
    h = revisiting(harnesses, monkeypatch, crawldb, days=5)
    assert h.take() is None  # nothing due
    seen = Request(STORED[1], meta={META_URL: STORED[1], META_LASTMOD: "2026-11-04"})
    h.scheduler.df.request_seen(seen)  # a page the crawl knows
    h.scheduler.enqueue_request(seen)
    unchanged = Request(STORED[2], meta={META_URL: STORED[2], META_LASTMOD: "2026-10-01"})
    h.scheduler.df.request_seen(unchanged)  # not changed since the visit
    h.scheduler.enqueue_request(unchanged)
    h.at(10.0)  # the watchdog writes it
    h.scheduler.inflight.free_stuck()
    start(h)
    assert revisits_of(crawl(h)) == [STORED[1]]
    assert h.stats.get_value("govsi/revisit/sitemap_lastmod") == 1


def test_claims_not_used_go_back_when_the_run_ends(
    harnesses: list[Harness], monkeypatch: pytest.MonkeyPatch, crawldb: Engine
) -> None:
    h = revisiting(harnesses, monkeypatch, crawldb)
    claimed(h)
    assert h.take() is not None  # one sent, the rest queued
    assert h.scheduler.has_pending_requests()
    h.scheduler._engine_stopped()
    # Every claim goes back: the one sent too, whose visit the fetch side never recorded
    # (it clears the claim when it does): due for the next run.
    assert q(crawldb, "SELECT url FROM page WHERE revisit_claim IS NOT NULL") == []
    assert h.stats.get_value("govsi/revisit/claims_released") == len(DUE)


def test_a_hosts_revisits_stop_at_its_share_of_the_day(
    harnesses: list[Harness], monkeypatch: pytest.MonkeyPatch, crawldb: Engine
) -> None:
    # Two revisits a day at the host's delay; the document is the soonest due.
    with crawldb.begin() as conn:
        conn.execute(update(PAGE).values(next_visit=T + timedelta(days=5)))
        conn.execute(
            update(PAGE).where(PAGE.c.url == STORED[3]).values(next_visit=T + timedelta(days=2))
        )
    h = revisiting(harnesses, monkeypatch, crawldb, revisit_host_share=2 * DELAY / DAY)
    start(h)
    got = revisits_of(crawl(h))
    assert len(got) == 2 and STORED[3] in got, got
    assert h.stats.get_value("govsi/budget/revisits_per_host") == 1
    assert h.scheduler.has_pending_requests() is False  # the rest wait for the next run
    h.scheduler._engine_stopped()
    # The next run the same day takes none (every worker's claims count).
    h2 = revisiting(harnesses, monkeypatch, crawldb, days=10.01, revisit_host_share=2 * DELAY / DAY)
    start(h2)
    assert revisits_of(crawl(h2)) == []


def test_a_new_round_in_the_same_run_revisits_what_has_come_due_again(
    harnesses: list[Harness], monkeypatch: pytest.MonkeyPatch, crawldb: Engine
) -> None:
    # REVISIT_WAIT's wake: the crawl stayed open, and the pages it revisited are due again.
    h = revisiting(harnesses, monkeypatch, crawldb)
    start(h)
    assert sorted(revisits_of(crawl(h))) == sorted(DUE)
    with crawldb.begin() as conn:  # the visits written, each with its next one, now come
        for table in (PAGE, IMAGE):
            conn.execute(
                update(table).values(
                    accessed_time=T + timedelta(days=8),
                    revisit_claim=None,
                    revisit_claimed_at=T + timedelta(days=8),
                )
            )
        conn.execute(update(PAGE).values(next_visit=T + timedelta(days=9)))
    assert h.scheduler.has_pending_requests() is False
    h.scheduler.revisits.open("w")
    assert h.scheduler.has_pending_requests()
    assert sorted(revisits_of(crawl(h))) == sorted(DUE)
    assert h.stats.get_value("govsi/revisit/sent") == 2 * len(DUE)


def test_from_crawler_reads_the_revisit_settings(
    monkeypatch: pytest.MonkeyPatch, crawldb: Engine
) -> None:
    from scrapy.utils.test import get_crawler

    from govsi import settings as project
    from govsi.frontier.scheduler import FrontierScheduler
    from govsi.store.extension import CrawlStore
    from tests.support.scheduler import FactorySpider, FakeStore

    values = {k: getattr(project, k) for k in dir(project) if k.isupper()}
    values.update(EXTENSIONS={}, DUPEFILTER_CLASS="tests.support.scheduler.FakeDupeFilter")
    for mode in ("all", "off"):
        values.update(REVISIT=mode, REVISIT_MIN_INTERVAL=3600, REVISIT_HUB_MIN_INTERVAL=600,
                      REVISIT_HOST_SHARE=0.25)  # fmt: skip
        crawler = get_crawler(FactorySpider, values)
        store = FakeStore()
        store.engine = crawldb  # type: ignore[attr-defined]
        monkeypatch.setattr(crawler, "get_extension", {CrawlStore: store}.get)
        scheduler = FrontierScheduler.from_crawler(crawler)
        rows = scheduler.revisits.rows
        if mode == "off":
            assert rows is None
        else:
            assert rows is not None and (rows.mode, rows.min_interval) == ("all", 3600)
            assert rows.overdue_after == 3600 and rows.live_within == project.LEASE_TTL
            assert rows.hub_min_interval == 600
            assert scheduler.revisits.host_share == 0.25
