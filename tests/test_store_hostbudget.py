"""A host's revisit budget row and its price (``govsi.store.hostbudget``), on SQLite and
PostgreSQL: the stored value read back (or refused), the price fitted to the budget at a
new day from what the host's pages ask for, and the writer scheduling at that price."""

from __future__ import annotations

from datetime import date, datetime, timedelta

import pytest
from sqlalchemy import Engine, insert

from govsi.items import FetchedImage, FetchedPage
from govsi.revisit.age import OVERASK
from govsi.revisit.schedule import default_price, next_visit
from govsi.store.hostbudget import (
    BudgetRow,
    asked_per_day,
    budget_key,
    read_budget,
    read_prices,
)
from govsi.store.revisits import RevisitRows
from govsi.store.schema import CRAWL_META, PAGE
from govsi.store.writer import CrawlWriter
from testkit.crawldb import q

DAY = 24 * 3600.0
T = datetime(2026, 11, 1, 12, 0)
D = date(2026, 11, 11)
FLOOR = default_price(DAY)


@pytest.mark.parametrize(
    ("value", "row"),
    [
        (None, BudgetRow()),  # a host never claimed from
        ("2026-11-11|42", BudgetRow(D, 42)),  # as written before prices: the default
        ("2026-11-11|42|5|123.5", BudgetRow(D, 42, 5, 123.5)),
        ("2026-11-11|42|5|", BudgetRow(D, 42, 5, None)),
        ("2026-11-11|0|0|1e9", BudgetRow(D, 0, 0, 1e9)),
        ("2026-11-11|42|43|1", None),  # more pictures than claims
        ("2026-11-11|-1|0|1", None),
        ("2026-11-11|42|5|nan", None),
        ("2026-11-11|42|5|inf", None),
        ("2026-11-11|42|5|0", None),
        ("2026-11-11|42|5|-3", None),
        ("2026-11-11|42|5", None),  # neither format
        ("2026-11-11|", None),
        ("garbage", None),
        ("2026-13-01|5|0|1", None),
    ],
)
def test_a_stored_row_is_read_back_or_refused(value: str | None, row: BudgetRow | None) -> None:
    assert read_budget(value) == row


@pytest.mark.parametrize(
    "row", [BudgetRow(D, 7, 3, 1234.5678901), BudgetRow(D, 0), BudgetRow(D, 5, 0, FLOOR)]
)
def test_a_row_survives_its_round_trip(row: BudgetRow) -> None:
    assert read_budget(row.value()) == row


def stored(engine: Engine, host: str, n: int, when: datetime = T) -> list[str]:
    """``n`` pages of ``host`` fetched once at ``when`` (each asks one visit a day)."""
    w = CrawlWriter(engine)
    urls = [f"http://{host}/{i}" for i in range(n)]
    for url in urls:
        w.add(FetchedPage(url, 1, "HTML", when, 200, html_content=f"<p>{url}</p>"))
    assert w.flush()
    return urls


def claims(engine: Engine, start: datetime, mode: str = "due") -> RevisitRows:
    r = RevisitRows(engine, mode=mode, min_interval=DAY, overdue_after=DAY)  # type: ignore[arg-type]
    r.open("w1", now=start)
    return r


def price_of(engine: Engine, host: str) -> float | None:
    with engine.connect() as conn:
        return read_prices(conn, [host, "other.gov.si"]).get(host)


def test_the_visits_a_day_a_hosts_pages_ask_for(engine: Engine) -> None:
    stored(engine, "c.gov.si", 30)  # first visits: a day each
    stored(engine, "d.gov.si", 7)
    with engine.connect() as conn:
        assert asked_per_day(conn, "c.gov.si", 3600) == pytest.approx(30)
        assert asked_per_day(conn, "nobody.gov.si", 3600) == 0
    # A sitemap's lastmod set one to a minute after its visit: counted at the shortest.
    with engine.begin() as conn:
        conn.execute(
            PAGE.update()
            .where(PAGE.c.url == "http://c.gov.si/0")
            .values(next_visit=T + timedelta(minutes=1))
        )
    with engine.connect() as conn:
        assert asked_per_day(conn, "c.gov.si", 3600) == pytest.approx(29 + 24)


def test_a_host_asking_more_than_its_budget_is_priced_up_the_next_day(engine: Engine) -> None:
    stored(engine, "c.gov.si", 120)
    day1 = T + timedelta(days=2)
    r = claims(engine, day1)
    assert len(r.claim("c.gov.si", 500, per_day=50, now=day1)) == 50
    assert price_of(engine, "c.gov.si") is None  # nothing to go by yet: the default
    # The next day: its pages asked 120 visits a day, 50 were spent: a tenth up.
    day2 = day1 + timedelta(days=1)
    assert len(claims(engine, day2).claim("c.gov.si", 500, per_day=50, now=day2)) == 50
    assert price_of(engine, "c.gov.si") == pytest.approx(1.1 * FLOOR)
    # Once a day only, whoever claims again that day.
    claims(engine, day2).claim("c.gov.si", 500, per_day=50, now=day2 + timedelta(hours=5))
    assert price_of(engine, "c.gov.si") == pytest.approx(1.1 * FLOOR)


def test_a_host_within_its_budget_stays_at_the_default_price(engine: Engine) -> None:
    stored(engine, "c.gov.si", 5)
    with engine.begin() as conn:  # fitted up on some earlier day
        row = BudgetRow(date(2026, 11, 2), 5, 0, 1.05 * FLOOR)
        conn.execute(insert(CRAWL_META).values(key=budget_key("c.gov.si"), value=row.value()))
    day = T + timedelta(days=3)
    assert len(claims(engine, day).claim("c.gov.si", 500, per_day=50, now=day)) == 5
    # Asked 5 of 50: down, but never below what the schedule gives unbudgeted.
    assert price_of(engine, "c.gov.si") == pytest.approx(FLOOR)


def test_pictures_claimed_count_with_what_the_pages_ask(engine: Engine) -> None:
    stored(engine, "c.gov.si", 40)
    with engine.begin() as conn:  # yesterday: 15 pictures and 35 pages of a budget of 50
        row = BudgetRow((T + timedelta(days=2)).date(), 50, 15, FLOOR)
        conn.execute(insert(CRAWL_META).values(key=budget_key("c.gov.si"), value=row.value()))
    day = T + timedelta(days=3)
    claims(engine, day).claim("c.gov.si", 500, per_day=50, now=day)
    ratio = (40 + 15) / (OVERASK * 50)  # over, with the pictures: raised by as much
    assert price_of(engine, "c.gov.si") == pytest.approx(ratio**1.5 * FLOOR)


def test_an_all_round_keeps_the_price(engine: Engine) -> None:
    stored(engine, "c.gov.si", 120)
    with engine.begin() as conn:
        row = BudgetRow((T + timedelta(days=1)).date(), 50, 0, 2 * FLOOR)
        conn.execute(insert(CRAWL_META).values(key=budget_key("c.gov.si"), value=row.value()))
    day = T + timedelta(days=3)
    claims(engine, day, "all").claim("c.gov.si", 500, per_day=50, now=day)
    assert price_of(engine, "c.gov.si") == pytest.approx(2 * FLOOR)


def test_the_writer_schedules_at_the_hosts_price(engine: Engine) -> None:
    for host in ("a.gov.si", "b.gov.si"):
        stored(engine, host, 1)
    price = 40 * FLOOR
    with engine.begin() as conn:
        row = BudgetRow(T.date(), 0, 0, price)
        conn.execute(insert(CRAWL_META).values(key=budget_key("a.gov.si"), value=row.value()))
    again = T + timedelta(days=2)
    w = CrawlWriter(engine)
    for host in ("a.gov.si", "b.gov.si"):  # the same page, unchanged, on both
        url = f"http://{host}/0"
        w.add(FetchedPage(url, 1, "HTML", again, 200, html_content=f"<p>{url}</p>"))
    assert w.flush()
    due = dict(q(engine, "SELECT url, next_visit FROM page"))

    def expected(price: float | None) -> datetime:  # two days unchanged, at that price
        return next_visit(
            None, False, again, T, min_interval=DAY, max_interval=30 * DAY, price=price
        )[0]

    assert _naive(due["http://a.gov.si/0"]) == expected(price)
    assert _naive(due["http://b.gov.si/0"]) == expected(None)
    assert expected(price) > expected(None)


def _naive(value: object) -> datetime:
    return value if isinstance(value, datetime) else datetime.fromisoformat(str(value))


def test_pictures_claimed_are_counted_as_such(engine: Engine) -> None:
    w = CrawlWriter(engine)
    w.add(FetchedPage("http://c.gov.si/", 0, "HTML", T, 200, html_content="<p>x</p>",
                      images=["http://c.gov.si/a.png", "http://c.gov.si/b.png"]))  # fmt: skip
    for name in ("a", "b"):
        w.add(FetchedImage(f"http://c.gov.si/{name}.png", T, 200, "image/png", b"png"))
    assert w.flush()
    day = T + timedelta(days=3)
    r = claims(engine, day)
    assert len(r.claim("c.gov.si", 500, per_day=50, now=day)) == 1
    assert len(r.images("c.gov.si", "", 500, per_day=50, now=day)) == 2
    value = q(engine, f"SELECT value FROM crawl_meta WHERE key = '{budget_key('c.gov.si')}'")
    row = read_budget(value[0][0])
    assert row is not None and (row.spent, row.pictures) == (3, 2)


def test_day_after_day_a_host_over_its_budget_is_priced_up_and_kept_within_it(
    engine: Engine,
) -> None:
    # 60 pages changing at every visit, 20 revisits a day: claim, revisit, write; the next
    # day's first claim refits the price, and the writer schedules at it. (Pages that
    # never change would soon ask for fewer than the budget: back to the default price.)
    urls = stored(engine, "c.gov.si", 60)
    prices = []
    for day in range(1, 9):
        now = T + timedelta(days=day, hours=1)
        got = claims(engine, now).claim("c.gov.si", 500, per_day=20, now=now)
        assert len(got) <= 20
        w = CrawlWriter(engine)
        for row in got:
            html = f"<p>{row.url}: news of day {day}</p>"
            w.add(FetchedPage(row.url, 1, "HTML", now, 200, html_content=html,
                              content_hash=f"{row.url} {day}"))  # fmt: skip
        assert w.flush()
        prices.append(price_of(engine, "c.gov.si") or FLOOR)
    assert len(urls) == 60
    assert prices == sorted(prices) and prices[-1] > 1.5 * FLOOR  # up, day by day
    with engine.connect() as conn:
        assert asked_per_day(conn, "c.gov.si", 3600) < 60
