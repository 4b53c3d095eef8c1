"""Revisits in crawldb (govsi.store.visits, govsi.store.images), on SQLite and on a real
PostgreSQL: ``page`` holds the current copy; a change keeps the replaced version in
``page_version``, a steady page and a 304 keep none; links and images follow the current
version; a failed revisit keeps the copy; a stale record writes nothing; each visit records
what it found."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, select, text

from govsi.dedup.signature import exact_key
from govsi.items import FetchedImage, FetchedPage, Item, PageText, Revisit
from govsi.revisit.change import bytes_key
from govsi.store.schema import PAGE
from govsi.store.spill import decode_item, encode_item
from govsi.store.writer import CrawlWriter
from testkit.crawldb import T, q
from tests.support.govpages import NEWS_1, NEWS_2, semantic

A = "https://www.gov.si/novica"
B, C, D, E, F = (f"https://www.gov.si/{p}" for p in ("b", "c", "d", "e", "f"))
LOGO, PHOTO, MAP = (f"https://www.gov.si/img/{n}" for n in ("logo.png", "foto.jpg", "karta.png"))
T1 = T + timedelta(days=3)
DAY = 24 * 3600


def write(engine: Engine, *items: Item, writer: CrawlWriter | None = None) -> CrawlWriter:
    w = writer or CrawlWriter(engine, store_binary_data=True)
    for item in items:
        w.add(item)
    assert w.flush()
    return w


def page(url: str = A, when: datetime = T, html: str = semantic(NEWS_1), **kw: Any) -> FetchedPage:
    fields: dict[str, Any] = {"http_status_code": 200, "html_content": html}
    if html and fields["http_status_code"] == 200:
        fields["content_hash"] = exact_key(html)
    fields.update(kw)
    return FetchedPage(url, 1, fields.pop("page_type", "HTML"), when, **fields)


def revisit_of(engine: Engine, url: str = A) -> Revisit:
    """The stored copy as the scheduler hands it to ``request_for``."""
    c = PAGE.c
    cols = (c.etag, c.last_modified, c.content_hash, c.page_type_code, c.http_status_code,
            c.accessed_time, c.revisit_history)  # fmt: skip
    with engine.connect() as conn:
        row = conn.execute(select(*cols).where(c.url == url)).one()
    return Revisit(*row)


def again(engine: Engine, url: str = A, when: datetime = T1, **kw: Any) -> FetchedPage:
    return page(url, when, revisit=revisit_of(engine, url), **kw)


def row(engine: Engine, url: str = A) -> dict[str, Any]:
    with engine.connect() as conn:
        found = conn.execute(select(PAGE).where(PAGE.c.url == url)).one()
    return dict(found._mapping)


def versions(engine: Engine, url: str = A) -> list[tuple[Any, ...]]:
    return q(engine, (
        "SELECT v.http_status_code, v.content_hash, c.html_content, v.page_type_code "
        "FROM page_version v JOIN page p ON p.id = v.page_id "
        "LEFT JOIN page_version_content c ON c.id = v.content_id "
        f"WHERE p.url = '{url}' ORDER BY v.id"
    ))  # fmt: skip


def links(engine: Engine, url: str = A) -> set[str]:
    return {u for (u,) in q(engine, (
        "SELECT b.url FROM link l JOIN page a ON a.id = l.from_page "
        f"JOIN page b ON b.id = l.to_page WHERE a.url = '{url}'"
    ))}  # fmt: skip


def claim(engine: Engine, url: str = A) -> None:
    with engine.begin() as conn:
        conn.execute(text("UPDATE page SET revisit_claim = 'worker-1', revisit_claimed_at = "
                          f":t WHERE url = '{url}'"), {"t": T1})  # fmt: skip


def test_a_first_visit_starts_the_history(engine: Engine) -> None:
    write(engine, page(etag='"v1"', last_modified="Sun, 22 Nov 2026 11:00:00 GMT"))
    r = row(engine)
    assert r["changed_time"] == T and r["accessed_time"] == T
    assert (r["etag"], r["last_modified"]) == ('"v1"', "Sun, 22 Nov 2026 11:00:00 GMT")
    # Due again after REVISIT_MIN_INTERVAL; no interval observed yet, so no history.
    assert r["next_visit"] == T + timedelta(seconds=DAY) and r["revisit_history"] is None
    assert versions(engine) == []


def test_a_change_of_main_content_keeps_the_replaced_version(engine: Engine) -> None:
    old, new = semantic(NEWS_1), semantic(NEWS_2)
    write(engine, page(html=old))
    claim(engine)
    w = write(engine, again(engine, html=new, etag='"v2"'))
    r = row(engine)
    assert r["html_content"] == new and r["accessed_time"] == T1 and r["changed_time"] == T1
    assert r["etag"] == '"v2"' and r["content_hash"] == exact_key(new)
    assert r["revisit_claim"] is None and r["revisit_claimed_at"] is None
    assert r["next_visit"] > T1
    assert versions(engine) == [(200, exact_key(old), old, "HTML")]
    (when, first_seen) = q(engine, "SELECT accessed_time, changed_time FROM page_version")[0]
    assert str(when)[:19] == str(T) and str(first_seen)[:19] == str(T)
    assert w.changes == {"content": 1}


def test_a_visit_records_the_links_crawldb_did_not_know(engine: Engine) -> None:
    # What makes a hub: its visits find new pages. B is known (linked at the first visit,
    # C stored from elsewhere); D and E are new: "+2" in the history, and a hub's interval.
    w = CrawlWriter(engine, store_binary_data=True, revisit_hub_min_interval=3600)
    write(engine, page(links=[B]), page(C, html=semantic(NEWS_2)), writer=w)
    write(engine, again(engine, html=semantic(NEWS_2), links=[B, C, D, E]), writer=w)
    r = row(engine)
    assert r["revisit_history"] == f"{3 * DAY}+2"
    assert r["next_visit"] < T1 + timedelta(seconds=DAY)  # below REVISIT_MIN_INTERVAL
    # The same links again are no news: a changed page that found none.
    write(engine, again(engine, when=T1 + timedelta(days=1), links=[B, C, D, E]), writer=w)
    assert row(engine)["revisit_history"] == f"{3 * DAY}+2 {DAY}+"


def test_a_boilerplate_change_is_no_change_but_the_latest_bytes_are_kept(engine: Engine) -> None:
    write(engine, page(html=semantic(NEWS_1, "23. 11. 2026")))
    latest = semantic(NEWS_1, "26. 11. 2026")
    w = write(engine, again(engine, html=latest))
    r = row(engine)
    assert r["html_content"] == latest and r["accessed_time"] == T1
    assert r["changed_time"] == T  # the content was first seen then
    assert versions(engine) == [] and not w.changes


def test_a_304_records_the_visit_and_nothing_else(engine: Engine) -> None:
    write(engine, page(links=[B], images=[LOGO], etag='"v1"', last_modified="x"))
    before = row(engine)
    claim(engine)
    stored = revisit_of(engine)
    kept = FetchedPage(A, 1, "HTML", T1, 304, revisit=stored, not_modified=True)
    write(engine, kept)
    r = row(engine)
    assert r["accessed_time"] == T1 and r["next_visit"] > before["next_visit"]
    assert r["revisit_history"] != before["revisit_history"]
    same = ("html_content", "http_status_code", "content_hash", "changed_time", "etag",
            "last_modified", "page_type_code")  # fmt: skip
    assert {k: r[k] for k in same} == {k: before[k] for k in same}
    assert r["revisit_claim"] is None
    assert versions(engine) == [] and links(engine) == {B}
    # A 304 that sends a new validator updates it.
    renewed = FetchedPage(A, 1, "HTML", T1 + timedelta(days=1), 304, etag='"v1b"',
                          revisit=revisit_of(engine), not_modified=True)  # fmt: skip
    write(engine, renewed)
    assert (row(engine)["etag"], row(engine)["last_modified"]) == ('"v1b"', "x")


def test_links_follow_the_current_version(engine: Engine) -> None:
    write(engine, page(links=[B, C]))
    write(engine, again(engine, html=semantic(NEWS_2), links=[C, D]))
    assert links(engine) == {C, D}
    # The new target is queued as every link is: a FRONTIER row.
    assert row(engine, D)["page_type_code"] == "FRONTIER"
    assert row(engine, B)["page_type_code"] == "FRONTIER"  # the page is kept, its link gone
    # A steady revisit that lost a link (a menu entry) loses it too.
    write(engine, again(engine, when=T1 + timedelta(days=1), html=semantic(NEWS_2), links=[D]))
    assert links(engine) == {D}
    assert len(versions(engine)) == 1


def test_a_page_gone_or_moved_is_a_change_of_status(engine: Engine) -> None:
    write(engine, page(links=[B]), page(C))
    gone = again(engine, html="<h1>Ni strani</h1>", http_status_code=404, content_hash=None)
    moved = again(engine, C, html=None, http_status_code=301, content_hash=None, links=[D])
    w = write(engine, gone, moved)
    assert row(engine)["http_status_code"] == 404 and row(engine)["changed_time"] == T1
    assert links(engine) == set()
    assert [v[0] for v in versions(engine)] == [200]
    assert links(engine, C) == {D} and [v[0] for v in versions(engine, C)] == [200]
    # A redirect's content is where it leads.
    elsewhere = again(engine, C, T1 + timedelta(days=1), html=None, http_status_code=301,
                      content_hash=None, links=[B])  # fmt: skip
    w = write(engine, elsewhere, writer=w)
    assert [v[0] for v in versions(engine, C)] == [200, 301] and links(engine, C) == {B}
    assert w.changes == {"status": 2, "target": 1}


def test_documents_change_by_their_bytes(engine: Engine) -> None:
    url = "https://www.gov.si/dokumenti/porocilo.pdf"

    def pdf(when: datetime, data: bytes, **kw: Any) -> FetchedPage:
        key = bytes_key(data)
        return FetchedPage(url, 1, "BINARY", when, 200, "application/pdf", data_type="PDF",
                           data=data, size=len(data), content_hash=key, **kw)  # fmt: skip

    write(engine, pdf(T, b"%PDF-1 prva"))
    write(engine, pdf(T1, b"%PDF-1 prva", revisit=revisit_of(engine, url)))
    assert versions(engine, url) == []
    later = T1 + timedelta(days=1)
    write(engine, pdf(later, b"%PDF-1 druga!", revisit=revisit_of(engine, url)))
    # The replaced version by its hash; its bytes are not copied again.
    assert versions(engine, url) == [(200, bytes_key(b"%PDF-1 prva"), None, "BINARY")]
    data = q(engine, "SELECT data, size FROM page_data")
    assert [(bytes(d), s) for d, s in data] == [(b"%PDF-1 druga!", 13)]
    assert row(engine, url)["changed_time"] == later


def test_a_document_whose_bytes_were_never_read_is_compared_by_size(engine: Engine) -> None:
    url = "https://www.gov.si/dokumenti/zapisnik.pdf"
    unread = FetchedPage(url, 1, "BINARY", T, 200, data_type="PDF", size=100)
    write(engine, unread, writer=CrawlWriter(engine))
    stored = revisit_of(engine, url)
    same = FetchedPage(url, 1, "BINARY", T1, 200, data_type="PDF", size=100,
                       content_hash=bytes_key(b"x" * 100), revisit=stored)  # fmt: skip
    write(engine, same)
    assert versions(engine, url) == []  # its hash learnt now
    bigger = FetchedPage(url, 1, "BINARY", T1 + timedelta(days=1), 200, data_type="PDF",
                         size=120, content_hash=bytes_key(b"y" * 120),
                         revisit=revisit_of(engine, url))  # fmt: skip
    write(engine, bigger)
    assert [v[1] for v in versions(engine, url)] == [bytes_key(b"x" * 100)]


def image_rows(engine: Engine) -> list[tuple[Any, ...]]:
    rows = q(engine, (
        "SELECT p.url, i.url, i.data, i.http_status_code, i.content_hash, i.etag "
        "FROM image i JOIN page p ON p.id = i.page_id ORDER BY i.id"
    ))  # fmt: skip
    return [(p, u, d and bytes(d), s, h, e) for p, u, d, s, h, e in rows]


def test_images_follow_the_current_version_and_their_bytes_stay(engine: Engine) -> None:
    write(engine, page(images=[LOGO, PHOTO]), page(B, images=[LOGO]))
    png = b"PNG-1"
    write(engine, FetchedImage(LOGO, T, 200, "image/png", png, bytes_key(png), '"i1"'),
          FetchedImage(PHOTO, T, 200, "image/jpeg", b"JPG", bytes_key(b"JPG")))  # fmt: skip
    # The page no longer shows the logo (its row held the bytes) but shows a map.
    write(engine, again(engine, images=[PHOTO, MAP]))
    assert image_rows(engine) == [
        (A, PHOTO, b"JPG", 200, bytes_key(b"JPG"), None),
        (B, LOGO, png, 200, bytes_key(png), '"i1"'),  # the bytes moved on to B's row
        (A, MAP, None, None, None, None),  # a download still owed
    ]


def test_an_image_revisit_replaces_its_bytes_and_a_304_keeps_them(engine: Engine) -> None:
    write(engine, page(images=[LOGO]), page(B, images=[LOGO]))
    write(engine, FetchedImage(LOGO, T, 200, "image/png", b"PNG-1", bytes_key(b"PNG-1"), '"i1"'))
    stored = Revisit(etag='"i1"', content_hash=bytes_key(b"PNG-1"), http_status_code=200,
                     accessed_time=T)  # fmt: skip
    write(engine, FetchedImage(LOGO, T1, 304, revisit=stored, not_modified=True))
    assert [r[2:] for r in image_rows(engine)] == [
        (b"PNG-1", 200, bytes_key(b"PNG-1"), '"i1"'),
        (None, 200, bytes_key(b"PNG-1"), '"i1"'),
    ]
    assert {str(t)[:19] for (t,) in q(engine, "SELECT accessed_time FROM image")} == {str(T1)}
    new = b"PNG-2"
    later = T1 + timedelta(days=1)
    write(engine, FetchedImage(LOGO, later, 200, "image/png", new, bytes_key(new), '"i2"',
                               revisit=stored))  # fmt: skip
    assert [r[2:] for r in image_rows(engine)] == [
        (new, 200, bytes_key(new), '"i2"'),
        (None, 200, bytes_key(new), '"i2"'),
    ]
    # Gone now: no bytes are the picture any more.
    write(engine, FetchedImage(LOGO, later + timedelta(days=1), 404, "text/html", None,
                               revisit=stored))  # fmt: skip
    assert [r[2:4] for r in image_rows(engine)] == [(None, 404), (None, 404)]
    # An old download written late changes nothing.
    write(engine, FetchedImage(LOGO, T, 200, "image/png", b"OLD", bytes_key(b"OLD")))
    assert [r[2:4] for r in image_rows(engine)] == [(None, 404), (None, 404)]


def test_a_stale_record_writes_nothing(engine: Engine) -> None:
    write(engine, page(links=[B]))
    fresh = again(engine, html=semantic(NEWS_2), links=[C])
    stale = page(when=T1 - timedelta(days=1), html=semantic(NEWS_1, "x"), links=[D],
                 revisit=fresh.revisit)  # fmt: skip
    write(engine, fresh)
    before = row(engine)
    write(engine, stale)  # a spill replayed late, say
    after = row(engine)
    assert after == before and links(engine) == {C}
    assert len(versions(engine)) == 1
    stale_304 = FetchedPage(A, 1, "HTML", T, 304, revisit=fresh.revisit, not_modified=True)
    write(engine, stale_304)
    assert row(engine) == before


def test_a_failed_revisit_keeps_the_copy_and_says_why(engine: Engine) -> None:
    write(engine, page(links=[B]))
    before = row(engine)
    claim(engine)
    stored = revisit_of(engine)
    error = FetchedPage(A, 1, "ERROR", T1, fetch_error="TimeoutError: took longer than 3 s",
                        revisit=stored)  # fmt: skip
    write(engine, error)
    r = row(engine)
    assert r["fetch_error"] == "TimeoutError: took longer than 3 s"
    keep = ("html_content", "page_type_code", "http_status_code", "accessed_time",
            "changed_time", "revisit_history")  # fmt: skip
    assert {k: r[k] for k in keep} == {k: before[k] for k in keep}
    assert r["next_visit"] == T1 + timedelta(seconds=DAY) and r["revisit_claim"] is None
    assert links(engine) == {B} and versions(engine) == []
    # robots.txt now forbids it: not requested, the copy kept, the reason recorded.
    forbidden = FetchedPage(A, 1, "FRONTIER", None, fetch_error="forbidden by robots.txt",
                            revisit=stored)  # fmt: skip
    write(engine, forbidden)
    assert row(engine)["fetch_error"] == "forbidden by robots.txt"
    assert row(engine)["page_type_code"] == "HTML"
    # The next good visit clears the reason.
    write(engine, again(engine, when=T1 + timedelta(days=2)))
    assert row(engine)["fetch_error"] is None and versions(engine) == []


def test_revisits_of_copies_errors_and_redirects(engine: Engine) -> None:
    original = page(C, html=semantic(NEWS_2))
    copy = page(A, html=semantic(NEWS_2), page_type="DUPLICATE", duplicate_of=C)
    copy.html_content = None
    error = FetchedPage(B, 1, "ERROR", T, fetch_error="ConnectionRefusedError")
    write(engine, original, copy, error)
    # The copy is still a copy: nothing changed; then it gets a content of its own.
    steady = again(engine, html=semantic(NEWS_2), page_type="DUPLICATE", duplicate_of=C)
    steady.html_content = None
    write(engine, steady)
    assert versions(engine) == [] and links(engine) == {C}
    own = again(engine, when=T1 + timedelta(days=1), html=semantic(NEWS_1), links=[D])
    write(engine, own)
    r = row(engine)
    assert r["page_type_code"] == "HTML" and r["duplicate_of"] is None
    assert versions(engine) == [(200, exact_key(semantic(NEWS_2)), None, "DUPLICATE")]
    assert links(engine) == {D}
    # The error page answers now.
    write(engine, again(engine, B, html=semantic(NEWS_1, "1. 12. 2026")))
    assert versions(engine, B) == [(None, None, None, "ERROR")]
    assert row(engine, B)["fetch_error"] is None


def outcomes(engine: Engine) -> dict[str, tuple[str | None, str]]:
    """Each page's last visit: (what it found, when, to the second)."""
    rows = q(engine, "SELECT url, visit_outcome, visit_time FROM page WHERE visit_time IS NOT NULL")
    return {url: (found, str(when)[:19]) for url, found, when in rows}


def test_each_visit_records_what_it_found_and_when(engine: Engine) -> None:
    pages = [A, B, C, D, E, F]
    write(engine, *(page(u, links=[B]) for u in pages))
    assert outcomes(engine) == {u: ("new", str(T)) for u in pages}
    t2 = T1 + timedelta(hours=1)
    write(engine,
          again(engine, A, links=[B]),  # fetched again: the same main text
          again(engine, B, html=semantic(NEWS_2)),
          again(engine, C, html="<h1>Ni strani</h1>", http_status_code=410, content_hash=None),
          again(engine, D, html=None, http_status_code=301, content_hash=None, links=[A]),
          FetchedPage(E, 1, "HTML", T1, 304, revisit=revisit_of(engine, E), not_modified=True),
          FetchedPage(F, 1, "ERROR", t2, fetch_error="TimeoutError", revisit=revisit_of(engine, F)),
          )  # fmt: skip
    assert outcomes(engine) == {
        A: ("same", str(T1)),
        B: ("changed", str(T1)),
        C: ("gone", str(T1)),
        D: ("moved", str(T1)),
        E: ("not_modified", str(T1)),
        F: ("kept", str(t2)),  # the copy's accessed_time stays; the visit is recorded
    }
    assert row(engine, F)["accessed_time"] == T
    # robots.txt now forbids it: not requested, kept (when: as the record is written).
    forbidden = FetchedPage(A, 1, "FRONTIER", None, fetch_error="forbidden by robots.txt",
                            revisit=revisit_of(engine, A))  # fmt: skip
    write(engine, forbidden)
    assert outcomes(engine)[A][0] == "kept"
    # A record older than the row writes nothing: its outcome neither.
    write(engine, page(B, when=T, html=semantic(NEWS_1, "x"), revisit=revisit_of(engine, B)))
    assert outcomes(engine)[B] == ("changed", str(T1))


def test_two_visits_of_a_page_in_one_batch_are_written_in_order(engine: Engine) -> None:
    write(engine, page())
    stored = revisit_of(engine)
    mid = page(when=T1, html=semantic(NEWS_2), revisit=stored, links=[B])
    last = page(when=T1 + timedelta(hours=1), html=semantic(NEWS_1), revisit=stored, links=[C])
    write(engine, mid, last)
    assert [v[1] for v in versions(engine)] == [exact_key(semantic(NEWS_1)),
                                                exact_key(semantic(NEWS_2))]  # fmt: skip
    assert row(engine)["html_content"] == semantic(NEWS_1) and links(engine) == {C}


def test_a_revisit_survives_a_spill_file() -> None:
    stored = Revisit(etag='"v1"', last_modified="Sun, 22 Nov 2026 11:00:00 GMT",
                     content_hash="k", page_type="HTML", http_status_code=200,
                     accessed_time=T, history="86400:0")  # fmt: skip
    record = FetchedPage(A, 1, "HTML", T1, 304, revisit=stored, not_modified=True, etag='"v2"')
    back = decode_item(json.loads(json.dumps(encode_item(record))))
    assert back == record and isinstance(back, FetchedPage) and back.revisit == stored


def history_sql() -> list[str]:
    """The example queries of docs/stored.md, "History"."""
    doc = (Path(__file__).resolve().parent.parent / "docs" / "stored.md").read_text()
    block = doc.split("## History", 1)[1].split("```sql", 1)[1].split("```", 1)[0]
    return [s.strip() for s in block.split(";") if s.strip()]


def test_the_history_queries_of_the_docs_answer(engine: Engine) -> None:
    write(engine, page(), page(B), page(C))
    write(engine, again(engine, html=semantic(NEWS_2)),
          again(engine, B, html="<h1>Ni strani</h1>", http_status_code=410, content_hash=None),
          again(engine, C))  # fmt: skip
    since, history, earlier_html, by_host, gone = history_sql()
    assert sorted(r[0] for r in q(engine, since)) == [B, A]
    history = history.replace("'https://www.gov.si/'", f"'{A}'")
    rows = q(engine, history)
    assert [(str(r[0])[:19], str(r[1])[:19]) for r in rows] == [
        (str(T), str(T)),
        (str(T1), str(T1)),
    ]
    assert [r[4] for r in rows] == [exact_key(semantic(NEWS_1)), exact_key(semantic(NEWS_2))]
    assert [r[:3] for r in q(engine, gone)] == [(B, 200, 410)]
    earlier = q(engine, earlier_html.replace("'https://www.gov.si/'", f"'{A}'"))
    assert [(str(r[0])[:19], r[2]) for r in earlier] == [(str(T), semantic(NEWS_1))]
    # A's and B's earlier versions had the same HTML: one copy each (never shared across pages).
    size = len(semantic(NEWS_1).encode())
    assert q(engine, by_host) == [("www.gov.si", 2, 2, 2 * size)]


def texts(engine: Engine) -> dict[str, tuple[Any, ...]]:
    rows = q(engine, (
        "SELECT p.url, t.kind, t.status, t.title, t.text, t.language, t.document_date, "
        "t.extracted_at FROM page_text t JOIN page p ON p.id = t.page_id"
    ))  # fmt: skip
    return {r[0]: tuple(r[1:]) for r in rows}


def html_text(words: str, title: str = "Novica") -> PageText:
    return PageText("HTML", "ok", words, None, title, "sl")


def test_page_text_follows_the_current_version(engine: Engine) -> None:
    write(engine, page(text=html_text("Prva novica o občini")))
    first = texts(engine)[A]
    assert first[:5] == ("HTML", "ok", "Novica", "Prva novica o občini", "sl")
    # Steady (same main text): the row stays as written, so an index has nothing to redo.
    write(engine, again(engine, text=html_text("Prva novica o občini", "Nov naslov")))
    assert texts(engine)[A] == first
    # A change replaces it.
    later = T1 + timedelta(days=1)
    changed = semantic(NEWS_2)
    write(engine, again(engine, when=later, html=changed, text=html_text("Druga novica")))
    assert texts(engine)[A][3] == "Druga novica" and texts(engine)[A][6] > first[6]
    # A 304 keeps it; a page gone (404) or become a copy of another has none.
    write(engine, again(engine, when=later + timedelta(days=1), not_modified=True))
    assert texts(engine)[A][3] == "Druga novica"
    write(engine, again(engine, when=later + timedelta(days=2), http_status_code=404,
                        html="<p>Ni strani</p>", content_hash=None))  # fmt: skip
    assert A not in texts(engine)


def test_a_steady_page_without_a_text_row_gets_one(engine: Engine) -> None:
    write(engine, page())  # stored before text extraction was on
    write(engine, again(engine, text=html_text("Prva novica")))
    assert texts(engine)[A][3] == "Prva novica"


def document(url: str, data: bytes, text: PageText) -> FetchedPage:
    return FetchedPage(url, 1, "BINARY", T, 200, "application/pdf", data_type=text.kind,
                       size=len(data), content_hash=bytes_key(data), text=text)  # fmt: skip


def test_a_documents_text_and_its_date_are_kept(engine: Engine) -> None:
    aware = datetime(2024, 1, 31, 12, tzinfo=timezone(timedelta(hours=-1)))
    doc = PageText("PDF", "ok", "Poročilo o delu", None, "Poročilo", "sl", aware)
    write(engine, document(F, b"%PDF-1 prva", doc),
          document(B, b"x", PageText("DOCX", "failed", reason="not a zip")))  # fmt: skip
    got = texts(engine)
    assert got[F][:5] == ("PDF", "ok", "Poročilo", "Poročilo o delu", "sl")
    assert str(got[F][5])[:19] == "2024-01-31 13:00:00"  # naive UTC, as crawldb keeps dates
    assert got[B][:4] == ("DOCX", "failed", None, None)
    assert q(engine, "SELECT reason FROM page_text WHERE status = 'failed'") == [("not a zip",)]


def test_page_text_survives_a_spill_file() -> None:
    when = datetime(2024, 1, 1, tzinfo=UTC)
    item = page(text=PageText("PDF", "ok", "x", None, "T", "sl", when))
    assert decode_item(json.loads(json.dumps(encode_item(item)))) == item
