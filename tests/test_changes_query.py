"""Changes read back (``govsi.changes.query``) from a hand-made crawldb, SQLite and
PostgreSQL: each filter alone and together, newest first, paging by the id cursor, each
change's diff sides (the next change's ``text_before``, the page's text for its latest
change, nothing after a gone page, nothing known when a side was let go), the excerpts,
and search words matched the Slovenian way (inflected forms, no diacritics, every word
required, a gone page by its last text), the scan's bound; ``ChangeFilter`` to and from
parameters, ``parse_since`` (tables)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from sqlalchemy import Engine, insert

from govsi.changes.config import ChangesConfig
from govsi.changes.query import (
    ChangeFilter,
    change_detail,
    find_changes,
    list_changes,
    parse_since,
)
from govsi.store import schema

NOW = datetime(2026, 11, 29, 12, 0)
A, B = "a.gov.si", "b.gov.si"

# page id: (host, path, page type, document type, current text or None)
PAGES: dict[int, tuple[str, str, str, str | None, str | None]] = {
    1: (A, "/uredba", "HTML", None, "Vlada je sprejela novo uredbo o javnih naročilih."),
    2: (A, "/razpis.pdf", "BINARY", "PDF", "Javni razpis za sofinanciranje občin 2027."),
    3: (A, "/staro", "HTML", None, None),
    4: (B, "/", "HTML", None, "Novice ministrstva za okolje."),
    5: (B, "/premik", "HTML", None, None),
    6: (B, "/pozabljeno", "HTML", None, "Tretja različica."),
}
# change id: (page id, hours before NOW, kind, title, text_before)
CHANGES: dict[int, tuple[int, float, str, str | None, str | None]] = {
    1: (1, 50, "new", "Uredba", None),
    2: (2, 40, "new", "Razpis", None),
    3: (1, 30, "changed", "Uredba", "Vlada je sprejela uredbo o naročilih."),
    4: (3, 20, "gone", "Staro obvestilo", "Obvestilo o zaprtju občinske knjižnice."),
    5: (4, 10, "new", "Novice", None),
    6: (5, 5, "moved", "Premik", "Stran o davkih."),
    7: (6, 4, "new", "Pozabljeno", None),
    8: (6, 3, "changed", "Pozabljeno", None),  # the first version let go
    9: (6, 2, "changed", "Pozabljeno", "Druga različica."),
    10: (4, 1, "changed", "Novice", "Novice ministrstva."),
}


def fill(engine: Engine) -> None:
    with engine.begin() as conn:
        conn.execute(insert(schema.SITE), [{"id": 1, "domain": A}, {"id": 2, "domain": B}])
        conn.execute(insert(schema.PAGE), [
            {"id": pid, "site_id": 1 if host == A else 2, "url": f"https://{host}{path}",
             "page_type_code": kind, "http_status_code": 200}
            for pid, (host, path, kind, _doc, _text) in PAGES.items()
        ])  # fmt: skip
        conn.execute(insert(schema.PAGE_DATA), [
            {"page_id": pid, "data_type_code": doc}
            for pid, (_h, _p, _k, doc, _t) in PAGES.items() if doc
        ])  # fmt: skip
        conn.execute(insert(schema.PAGE_TEXT), [
            {"page_id": pid, "kind": doc or "HTML", "status": "ok", "text": text,
             "extracted_at": NOW}
            for pid, (_h, _p, _k, doc, text) in PAGES.items() if text is not None
        ])  # fmt: skip
        conn.execute(insert(schema.PAGE_CHANGE), [
            {"id": cid, "page_id": pid, "visit_time": NOW - timedelta(hours=h), "kind": kind,
             "title": title, "text_before": before}
            for cid, (pid, h, kind, title, before) in CHANGES.items()
        ])  # fmt: skip


@pytest.fixture
def db(engine: Engine) -> Engine:
    fill(engine)
    return engine


def ids(engine: Engine, flt: ChangeFilter | None = None, **kw: Any) -> list[int]:
    return [e.id for e in list_changes(engine, flt or ChangeFilter(), **kw)]


ALL = [10, 9, 8, 7, 6, 5, 4, 3, 2, 1]


def test_filters_each_alone_and_together_newest_first(db: Engine) -> None:
    assert ids(db) == ALL
    cases: list[tuple[ChangeFilter, list[int]]] = [
        (ChangeFilter(since=NOW - timedelta(hours=20)), [10, 9, 8, 7, 6, 5, 4]),
        (ChangeFilter(until=NOW - timedelta(hours=20)), [3, 2, 1]),
        (ChangeFilter(NOW - timedelta(hours=30), NOW - timedelta(hours=5)), [5, 4, 3]),
        (ChangeFilter(hosts=(B,)), [10, 9, 8, 7, 6, 5]),
        (ChangeFilter(hosts=(A, B)), ALL),
        (ChangeFilter(hosts=("c.gov.si",)), []),
        (ChangeFilter(kinds=("new",)), [7, 5, 2, 1]),
        (ChangeFilter(kinds=("gone", "moved")), [6, 4]),
        (ChangeFilter(types=("pdf",)), [2]),
        (ChangeFilter(types=("html",)), [10, 9, 8, 7, 6, 5, 4, 3, 1]),
        (ChangeFilter(types=("docx",)), []),
        (ChangeFilter(hosts=(A,), kinds=("new",), types=("html",)), [1]),
    ]
    for flt, expected in cases:
        assert ids(db, flt) == expected, flt


def test_paging_by_the_id_cursor_meets_every_change_once(db: Engine) -> None:
    seen: list[int] = []
    before = None
    while True:
        page = find_changes(db, ChangeFilter(), limit=3, before=before)
        seen += [e.id for e in page.entries]
        if page.next_before is None:
            break
        assert page.next_before == page.entries[-1].id
        before = page.next_before
    assert seen == ALL
    assert ids(db, limit=2, before=5) == [4, 3]


def test_entries_carry_their_page_and_excerpts(db: Engine) -> None:
    by_id = {e.id: e for e in list_changes(db, ChangeFilter())}
    e = by_id[3]
    assert (e.url, e.host, e.kind, e.title, e.doc_type) == (
        f"https://{A}/uredba",
        A,
        "changed",
        "Uredba",
        "html",
    )
    assert e.time == NOW - timedelta(hours=30)
    assert (e.added, e.removed) == ("novo … javnih", "")
    assert by_id[2].doc_type == "pdf"
    assert by_id[2].added.startswith("Javni razpis") and by_id[2].removed == ""
    assert by_id[4].removed.startswith("Obvestilo o zaprtju") and by_id[4].added == ""
    assert (by_id[8].added, by_id[8].removed) == ("", "")  # its left side is let go


def test_diff_sides(db: Engine) -> None:
    """(before known, after known, the diff's text removed, added) per change."""

    def sides(cid: int) -> tuple[bool, bool, str | None, str | None]:
        d = change_detail(db, cid)
        assert d is not None and d.entry.id == cid
        if d.diff is None:
            return d.before_known, d.after_known, None, None
        ops = d.diff.ops
        return (d.before_known, d.after_known,
                "".join(t for op, t in ops if op != "insert"),
                "".join(t for op, t in ops if op != "delete"))  # fmt: skip

    assert sides(1) == (True, True, "", CHANGES[3][4])  # new: the next change's before
    assert sides(3) == (True, True, CHANGES[3][4], PAGES[1][4])  # latest: the page's text
    assert sides(4) == (True, True, CHANGES[4][4], "")  # gone: nothing after
    assert sides(6) == (True, True, CHANGES[6][4], "")  # moved: nothing after
    assert sides(7) == (True, False, None, None)  # the next change's before is let go
    assert sides(8) == (False, True, None, None)
    assert sides(9) == (True, True, "Druga različica.", "Tretja različica.")
    assert change_detail(db, 999) is None


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("uredba", [3, 1]),  # the title's word, and the text's "uredbo"
        ("uredbe", [3, 1]),  # another inflection
        ("narocilih", [3, 1]),  # no diacritics
        ("NAROČILA", [3, 1]),
        ("javnih naročil", [3]),  # every word: "javnih" only in the text after change 3
        ("obcinska knjiznica", [4]),  # a gone page by its last text
        ("obcin razpis", [2]),
        ("davki", [6]),  # a moved page by its last text
        ("premik", [6]),  # its URL
        ("ministrstva okolje", [10]),  # change 5 made the page without "okolje"
        ("ministrstvo", [10, 5]),
        ("tretja", [9]),
        ("ribolov", []),
        ("in je", ALL),  # stop words only: no search words
    ],
)
def test_search_words_the_slovenian_way(db: Engine, query: str, expected: list[int]) -> None:
    assert ids(db, ChangeFilter(query=query)) == expected


def test_search_words_stop_at_the_scan_bound_and_resume(db: Engine) -> None:
    small = ChangesConfig(scan_max=3)
    page = find_changes(db, ChangeFilter(query="uredba"), config=small)
    assert page.entries == [] and page.stopped and page.scanned == 3
    assert page.next_before == 8
    page = find_changes(db, ChangeFilter(query="uredba"), config=small, before=8)
    assert page.entries == [] and page.stopped and page.next_before == 5
    page = find_changes(db, ChangeFilter(query="uredba"), config=small, before=2)
    assert [e.id for e in page.entries] == [1] and not page.stopped
    assert page.next_before is None
    page = find_changes(db, ChangeFilter(query="uredba"), limit=1)
    assert [e.id for e in page.entries] == [3] and page.next_before == 3


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("7d", NOW - timedelta(days=7)),
        ("12h", NOW - timedelta(hours=12)),
        ("30m", NOW - timedelta(minutes=30)),
        ("2w", NOW - timedelta(weeks=2)),
        (" 7D ", NOW - timedelta(days=7)),
        ("0d", NOW),
        ("2026-11-20", datetime(2026, 11, 20)),
        ("2026-11-20T08:30", datetime(2026, 11, 20, 8, 30)),
        ("2026-11-20T08:30:00Z", datetime(2026, 11, 20, 8, 30)),
        ("2026-11-20T09:30:00+01:00", datetime(2026, 11, 20, 8, 30)),
    ],
)
def test_parse_since(text: str, expected: datetime) -> None:
    assert parse_since(text, NOW) == expected


@pytest.mark.parametrize(
    "text", ["", "7", "d", "-7d", "7 days", "7y", "yesterday", "2026-13-01", "999999w", "\x1b[2J"]
)
def test_parse_since_refuses(text: str) -> None:
    with pytest.raises(ValueError):
        parse_since(text, NOW)


def test_filter_from_and_to_params() -> None:
    params = {"q": " uredba  vlade ", "since": "7d", "until": "2026-11-29T11:00",
              "host": "A.gov.si, b.gov.si,,", "kind": "new,changed", "type": "pdf,html",
              "other": "ignored"}  # fmt: skip
    flt = ChangeFilter.from_params(params, NOW)
    assert flt == ChangeFilter(
        NOW - timedelta(days=7), datetime(2026, 11, 29, 11), (A, B), ("new", "changed"),
        ("pdf", "html"), "uredba vlade",
    )  # fmt: skip
    assert ChangeFilter.from_params(flt.to_params(), NOW) == flt
    assert ChangeFilter().to_params() == {}
    assert ChangeFilter.from_params({}, NOW) == ChangeFilter()
    when = datetime(2026, 11, 1, 0, 0, 0, 5, tzinfo=UTC).replace(tzinfo=None)
    assert ChangeFilter.from_params(ChangeFilter(since=when).to_params(), NOW).since == when


@pytest.mark.parametrize(
    "params",
    [{"kind": "removed"}, {"type": "exe"}, {"since": "soon"}, {"until": "x"},
     {"since": "1d", "until": "2d"}, {"q": "x" * 501},
     {"host": ",".join(f"h{i}.gov.si" for i in range(101))}],
)  # fmt: skip
def test_filter_from_bad_params(params: dict[str, str]) -> None:
    with pytest.raises(ValueError):
        ChangeFilter.from_params(params, NOW)


def test_an_offset_time_is_utc() -> None:
    cet = timezone(timedelta(hours=1))
    assert parse_since(datetime(2026, 1, 1, 1, tzinfo=cet).isoformat(), NOW) == datetime(2026, 1, 1)


def test_small_chunks_read_the_same(db: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    whole = list_changes(db, ChangeFilter())
    searched = ids(db, ChangeFilter(query="uredba"))
    monkeypatch.setattr("govsi.changes.query.SCAN_CHUNK", 3)
    assert list_changes(db, ChangeFilter()) == whole
    assert ids(db, ChangeFilter(query="uredba")) == searched == [3, 1]


def test_a_spent_excerpt_budget_still_lists_every_change(db: Engine) -> None:
    """Past CHANGES_EXCERPT_BUDGET the diffs stop at once: their common start and end are
    still trimmed, so a small change keeps its exact excerpt."""
    spent = {
        e.id: e for e in list_changes(db, ChangeFilter(), config=ChangesConfig(excerpt_budget=0))
    }
    assert sorted(spent) == sorted(ALL)
    assert (spent[9].added, spent[9].removed) == ("Tretja", "Druga")
    assert spent[2].added.startswith("Javni razpis")
