"""The revisit rules' terms evaluated in Python (``govsi.revisit.terms.holds``) and
rendered as crawldb's SQL (``govsi.store.due.sql``) take the same rows, on SQLite and
PostgreSQL: one table of stored pages and pictures, every term of every rule asked both
ways."""

from __future__ import annotations

import itertools
from datetime import datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import Engine, bindparam, select, update

from govsi.items import FetchedPage
from govsi.revisit.due import STORED, DueRule
from govsi.revisit.terms import SHOWING, Term, holds
from govsi.store.due import sql
from govsi.store.schema import IMAGE, PAGE
from govsi.store.writer import CrawlWriter

DAY = 24 * 3600.0
HOUR = 3600.0
NOW = datetime(2026, 11, 29, 12, 0)
START = NOW - timedelta(hours=10)  # the round's start
COLUMNS = ("page_type_code", "accessed_time", "next_visit", "revisit_claim", "revisit_claimed_at")


def at(hours: float | None) -> datetime | None:
    return None if hours is None else NOW + timedelta(hours=hours)


# Every combination: a row's type, its last visit, its next, its claim.
TYPES = ["HTML", "FRONTIER", None]
ACCESSED = [None, -100, -30, -20, -1.5, -0.5]
NEXT = [None, -30, -2, 1]
CLAIMS = [(None, None), (None, -1), (None, -20), ("w1", -0.1), ("w2", None)]
PAGES = list(itertools.product(TYPES, ACCESSED, NEXT, CLAIMS))
# Pictures: their download, their claim, and which pages show them.
PICTURES = list(itertools.product([None, -30, -2, -0.5], [(None, None), (None, -1)], range(9)))


def shown_by(j: int) -> list[int]:
    """The pages that show picture ``j``: two, spread over the table."""
    return sorted({(j * 37) % len(PAGES), (j * 101 + 13) % len(PAGES)})


@pytest.fixture
def rows(engine: Engine) -> Engine:
    writer = CrawlWriter(engine)
    pictures: dict[int, list[str]] = {}
    for j in range(len(PICTURES)):
        for i in shown_by(j):
            pictures.setdefault(i, []).append(f"http://a.gov.si/img/{j}.png")
    for i in range(len(PAGES)):
        writer.add(FetchedPage(f"http://a.gov.si/{i}", 1, "HTML", NOW, 200, html_content="x",
                               images=pictures.get(i, [])))  # fmt: skip
    assert writer.flush()
    with engine.begin() as conn:
        page_rows = [
            {"u": f"http://a.gov.si/{i}", "page_type_code": ptype, "accessed_time": at(acc),
             "next_visit": at(nxt), "revisit_claim": claim, "revisit_claimed_at": at(when)}
            for i, (ptype, acc, nxt, (claim, when)) in enumerate(PAGES)
        ]  # fmt: skip
        conn.execute(
            update(PAGE).where(PAGE.c.url == bindparam("u")).values(
                **{c: bindparam(c) for c in COLUMNS}
            ),
            page_rows,
        )  # fmt: skip
        image_rows = [
            {"u": f"http://a.gov.si/img/{j}.png", "accessed_time": at(acc),
             "revisit_claim": claim, "revisit_claimed_at": at(when)}
            for j, (acc, (claim, when), _) in enumerate(PICTURES)
        ]  # fmt: skip
        conn.execute(
            update(IMAGE).where(IMAGE.c.url == bindparam("u")).values(
                accessed_time=bindparam("accessed_time"),
                revisit_claim=bindparam("revisit_claim"),
                revisit_claimed_at=bindparam("revisit_claimed_at"),
            ),
            image_rows,
        )  # fmt: skip
    return engine


def stored_pages(engine: Engine) -> dict[int, dict[str, Any]]:
    with engine.connect() as conn:
        result = conn.execute(select(PAGE.c.id, *(PAGE.c[c] for c in COLUMNS)))
        return {r.id: dict(r._mapping) for r in result}


def stored_pictures(engine: Engine, pages: dict[int, dict[str, Any]]) -> dict[int, dict[str, Any]]:
    """Each picture URL's first row, with the rows of the pages showing it."""
    with engine.connect() as conn:
        result = conn.execute(select(IMAGE).order_by(IMAGE.c.id)).all()
    showing: dict[str, list[dict[str, Any]]] = {}
    first: dict[str, dict[str, Any]] = {}
    for r in result:
        showing.setdefault(r.url, []).append(pages[r.page_id])
        first.setdefault(r.url, dict(r._mapping))
    return {row["id"]: {**row, SHOWING: showing[url]} for url, row in first.items()}


def taken(engine: Engine, term: Term, picture: bool = False) -> set[int]:
    table = IMAGE if picture else PAGE
    with engine.connect() as conn:
        return set(conn.execute(select(table.c.id).where(sql(term, table))).scalars())


RULES = [
    DueRule("due", NOW, START, DAY, DAY),
    DueRule("due", NOW, START, DAY, DAY, HOUR),
    DueRule("due", NOW, START, DAY, 2 * HOUR, HOUR),
    DueRule("all", NOW, START, DAY, DAY),
    DueRule("off", NOW, START, DAY, DAY),
]


@pytest.mark.parametrize("rule", RULES, ids=lambda r: f"{r.mode}-{r.hub_min_interval}")
def test_python_and_sql_take_the_same_rows(rows: Engine, rule: DueRule) -> None:
    pages = stored_pages(rows)
    terms: dict[str, Term] = {
        "stored": STORED, "due": rule.due(), "overdue": rule.overdue(), "done": rule.done(),
        "page": rule.page(), "overdue page": rule.page(overdue=True), "waiting": rule.waiting(),
        "scheduled by the cut": rule.scheduled_by(rule.overdue_cut),
    }  # fmt: skip
    for name, term in terms.items():
        expected = {i for i, row in pages.items() if holds(term, row) is True}
        assert taken(rows, term) == expected, name
    # Every term takes some rows and leaves others (off: none), so each case can fail.
    assert taken(rows, rule.page()) or rule.mode == "off"
    pictures = stored_pictures(rows, pages)
    for name, term in {"picture": rule.picture(), "done": rule.done()}.items():
        expected = {i for i, row in pictures.items() if holds(term, row) is True}
        assert taken(rows, term, picture=True) & pictures.keys() == expected, name
        if rule.mode == "due" and name == "picture":
            assert 0 < len(expected) < len(pictures)


def test_a_page_falls_due_at_its_due_time() -> None:
    """``due_at`` is the earliest time ``is_due`` holds, for every page of the table."""
    for _, acc, nxt, _ in PAGES:
        rule = DueRule("due", NOW, START, DAY, DAY, HOUR)
        when = rule.due_at(at(nxt), at(acc))
        if when == datetime.min:
            assert rule.is_due(at(nxt), at(acc))
            continue
        later = DueRule("due", when, START, DAY, DAY, HOUR)
        sooner = DueRule("due", when - timedelta(seconds=1), START, DAY, DAY, HOUR)
        assert later.is_due(at(nxt), at(acc)) and not sooner.is_due(at(nxt), at(acc))
