"""Bounded history (govsi.store.history): which versions retention keeps (a table of cases);
through the writer on SQLite and PostgreSQL, a page revisited 40 times flipping between two
contents holds two copies of its HTML and no more versions than the policy allows; versions
in one batch; migration 0017 moving stored versions' HTML into shared rows, and back."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, text

from govsi.dedup.signature import exact_key
from govsi.items import FetchedPage
from govsi.store import database
from govsi.store.history import Kept, Retention, html_hash, to_drop
from govsi.store.writer import CrawlWriter
from testkit.crawldb import T, crawldb_at, q, upgrade_to
from tests.support.govpages import NEWS_1, NEWS_2, semantic

URL = "https://www.gov.si/novica"
ONE, TWO = semantic(NEWS_1), semantic(NEWS_2)
DAY = timedelta(days=1)


def at(*days: int) -> list[Kept]:
    """Versions 1, 2, ... last seen on these days of 2026 (day 1 = 1 January)."""
    return [Kept(i, datetime(2026, 1, 1) + (d - 1) * DAY) for i, d in enumerate(days, 1)]


NOW = datetime(2026, 12, 31)
# (versions, now, (HISTORY_KEEP_VERSIONS, HISTORY_KEEP_MONTHS), ids dropped)
CASES: list[tuple[list[Kept], datetime, tuple[int, int], list[int]]] = [
    ([], NOW, (10, 24), []),
    (at(1, 2, 3), NOW, (10, 24), []),  # fewer than the last N
    (at(1, 2, 3), NOW, (2, 0), [1]),  # the last 2 only
    (at(*range(1, 7)), NOW, (4, 0), [1, 2]),
    (at(*range(1, 7)), NOW, (10, 0), []),  # more than half of N: all kept
    (at(1, 2, 3), NOW, (0, 0), [1, 2, 3]),  # no history
    (at(1, 2, 3), NOW, (-1, -5), [1, 2, 3]),  # below 0 counts as 0
    (at(1, 2, 3), NOW, (1, 12), [1, 2]),  # all in January: its last is the last
    (at(1, 40, 41, 70), NOW, (1, 12), [2]),  # January's 1, February's 41, the last (70)
    (at(1, 40, 41, 70), NOW, (1, 11), [1, 2]),  # January is 12 months back: not kept
    (at(1, 40, 41, 70), datetime(2026, 3, 1), (1, 1), [1, 2, 3]),  # only March counts
    (at(1, 2, 33), NOW, (1, 12), [1]),  # January's last (2) and February's (the last)
    ([Kept(1, None), Kept(2, None)], NOW, (1, 12), [1]),  # never seen: the last N rule only
    ([Kept(9, NOW), Kept(3, NOW - DAY)], NOW, (1, 0), [3]),  # by id, not by listing order
    # A version a day over 40 days from 22 November: the last 10, and November's last.
    ([Kept(i + 1, T + i * DAY) for i in range(39)], T + 39 * DAY, (10, 24),
     [i + 1 for i in range(29) if i != 8]),
]  # fmt: skip


@pytest.mark.parametrize(("versions", "now", "policy", "dropped"), CASES)
def test_to_drop(
    versions: list[Kept], now: datetime, policy: tuple[int, int], dropped: list[int]
) -> None:
    assert to_drop(versions, now, Retention(*policy)) == dropped


def test_html_hash_is_sha256_of_utf8() -> None:
    assert html_hash("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    assert html_hash("ž") != html_hash("z") and len(html_hash("ž")) == 64


def fetched(when: datetime, html: str, **kw: Any) -> FetchedPage:
    return FetchedPage(URL, 1, "HTML", when, 200, html_content=html,
                       content_hash=exact_key(html), **kw)  # fmt: skip


def history(engine: Engine) -> list[tuple[Any, ...]]:
    """(accessed_time, content_hash, its HTML) of each version, oldest first."""
    return q(engine, (
        "SELECT v.accessed_time, v.content_hash, c.html_content FROM page_version v "
        "LEFT JOIN page_version_content c ON c.id = v.content_id ORDER BY v.id"
    ))  # fmt: skip


def sizes(engine: Engine) -> tuple[int, int]:
    """(rows, bytes) of page_version_content."""
    ((rows, size),) = q(engine, "SELECT count(*), coalesce(sum(size), 0) FROM page_version_content")
    return int(rows), int(size)


def revisit_daily(engine: Engine, visits: int, writer: CrawlWriter) -> None:
    """``visits`` daily visits from T, flipping between two contents, a batch each."""
    for day in range(visits):
        writer.add(fetched(T + day * DAY, TWO if day % 2 else ONE))
        assert writer.flush()


def test_a_page_flipping_between_two_contents_keeps_two_copies(engine: Engine) -> None:
    # Default policy: the last 10 versions, and the last seen in each month before them.
    revisit_daily(engine, 40, CrawlWriter(engine))
    kept = history(engine)
    days = [(str(when)[:10]) for when, _, _ in kept]
    # Versions 0..38 (version d seen last on day d): 29..38 are the last ten, and 8 (30
    # November) is its month's last; December's is among the ten.
    expected = [T + d * DAY for d in (8, *range(29, 39))]
    assert days == [str(t)[:10] for t in expected]
    for _, key, html in kept:
        assert html == (ONE if key == exact_key(ONE) else TWO)
    assert sizes(engine) == (2, len(ONE.encode()) + len(TWO.encode()))
    # The current version is the page's row; no version is lost from its history's end.
    ((current,),) = q(engine, f"SELECT html_content FROM page WHERE url = '{URL}'")
    assert current == TWO and kept[-1][2] == ONE


def test_retention_set_low_keeps_only_the_last_versions(engine: Engine) -> None:
    revisit_daily(engine, 40, CrawlWriter(engine, history=Retention(3, 0)))
    assert [str(w)[:10] for w, _, _ in history(engine)] == [
        str(T + d * DAY)[:10] for d in (36, 37, 38)
    ]
    assert sizes(engine)[0] == 2
    w = CrawlWriter(engine, history=Retention(1, 0))
    w.add(fetched(T + 40 * DAY, ONE))  # replaces TWO, the last version kept
    assert w.flush()
    assert [html for _, _, html in history(engine)] == [TWO]
    assert sizes(engine) == (1, len(TWO.encode()))  # ONE, pointed at by none, is gone


def test_no_history_kept_at_all(engine: Engine) -> None:
    revisit_daily(engine, 5, CrawlWriter(engine, history=Retention(0, 0)))
    assert history(engine) == [] and sizes(engine) == (0, 0)
    ((changed,),) = q(engine, "SELECT changed_time FROM page")
    assert str(changed)[:10] == str(T + 4 * DAY)[:10]  # the change is still recorded


def test_versions_of_one_batch_take_the_html_they_replaced(engine: Engine) -> None:
    w = CrawlWriter(engine)
    w.add(fetched(T, ONE))
    assert w.flush()
    three = semantic(NEWS_1 + " Dopolnjeno: vlada je sklep potrdila na seji v četrtek.")
    for day, html in ((1, TWO), (2, three), (3, ONE)):
        w.add(fetched(T + day * DAY, html))
    assert w.flush()
    assert [html for _, _, html in history(engine)] == [ONE, TWO, three]
    assert sizes(engine)[0] == 3


def test_a_document_version_has_no_html(engine: Engine) -> None:
    w = CrawlWriter(engine, store_binary_data=True)
    doc = FetchedPage(URL, 1, "BINARY", T, 200, data_type="PDF", data=b"%PDF-1", size=6,
                      content_hash="a" * 64)  # fmt: skip
    w.add(doc)
    assert w.flush()
    w.add(fetched(T + DAY, ONE))
    assert w.flush()
    assert [(key, html) for _, key, html in history(engine)] == [("a" * 64, None)]
    assert sizes(engine) == (0, 0)


# -- migration 0017 ---------------------------------------------------------------------------


@pytest.fixture(params=["sqlite", "postgresql"])
def old(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    """An empty crawldb at revision 0016."""
    yield from crawldb_at(request, tmp_path, "0016", "history0016")


def test_migration_shares_the_stored_versions_html(old: Engine) -> None:
    with old.begin() as conn:
        for pid in (1, 2):
            conn.execute(text(
                "INSERT INTO page (id, page_type_code, url, html_content, http_status_code, "
                "accessed_time, depth, content_hash) VALUES (:id, 'HTML', :url, 'now', 200, "
                ":t, 1, 'key-now')"
            ), {"id": pid, "url": f"{URL}/{pid}", "t": T})  # fmt: skip
        # Page 1 flipped between two contents three times; page 2 has ONE too, and a
        # document version with no HTML.
        for pid, html in ((1, ONE), (1, TWO), (1, ONE), (2, ONE), (2, None)):
            conn.execute(text(
                "INSERT INTO page_version (page_id, accessed_time, http_status_code, "
                "html_content, page_type_code) VALUES (:p, :t, 200, :h, 'HTML')"
            ), {"p": pid, "t": T, "h": html})  # fmt: skip
    database.migrate(old)
    rows = q(old, "SELECT v.page_id, c.page_id, c.html_content, c.size, c.html_hash "
                  "FROM page_version v LEFT JOIN page_version_content c ON c.id = v.content_id "
                  "ORDER BY v.id")  # fmt: skip
    assert [(p, c, h) for p, c, h, _, _ in rows] == [
        (1, 1, ONE), (1, 1, TWO), (1, 1, ONE), (2, 2, ONE), (2, None, None)
    ]  # fmt: skip
    assert all(k == html_hash(h) and s == len(h.encode()) for *_, h, s, k in rows if h)
    assert q(old, "SELECT count(*) FROM page_version_content") == [(3,)]
    # The next change of page 1 finds its contents and shares them.
    w = CrawlWriter(old)
    w.add(FetchedPage(f"{URL}/1", 1, "HTML", T + DAY, 200, html_content=TWO,
                      content_hash=exact_key(TWO)))  # fmt: skip
    assert w.flush()
    assert q(old, "SELECT count(*) FROM page_version_content") == [(4,)]  # "now" added
    # And back: each version holds its own HTML again.
    upgrade_to(old, "0016", down=True)
    back = q(old, "SELECT page_id, html_content FROM page_version ORDER BY id")
    assert back == [(1, ONE), (1, TWO), (1, ONE), (2, ONE), (2, None), (1, "now")]
