"""The changes visits found (govsi.store.changes): which visits are news (a table of cases);
through the writer on SQLite and PostgreSQL, the ``page_change`` rows a run of visits
leaves (new, changed with the text it replaced, gone, moved; none for a steady page, a
template-only change, a 304, a failed revisit, a replayed record, a retried batch);
retention of rows and texts; the backfill of a crawldb from before revision 0021."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, select, text
from sqlalchemy.exc import OperationalError

from govsi.items import FetchedImage, FetchedPage, PageText, PageType, Revisit
from govsi.revisit.change import Version
from govsi.store import database, writer
from govsi.store.changes import change_kind, months_before
from govsi.store.history import Retention
from govsi.store.schema import PAGE_CHANGE
from govsi.store.writer import CrawlWriter
from testkit.crawldb import T, crawldb_at, q

URL = "https://www.gov.si/novice/razpis"
DAY = timedelta(days=1)

# -- which visits are news (pure) -------------------------------------------------------------

HTML = Version("HTML", 200, "k1")
# (stored before the visit, the visit's version, the kind of row)
KINDS: list[tuple[Version, Version, str | None]] = [
    (Version(None), HTML, "new"),  # first visit
    (Version("FRONTIER"), HTML, "new"),
    (Version("FRONTIER"), Version("BINARY", 200, "b1"), "new"),  # a document
    (Version("ERROR"), HTML, "new"),  # the first answer after a failed first fetch
    (Version("FRONTIER"), Version("HTML", 404), None),  # an error page is no news
    (Version("FRONTIER"), Version("HTML", 301, target="https://a.gov.si/"), None),
    (Version("FRONTIER"), Version("DUPLICATE", 200, "k1"), None),  # a copy of another
    (Version("FRONTIER"), Version("OTHER", 200), None),
    (Version("FRONTIER"), Version("ERROR"), None),
    (HTML, HTML, None),  # steady
    (HTML, Version("HTML", 200, None), None),  # key unknown: never a made-up change
    (HTML, Version("HTML", 200, "k2"), "changed"),  # main text
    (Version("BINARY", 200, "b1"), Version("BINARY", 200, "b2"), "changed"),  # bytes
    (Version("BINARY", 200, None, 10), Version("BINARY", 200, None, 12), "changed"),  # size
    (HTML, Version("BINARY", 200, "b1"), "changed"),  # became a document
    (HTML, Version("HTML", 404), "gone"),
    (HTML, Version("HTML", 410), "gone"),
    (HTML, Version("HTML", 301, target="https://a.gov.si/"), "moved"),
    (HTML, Version("HTML", 403), "changed"),
    (Version("HTML", 404), HTML, "changed"),  # back
    (Version("HTML", 301, target="https://a.gov.si/"), HTML, "changed"),
    (Version("DUPLICATE", 200, "k1"), Version("HTML", 200, "k2"), "changed"),
    # Only ever errors and redirects: no news.
    (Version("HTML", 403), Version("HTML", 404), None),
    (Version("HTML", 404), Version("HTML", 301, target="https://a.gov.si/"), None),
    (Version("HTML", 301, target="https://a.gov.si/"),
     Version("HTML", 301, target="https://b.gov.si/"), None),
    (Version("HTML", 404, "x"), Version("HTML", 404, "y"), None),  # an error page's text
]  # fmt: skip


@pytest.mark.parametrize(("before", "after", "kind"), KINDS)
def test_change_kind(before: Version, after: Version, kind: str | None) -> None:
    assert change_kind(before, after) == kind


@pytest.mark.parametrize(
    ("when", "months", "cutoff"),
    [
        (datetime(2026, 11, 29, 12), 24, datetime(2024, 11, 29, 12)),
        (datetime(2026, 11, 29, 12), 0, datetime(2026, 11, 29, 12)),
        (datetime(2026, 11, 29), -3, datetime(2026, 11, 29)),  # below 0 counts as 0
        (datetime(2026, 3, 31), 1, datetime(2026, 2, 28)),  # the month's last day
        (datetime(2026, 1, 15), 13, datetime(2024, 12, 15)),
    ],
)
def test_months_before(when: datetime, months: int, cutoff: datetime) -> None:
    assert months_before(when, months) == cutoff


# -- through the writer -----------------------------------------------------------------------


def visit(
    day: float,
    words: str = "Razpis za leto 2027",
    status: int = 200,
    title: str | None = "Razpis",
    *,
    ptype: PageType = "HTML",
    template: str = "noga",
    **kw: Any,
) -> FetchedPage:
    """A visit ``day`` days after T finding an HTML page (``ptype``) with main text
    ``words`` (its key) in a template (``template``: not part of the key)."""
    when = T + day * DAY
    if status != 200:
        return FetchedPage(URL, 1, ptype, when, status, html_content="<p>napaka</p>", **kw)
    html = f"<main>{words}</main><footer>{template}</footer>"
    page_text = PageText("HTML", "ok", words, title=title)
    return FetchedPage(URL, 1, ptype, when, status, html_content=html,
                       content_hash=f"key:{words}", text=page_text, **kw)  # fmt: skip


def moved(day: float) -> FetchedPage:
    return visit(day, status=301, links=["https://www.gov.si/novo"])


def not_modified(day: float) -> FetchedPage:
    return FetchedPage(URL, 1, "HTML", T + day * DAY, not_modified=True)


def failed(day: float) -> FetchedPage:
    stored = Revisit(page_type="HTML", http_status_code=200, accessed_time=T)
    return FetchedPage(URL, 1, "ERROR", T + day * DAY, fetch_error="timeout", revisit=stored)


def changes(engine: Engine, *columns: str) -> list[tuple[Any, ...]]:
    """The rows of page_change, oldest first: (kind, visit_time, title, text_before)."""
    c = PAGE_CHANGE.c
    names = columns or ("kind", "visit_time", "title", "text_before")
    query = select(*(c[n] for n in names)).order_by(c.visit_time, c.id)
    with engine.connect() as conn:
        return [tuple(r) for r in conn.execute(query)]


def write(engine: Engine, *batches: list[FetchedPage], w: CrawlWriter | None = None) -> None:
    w = w or CrawlWriter(engine)
    for batch in batches:
        for item in batch:
            w.add(item)
        assert w.flush()


ONE, TWO = "Razpis za leto 2027", "Razpis za leto 2027 je zaprt"
NEW = ("new", T, "Razpis", None)
# (batches of visits, the rows they leave: kind, visit time, title, text before)
RUNS: dict[str, tuple[list[list[FetchedPage]], list[tuple[Any, ...]]]] = {
    "first visit": ([[visit(0)]], [NEW]),
    "a document": ([[visit(0, ptype="BINARY", data_type="PDF", size=9)]], [NEW]),
    "404 first": ([[visit(0, status=404)]], []),
    "a duplicate": ([[visit(0, ptype="DUPLICATE")]], []),
    "redirect first": ([[moved(0)]], []),
    "revisit, the same": ([[visit(0)], [visit(1)]], [NEW]),
    "the template only": ([[visit(0)], [visit(1, template="noga 2")]], [NEW]),
    "main text changed": ([[visit(0)], [visit(1, TWO, title="Zaprt")]],
                          [NEW, ("changed", T + DAY, "Zaprt", ONE)]),
    "changed, no title": ([[visit(0)], [visit(1, TWO, title=None)]],
                          [NEW, ("changed", T + DAY, "Razpis", ONE)]),
    "404": ([[visit(0)], [visit(1, status=404)]], [NEW, ("gone", T + DAY, "Razpis", ONE)]),
    "redirect": ([[visit(0)], [moved(1)]], [NEW, ("moved", T + DAY, "Razpis", ONE)]),
    "gone and back": ([[visit(0)], [visit(1, status=410)], [visit(2, TWO, title="Zaprt")]],
                      [NEW, ("gone", T + DAY, "Razpis", ONE),
                       ("changed", T + 2 * DAY, "Zaprt", None)]),
    "a 304": ([[visit(0)], [not_modified(1)]], [NEW]),
    "a failed revisit": ([[visit(0)], [failed(1)]], [NEW]),
    "after a failed first fetch": ([[visit(0, ptype="ERROR", status=None)], [visit(1)]],
                                   [("new", T + DAY, "Razpis", None)]),
    # A spill replayed: its record is older than the row, or the very version it holds.
    "a replayed older record": ([[visit(0)], [visit(2, TWO)], [visit(1, "Drugo")]],
                                [NEW, ("changed", T + 2 * DAY, "Razpis", ONE)]),
    "a batch replayed": ([[visit(0)], [visit(1, TWO)], [visit(0), visit(1, TWO)]],
                         [NEW, ("changed", T + DAY, "Razpis", ONE)]),
    # Within one batch: each visit replaces what the one before it gave.
    "two visits in a batch": ([[visit(0), visit(1, TWO), visit(2, "Tretje", title="3")]],
                              [NEW, ("changed", T + DAY, "Razpis", ONE),
                               ("changed", T + 2 * DAY, "3", TWO)]),
    "one visit twice in a batch": ([[visit(0), visit(0)]], [NEW]),
    "a steady visit in a batch": ([[visit(0)], [visit(1), visit(2, TWO)]],
                                  [NEW, ("changed", T + 2 * DAY, "Razpis", ONE)]),
}  # fmt: skip


@pytest.mark.parametrize("run", RUNS)
def test_visits_leave_their_changes(engine: Engine, run: str) -> None:
    batches, rows = RUNS[run]
    write(engine, *batches)
    assert changes(engine) == rows


def test_a_text_stored_empty_is_known_empty(engine: Engine) -> None:
    first = visit(0)
    assert first.text is not None
    first.text = PageText("HTML", "empty", "", title="Razpis")
    write(engine, [first], [visit(1, TWO)])
    assert changes(engine) == [NEW, ("changed", T + DAY, "Razpis", "")]


def test_a_retried_batch_adds_its_rows_once(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(engine, [visit(0)])
    calls = []
    real = writer.record_images

    def away_once(*args: Any) -> None:
        calls.append(1)
        if len(calls) == 1:  # after the page's writes: the transaction rolls back
            raise OperationalError("INSERT", {}, Exception("server closed the connection"))
        real(*args)

    monkeypatch.setattr(writer, "record_images", away_once)
    w = CrawlWriter(engine, retry_backoff=0)
    image = FetchedImage("https://www.gov.si/logo.png", T + DAY, 200, "image/png", b"png")
    write(engine, [visit(1, TWO), image], w=w)
    assert len(calls) == 2
    assert changes(engine) == [NEW, ("changed", T + DAY, "Razpis", ONE)]


def test_a_title_is_cut_to_its_column(engine: Engine) -> None:
    write(engine, [visit(0, title="Naslov " * 500)])
    assert [len(title) for _, _, title, _ in changes(engine)] == [1000]


def test_retention_of_rows_and_texts(engine: Engine) -> None:
    w = CrawlWriter(engine, history=Retention(versions=2, months=1))
    texts = [f"Različica {i}" for i in range(5)]
    # Daily changes: every row stays (within a month), the last 2 keep their text.
    write(engine, *[[visit(day, words)] for day, words in enumerate(texts)], w=w)
    assert [(k, t) for k, _, _, t in changes(engine)] == [
        ("new", None), ("changed", None), ("changed", None),
        ("changed", texts[2]), ("changed", texts[3]),
    ]  # fmt: skip
    # A change 33 days on: the rows more than a month older go; the last 2 keep texts.
    write(engine, [visit(33, "Nova")], w=w)
    assert [(k, v, t) for k, v, _, t in changes(engine)] == [
        ("changed", T + 3 * DAY, None), ("changed", T + 4 * DAY, texts[3]),
        ("changed", T + 33 * DAY, texts[4]),
    ]  # fmt: skip
    # A lower setting reaches the page's older texts at its next change.
    write(engine, [visit(34, "Novejša")], w=CrawlWriter(engine, history=Retention(0, 1)))
    assert [t for *_, t in changes(engine)] == [None, None, None]


def test_retention_bounds_each_page_alone(engine: Engine) -> None:
    w = CrawlWriter(engine, history=Retention(versions=1, months=24))
    other = "https://www.gov.si/drugo"
    write(engine, [visit(0), FetchedPage(other, 1, "HTML", T, 200, html_content="<p>a</p>",
                                         content_hash="a", text=PageText("HTML", "ok", "a"))],
          [visit(1, TWO)], [visit(2, "Tretje")], w=w)  # fmt: skip
    rows = q(engine, "SELECT p.url, c.kind, c.text_before FROM page_change c "
                     "JOIN page p ON p.id = c.page_id ORDER BY c.visit_time, c.id")  # fmt: skip
    assert rows == [(URL, "new", None), (other, "new", None), (URL, "changed", None),
                    (URL, "changed", TWO)]  # fmt: skip


# -- backfill (migration 0021) ------------------------------------------------------------------


@pytest.fixture(params=["sqlite", "postgresql"])
def old(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    """An empty crawldb at revision 0020."""
    yield from crawldb_at(request, tmp_path, "0020", "changes0020")


def at(day: int | None) -> datetime | None:
    return None if day is None else T + day * DAY


# Pages of an old crawldb: id -> (type, status, changed_time's day, accessed_time's day,
# title); and their versions, oldest first: (page, type, status, changed day, accessed day).
PAGES: dict[int, tuple[str, int | None, int | None, int | None, str | None]] = {
    1: ("HTML", 200, 0, 5, "Ena"),  # never changed
    2: ("HTML", 404, 6, 7, None),  # changed, then gone
    3: ("HTML", 200, 4, 4, "Tri"),  # a failed first fetch, then the page
    4: ("HTML", 404, 1, 1, None),  # an error page only
    5: ("BINARY", 200, None, 3, "Pet.pdf"),  # fetched before changed_time was kept
    6: ("HTML", 301, 5, 5, None),  # moved
    7: ("HTML", 401, 2, 2, None),  # errors only
    8: ("DUPLICATE", 200, 1, 1, None),  # a copy
    9: ("FRONTIER", None, None, None, None),
}
VERSIONS = [(2, "HTML", 200, 0, 1), (2, "HTML", 200, 3, 4), (3, "ERROR", None, None, 2),
            (6, "HTML", 200, 1, 2), (7, "HTML", 403, 1, 1)]  # fmt: skip


def test_backfill_from_what_crawldb_kept(old: Engine) -> None:
    with old.begin() as conn:
        for pid, (ptype, status, changed, accessed, title) in PAGES.items():
            conn.execute(text(
                "INSERT INTO page (id, page_type_code, url, http_status_code, accessed_time, "
                "changed_time, depth, content_hash) VALUES (:id, :type, :url, :status, :a, :c, "
                "1, 'a')"
            ), {"id": pid, "type": ptype, "url": f"{URL}/{pid}", "status": status,
                "a": at(accessed), "c": at(changed)})  # fmt: skip
            if title is not None:
                conn.execute(text(
                    "INSERT INTO page_text (page_id, kind, status, title, text, truncated, "
                    "extracted_at) VALUES (:p, 'HTML', 'ok', :t, 'besedilo', false, :at)"
                ), {"p": pid, "t": title, "at": T})  # fmt: skip
        for pid, ptype, status, changed, accessed in VERSIONS:
            conn.execute(text(
                "INSERT INTO page_version (page_id, page_type_code, http_status_code, "
                "changed_time, accessed_time) VALUES (:p, :type, :s, :c, :a)"
            ), {"p": pid, "type": ptype, "s": status, "c": at(changed),
                "a": at(accessed)})  # fmt: skip
    database.migrate(old)
    rows = changes(old, "page_id", "kind", "visit_time", "title", "text_before")
    assert sorted(rows, key=lambda r: (r[0], r[2])) == [
        (1, "new", at(0), "Ena", None),
        (2, "new", at(0), None, None),
        (2, "changed", at(3), None, None),  # the second version replaced the first
        (2, "gone", at(6), None, None),
        (3, "new", at(4), "Tri", None),
        (5, "new", at(3), "Pet.pdf", None),
        (6, "new", at(1), None, None),
        (6, "moved", at(5), None, None),
    ]
    # The writer goes on from there: page 1's next change replaces its stored text.
    w = CrawlWriter(old)
    after = PageText("HTML", "ok", "b", title="Ena 2")
    w.add(FetchedPage(f"{URL}/1", 1, "HTML", at(8), 200, html_content="<p>b</p>",
                      content_hash="b", text=after))  # fmt: skip
    assert w.flush()
    rows = q(old, "SELECT kind, title, text_before FROM page_change WHERE page_id = 1 "
                  "ORDER BY visit_time")  # fmt: skip
    assert rows == [("new", "Ena", None), ("changed", "Ena 2", "besedilo")]
