"""crawldb's side of revisits (``RevisitRows``), on SQLite and PostgreSQL: which stored rows
a round takes (due, all, never FRONTIER), claims that let each row go out once per round
across workers, images due with the pages that show them, what a refusal records, and
the SQL agreeing with ``DueRule``, the rule in Python."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import date, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import Engine, insert, update

from govsi.items import DiscoveredPage, FetchedImage, FetchedPage, PageType
from govsi.revisit.due import DueRule, RevisitMode
from govsi.sharing.leases import goodbye, heartbeat
from govsi.store.due import CLAIM_LEASE
from govsi.store.hostbudget import budget_key, read_spent
from govsi.store.images import record_images
from govsi.store.revisits import RevisitRows
from govsi.store.schema import CRAWL_META, PAGE
from govsi.store.writer import CrawlWriter
from testkit.crawldb import q

DAY = 24 * 3600.0
T = datetime(2026, 11, 1, 12, 0)  # when the first crawl fetched everything


def page(url: str, ptype: PageType = "HTML", status: int = 200, **kw: Any) -> FetchedPage:
    html = "<p>x</p>" if ptype == "HTML" else None
    return FetchedPage(url, 1, ptype, T, status, html_content=html, **kw)


def crawled(engine: Engine) -> None:
    """One host with every kind of stored row, a FRONTIER row, and pictures."""
    w = CrawlWriter(engine)
    w.add(DiscoveredPage("http://a.gov.si/", 0))
    w.add(
        FetchedPage(
            "http://a.gov.si/", 0, "HTML", T, 200, html_content="<p>root</p>",
            links=["http://a.gov.si/doc.pdf", "http://a.gov.si/new"],
            images=["http://a.gov.si/logo.png", "https://cdn.gov.si/slika.jpg"],
        )
    )  # fmt: skip
    w.add(page("http://a.gov.si/doc.pdf", "BINARY", data_type="PDF"))
    w.add(page("http://a.gov.si/copy", "DUPLICATE", duplicate_of="http://a.gov.si/"))
    w.add(page("http://a.gov.si/gone", "ERROR", None, fetch_error="timeout"))
    w.add(page("http://a.gov.si/moved", "HTML", 301, links=["http://a.gov.si/"]))
    w.add(FetchedImage("http://a.gov.si/logo.png", T, 200, "image/png", b"png"))
    w.add(FetchedImage("https://cdn.gov.si/slika.jpg", T, 200, "image/jpeg", b"jpg"))
    assert w.flush()


STORED = {
    "http://a.gov.si/",
    "http://a.gov.si/doc.pdf",
    "http://a.gov.si/copy",
    "http://a.gov.si/gone",
    "http://a.gov.si/moved",
}


def rows(
    engine: Engine,
    mode: RevisitMode = "due",
    worker: str = "w1",
    start: datetime | None = None,
    hub_min_interval: float | None = None,
) -> RevisitRows:
    """``worker``'s side of a round that started at ``start`` (by default ten days after
    the first crawl)."""
    r = RevisitRows(
        engine, mode=mode, min_interval=DAY, overdue_after=DAY, hub_min_interval=hub_min_interval
    )
    r.open(worker, now=start or T + timedelta(days=10))
    return r


def set_page(engine: Engine, url: str, **values: Any) -> None:
    with engine.begin() as conn:
        conn.execute(update(PAGE).where(PAGE.c.url == url).values(**values))


@pytest.fixture
def db(engine: Engine) -> Engine:
    crawled(engine)
    return engine


def test_a_run_within_the_minimum_interval_revisits_nothing(db: Engine) -> None:
    r = rows(db)
    assert r.due_hosts(now=T + timedelta(hours=23)) == []
    assert r.claim("a.gov.si", 100, now=T + timedelta(hours=23)) == []
    # Pages stored before revisits existed (next_visit NULL) are due a day after their visit.
    later = T + timedelta(days=1, seconds=1)
    [(host, _, count)] = [h for h in r.due_hosts(now=later) if h[0] == "a.gov.si"]
    # The logo with them: the page showing it is due.
    assert (host, count) == ("a.gov.si", len(STORED) + 1)
    claimed = r.claim("a.gov.si", 100, now=later)
    assert {c.url for c in claimed} == STORED  # every kind of stored row; no FRONTIER row


def test_next_visit_decides_but_never_sooner_than_the_minimum_interval(db: Engine) -> None:
    now = T + timedelta(days=3)
    set_page(db, "http://a.gov.si/", next_visit=T + timedelta(days=5))  # not yet
    set_page(db, "http://a.gov.si/doc.pdf", next_visit=T + timedelta(days=2))  # due
    # A next visit an hour after a visit an hour ago (a sitemap's lastmod): not yet.
    set_page(
        db, "http://a.gov.si/copy",
        accessed_time=now - timedelta(hours=1), next_visit=now - timedelta(minutes=1),
    )  # fmt: skip
    got = {c.url for c in rows(db).claim("a.gov.si", 100, now=now)}
    assert got == STORED - {"http://a.gov.si/", "http://a.gov.si/copy"}


def test_all_takes_every_page_visited_before_the_round_once(db: Engine) -> None:
    start = T + timedelta(hours=1)  # within the minimum interval: all does not wait
    r = rows(db, "all", start=start)
    first = r.claim("a.gov.si", 2, now=start)
    rest = r.claim("a.gov.si", 100, now=start)
    assert len(first) == 2 and {c.url for c in first + rest} == STORED
    # Visited in this round: never again in it, whoever asks.
    for c in first:
        set_page(db, c.url, accessed_time=start + timedelta(minutes=5), revisit_claim=None)
    again = rows(db, "all", worker="w2", start=start)
    assert {c.url for c in again.claim("a.gov.si", 100)} == {c.url for c in rest}


def test_claimed_rows_carry_what_the_request_is_checked_by(db: Engine) -> None:
    set_page(
        db, "http://a.gov.si/doc.pdf", etag='"v1"', last_modified="Sun, 01 Nov 2026 10:00:00 GMT",
        content_hash="abc", revisit_history="86400:0", next_visit=T + timedelta(days=1),
    )  # fmt: skip
    now = T + timedelta(days=10)
    [doc] = [c for c in rows(db).claim("a.gov.si", 100, now=now) if c.url.endswith(".pdf")]
    assert (doc.image, doc.depth) == (False, 1)
    r = doc.revisit
    assert (r.etag, r.last_modified, r.content_hash, r.page_type) == (
        '"v1"', "Sun, 01 Nov 2026 10:00:00 GMT", "abc", "BINARY",
    )  # fmt: skip
    assert (r.http_status_code, r.accessed_time, r.history) == (200, T, "86400:0")
    # Due for more than the minimum interval: overdue (it goes out among new pages).
    assert doc.overdue
    # Due for less: not (w1's claims are taken over: on SQLite any other worker is gone,
    # on PostgreSQL w1 was never seen alive).
    soon = T + timedelta(days=1, hours=12)
    fresh = rows(db, worker="w2", start=soon).claim("a.gov.si", 100, now=soon)
    assert len(fresh) == len(STORED) and not any(c.overdue for c in fresh)


def test_overdue_only_takes_those_due_longer_than_the_bound(db: Engine) -> None:
    now = T + timedelta(days=10)
    set_page(db, "http://a.gov.si/", next_visit=now - timedelta(hours=2))  # due, not overdue
    got = rows(db).claim("a.gov.si", 100, overdue_only=True, now=now)
    assert {c.url for c in got} == STORED - {"http://a.gov.si/"}
    assert all(c.overdue for c in got)


def test_a_resumed_run_takes_over_a_dead_workers_claims_but_not_what_it_did(
    db: Engine,
) -> None:
    now = T + timedelta(days=2)
    first = rows(db, worker="killed", start=now).claim("a.gov.si", 3, now=now)
    # The killed run revisited one (the fetch side cleared its claim, set its next visit).
    done = first[0].url
    set_page(db, done, revisit_claim=None, accessed_time=now, next_visit=now + timedelta(days=1))
    later = now + timedelta(minutes=5)
    resumed = rows(db, worker="resumed", start=later)
    assert {c.url for c in resumed.claim("a.gov.si", 100, now=later)} == STORED - {done}
    # A claim the killed run left on a page it revisited (not due: nobody takes it over)
    # goes back when the resumed run ends, with the resumed run's own.
    set_page(db, done, revisit_claim="killed")
    assert resumed.release() == len(STORED)
    assert q(db, "SELECT url FROM page WHERE revisit_claim IS NOT NULL") == []


def test_a_refused_page_keeps_its_copy_gets_the_reason_and_is_not_due_again(
    db: Engine,
) -> None:
    now = T + timedelta(days=2)
    r = rows(db, start=now)
    assert r.claim("a.gov.si", 100, now=now)
    r.refused(["http://a.gov.si/"], "forbidden by robots.txt", now=now)
    [(ptype, html, error, claim, next_visit, found, when)] = q(
        db,
        "SELECT page_type_code, html_content, fetch_error, revisit_claim, next_visit, "
        "visit_outcome, visit_time FROM page WHERE url = 'http://a.gov.si/'",
    )
    assert (ptype, html, error, claim) == ("HTML", "<p>root</p>", "forbidden by robots.txt", None)
    assert str(next_visit).startswith(str(now + timedelta(days=1)))
    assert found == "kept" and str(when).startswith(str(now))  # a visit of the round
    # Let go (a budget) and released at the end: due again, but not in this round.
    r.let_go(["http://a.gov.si/doc.pdf"])
    assert r.release() == len(STORED) - 2
    assert {c.url for c in r.claim("a.gov.si", 100, now=now)} == STORED - {
        "http://a.gov.si/",
        "http://a.gov.si/doc.pdf",
    }
    nxt = rows(db, worker="w2", start=now + timedelta(hours=1))
    assert "http://a.gov.si/doc.pdf" in {c.url for c in nxt.claim("a.gov.si", 100, now=now)}


def test_images_are_due_with_the_pages_that_show_them(db: Engine) -> None:
    now = T + timedelta(days=3)
    r = rows(db)
    # The page showing them is not due, nor visited since: neither is due.
    set_page(db, "http://a.gov.si/", next_visit=T + timedelta(days=5))
    assert r.images("a.gov.si", "", 100, now=now) == []
    assert "cdn.gov.si" not in {h for h, _, _ in r.due_hosts(now=now)}
    # Due with the page (found in the round before its visit is written), and once it
    # was visited since their download.
    for showing in ({"next_visit": T + timedelta(days=2)}, {"accessed_time": now}):
        set_page(db, "http://a.gov.si/", **{"next_visit": T + timedelta(days=5), **showing})
        assert [i.url for i in r.images("cdn.gov.si", "", 100, now=now)] == [
            "https://cdn.gov.si/slika.jpg"
        ]
        r.let_go(["https://cdn.gov.si/slika.jpg"])
        assert r.release() == 0
        r = rows(db, worker="w1", start=now + timedelta(seconds=1))  # a new round
    hosts = {h: n for h, _, n in r.due_hosts(now=now)}
    assert hosts["cdn.gov.si"] == 1
    [logo] = r.images("a.gov.si", "", 100, now=now)
    assert (logo.url, logo.image, logo.revisit.http_status_code) == (
        "http://a.gov.si/logo.png", True, 200,
    )  # fmt: skip
    assert [i.url for i in r.images("cdn.gov.si", "", 100, now=now)] == [
        "https://cdn.gov.si/slika.jpg"
    ]
    # Claimed (on every row of its URL): not due again while held (as pages: the claim
    # rule is theirs).
    assert r.images("a.gov.si", "", 100, now=now) == []
    assert "cdn.gov.si" not in {h for h, _, _ in r.due_hosts(now=now)}
    # all: every picture downloaded before the round.
    every = rows(db, "all", worker="w3", start=T + timedelta(minutes=1))
    assert r.release() == 2  # the two claimed pictures' rows
    assert [i.url for i in every.images("a.gov.si", "", 100)] == ["http://a.gov.si/logo.png"]


def test_a_pictures_visit_gives_its_claim_back_and_it_is_done_for_the_round(
    db: Engine,
) -> None:
    r = rows(db, "all", start=T + timedelta(minutes=1))
    [logo] = r.images("a.gov.si", "", 100)
    seen = FetchedImage(logo.url, not_modified=True, accessed_time=T + timedelta(minutes=2),
                        http_status_code=304, revisit=logo.revisit)  # fmt: skip
    with db.begin() as conn:
        record_images(conn, [seen], store_data=False)
    claims = q(db, f"SELECT revisit_claim, revisit_claimed_at FROM image WHERE url = '{logo.url}'")
    assert claims and all(c is None and at is not None for c, at in claims)
    # Done: neither this worker nor a later one in the same round takes it again.
    assert r.images("a.gov.si", "", 100) == []
    assert (
        rows(db, "all", worker="w2", start=T + timedelta(minutes=1)).images("a.gov.si", "", 100)
        == []
    )
    # A picture not sent (robots.txt, a budget) is let go: due again next round only.
    [slika] = r.images("cdn.gov.si", "", 100)
    r.let_go([slika.url])
    assert r.images("cdn.gov.si", "", 100) == []


def test_a_sitemaps_lastmod_makes_a_page_due_at_once(db: Engine) -> None:
    now = T + timedelta(days=5)
    for url in STORED:
        set_page(db, url, next_visit=T + timedelta(days=20))
    r = rows(db)
    assert r.claim("a.gov.si", 100, now=now) == []
    changed = [
        ("http://a.gov.si/", T + timedelta(days=4)),  # changed since the visit: due now
        ("http://a.gov.si/copy", T - timedelta(days=1)),  # older than the visit
        ("http://a.gov.si/new", T + timedelta(days=4)),  # FRONTIER: new, not a revisit
    ]
    assert r.sitemap_lastmods(changed, now=now) == 1
    assert [c.url for c in r.claim("a.gov.si", 100, now=now)] == ["http://a.gov.si/"]
    # A page visited an hour ago: due a day after that visit, not at once.
    set_page(db, "http://a.gov.si/copy", accessed_time=now - timedelta(hours=1))
    assert r.sitemap_lastmods([("http://a.gov.si/copy", now)], now=now) == 0
    [(due,)] = q(db, "SELECT next_visit FROM page WHERE url = 'http://a.gov.si/copy'")
    assert str(due).startswith(str(now + timedelta(hours=23)).replace("T", " ")[:16])


CASES = [
    # (accessed, next_visit): hours after T, or None
    (0, None), (0, 10), (0, 30), (0, 200), (47, 48), (20, 30), (None, None), (100, 99),
    (49.5, 49.8), (40, None),
]  # fmt: skip


@pytest.mark.parametrize("hub_min_interval", [None, 3600.0])
@pytest.mark.parametrize("mode", ["due", "all"])
def test_the_sql_and_the_python_rule_agree(
    engine: Engine, mode: RevisitMode, hub_min_interval: float | None
) -> None:
    w = CrawlWriter(engine)
    urls = [f"http://b.gov.si/{i}" for i in range(len(CASES))]
    for url in urls:
        w.add(FetchedPage(url, 1, "HTML", T, 200, html_content="x"))
    assert w.flush()
    hours = lambda h: None if h is None else T + timedelta(hours=h)  # noqa: E731
    for url, (accessed, next_visit) in zip(urls, CASES, strict=True):
        set_page(engine, url, accessed_time=hours(accessed), next_visit=hours(next_visit))
    now, start = T + timedelta(hours=50), T + timedelta(hours=30)
    r = rows(engine, mode, start=start, hub_min_interval=hub_min_interval)
    rule = DueRule(mode, now, start, DAY, DAY, hub_min_interval)
    expected = {
        url
        for url, (accessed, next_visit) in zip(urls, CASES, strict=True)
        if rule.is_due(hours(next_visit), hours(accessed))
    }
    overdue = {
        url
        for url, (accessed, next_visit) in zip(urls, CASES, strict=True)
        if rule.is_overdue(hours(next_visit), hours(accessed))
    }
    first = r.claim("b.gov.si", 100, overdue_only=True, now=now)
    assert {c.url for c in first} == overdue and all(c.overdue for c in first)
    rest = r.claim("b.gov.si", 100, now=now)  # its own claims are not taken twice
    assert {c.url for c in first + rest} == expected and overdue < expected
    assert not any(c.overdue for c in rest)


def test_an_all_round_a_killed_run_left_is_finished_not_started_again(db: Engine) -> None:
    t0 = T + timedelta(days=3)
    killed = rows(db, "all", worker="killed", start=t0)
    first = killed.claim("a.gov.si", 2, now=t0)
    done = first[0].url  # visited (the fetch side cleared its claim); then kill -9
    set_page(db, done, accessed_time=t0 + timedelta(minutes=5), revisit_claim=None)
    resumed = rows(db, "all", worker="resumed", start=t0 + timedelta(hours=1))
    assert resumed.round_start == t0
    again = resumed.claim("a.gov.si", 100, now=t0 + timedelta(hours=1))
    assert {c.url for c in again} == STORED - {done}
    # This one ends normally: the round with it. The next starts a new one.
    resumed.release()
    later = t0 + timedelta(hours=2)
    fresh = rows(db, "all", worker="next", start=later)
    assert fresh.round_start == later and len(fresh.claim("a.gov.si", 100, now=later)) == 5


def round_started(engine: Engine) -> str:
    [(value,)] = q(engine, "SELECT value FROM crawl_meta WHERE key = 'round_started'")
    return str(value)


def test_each_run_marks_the_last_round_for_the_report(db: Engine) -> None:
    t0 = T + timedelta(days=3)
    rows(db, "due", start=t0)
    assert round_started(db) == str(t0) + ".000000"
    rows(db, "due", start=t0 + timedelta(hours=5))  # resumed the same day: the same round
    assert round_started(db) == str(t0) + ".000000"
    # REVISIT=all: the start of the round it joins (a killed run's), not now.
    t1 = t0 + timedelta(days=2)
    rows(db, "all", worker="killed", start=t1).claim("a.gov.si", 1, now=t1)
    resumed = rows(db, "all", worker="resumed", start=t1 + timedelta(hours=2))
    assert resumed.round_start == t1 and round_started(db) == str(t1) + ".000000"


def test_an_all_round_without_a_claim_for_a_day_is_over(db: Engine) -> None:
    t0 = T + timedelta(days=3)
    rows(db, "all", worker="killed", start=t0).claim("a.gov.si", 1, now=t0)
    much_later = t0 + timedelta(days=1, minutes=1)
    assert rows(db, "all", worker="w", start=much_later).round_start == much_later


# -- several workers on one PostgreSQL crawldb ------------------------------------------------


def alive(engine: Engine, *workers: str) -> None:
    with engine.begin() as conn:
        for worker in workers:
            heartbeat(conn, worker, ttl=30.0)


def many_pages(engine: Engine, n: int) -> list[str]:
    w = CrawlWriter(engine)
    urls = [f"http://c.gov.si/{i}" for i in range(n)]
    for url in urls:
        w.add(FetchedPage(url, 1, "HTML", T, 200, html_content="x"))
    assert w.flush()
    return urls


def test_two_workers_never_claim_the_same_row(pg: Engine) -> None:
    urls = many_pages(pg, 300)
    workers = [f"w{i}" for i in range(4)]
    alive(pg, *workers)
    sources = {w: rows(pg, worker=w) for w in workers}

    def claim_all(worker: str) -> list[str]:
        got: list[str] = []
        while batch := sources[worker].claim("c.gov.si", 7, now=T + timedelta(days=2)):
            got += [c.url for c in batch]
        return got

    with ThreadPoolExecutor(4) as pool:
        claimed = list(pool.map(claim_all, workers))
    every = [u for part in claimed for u in part]
    assert sorted(every) == sorted(urls)  # each once, none left
    assert all(claimed)  # and they did share the work


def test_workers_together_claim_no_more_than_the_hosts_budget(pg: Engine) -> None:
    urls = many_pages(pg, 120)
    workers = [f"w{i}" for i in range(4)]
    alive(pg, *workers)
    sources = {w: rows(pg, worker=w) for w in workers}
    today = T + timedelta(days=2)

    def claim_all(worker: str) -> tuple[list[str], bool]:
        got: list[str] = []
        while batch := sources[worker].claim("c.gov.si", 7, per_day=50, now=today):
            got += [c.url for c in batch]
            if batch.capped:
                return got, True
        return got, False

    with ThreadPoolExecutor(4) as pool:
        claimed = list(pool.map(claim_all, workers))
    every = [u for part, _ in claimed for u in part]
    assert len(every) == len(set(every)) == 50  # the budget, together, each row once
    assert any(capped for _, capped in claimed)
    # The rest wait for the next day's budget, which starts from nothing.
    alive(pg, "w9")
    later = rows(pg, worker="w9", start=today + timedelta(days=1))
    tomorrow = later.claim("c.gov.si", 100, per_day=50, now=today + timedelta(days=1))
    assert len(tomorrow) == 50 < len(urls)


def test_the_budget_takes_the_soonest_due_first_and_counts_pictures(engine: Engine) -> None:
    crawled(engine)
    now = T + timedelta(days=10)
    for i, url in enumerate(sorted(STORED)):
        set_page(engine, url, next_visit=T + timedelta(days=1 + i))
    r = rows(engine)
    first = r.claim("a.gov.si", 100, per_day=2, now=now)
    assert [c.url for c in first] == sorted(STORED)[:2] and first.capped
    assert r.claim("a.gov.si", 100, per_day=2, now=now) == []
    assert r.images("a.gov.si", "", 100, per_day=2, now=now).capped
    # Pictures and pages spend one budget; a larger one lets the rest go.
    assert [i.url for i in r.images("a.gov.si", "", 100, per_day=3, now=now)] == [
        "http://a.gov.si/logo.png"
    ]
    rest = r.claim("a.gov.si", 100, per_day=100, now=now)
    assert {c.url for c in rest} == set(sorted(STORED)[2:]) and not rest.capped


def test_a_budget_it_cannot_read_counts_as_spent(engine: Engine) -> None:
    crawled(engine)
    with engine.begin() as conn:
        conn.execute(insert(CRAWL_META).values(key=budget_key("a.gov.si"), value="garbage"))
    r = rows(engine)
    now = T + timedelta(days=10)
    assert r.claim("a.gov.si", 100, per_day=10, now=now).capped
    # Written anew as spent for today; the next day starts from nothing.
    assert len(r.claim("a.gov.si", 100, per_day=10, now=now + timedelta(days=1))) == 5


def test_a_live_workers_claim_holds_until_its_lease_runs_out(pg: Engine) -> None:
    many_pages(pg, 3)
    alive(pg, "a", "b")
    now = T + timedelta(days=2)
    assert len(rows(pg, worker="a").claim("c.gov.si", 100, now=now)) == 3
    assert rows(pg, worker="b").claim("c.gov.si", 100, now=now) == []
    later = now + timedelta(seconds=CLAIM_LEASE + 1)
    assert len(rows(pg, worker="b").claim("c.gov.si", 100, now=later)) == 3
    # A worker that ended holds nothing: its claims are taken at once.
    with pg.begin() as conn:
        goodbye(conn, "b")
    assert len(rows(pg, worker="a").claim("c.gov.si", 100, now=later)) == 3


def test_a_worker_joins_an_all_round_under_way_and_the_last_to_end_ends_it(pg: Engine) -> None:
    many_pages(pg, 4)
    alive(pg, "early", "late")
    t0 = T + timedelta(days=3)
    early = rows(pg, "all", worker="early", start=t0)
    assert len(early.claim("c.gov.si", 2, now=t0 + timedelta(minutes=1))) == 2
    late = rows(pg, "all", worker="late", start=t0 + timedelta(hours=1))
    assert late.round_start == t0  # early holds claims in it
    early.release()  # late is still at work: the round goes on
    with pg.begin() as conn:
        goodbye(conn, "early")
    assert len(late.claim("c.gov.si", 100, now=t0 + timedelta(hours=1))) == 4
    assert rows(pg, "all", worker="x", start=t0 + timedelta(hours=2)).round_start == t0
    late.release()
    # Over: no claim held. The next run starts a round of its own.
    nxt = t0 + timedelta(hours=3)
    assert rows(pg, "all", worker="y", start=nxt).round_start == nxt


@pytest.mark.parametrize(
    ("value", "spent"),
    [
        (None, 0),  # no row yet
        ("2026-11-11|42", 42),
        ("2026-11-10|42", 0),  # yesterday's
        ("2026-11-11|0", 0),
        ("2026-11-11|-1", None),
        ("2026-11-11|", None),
        ("garbage", None),
        ("2026-13-01|5", None),
    ],
)
def test_a_stored_budget_is_read_for_its_day(value: str | None, spent: int | None) -> None:
    assert read_spent(value, date(2026, 11, 11)) == spent
