"""The batched writer (govsi.store.writer), on SQLite and on a real PostgreSQL: what a crawl
records, retries and outages, writes that never go backwards, pictures stored once, and one
address per host."""

from __future__ import annotations

import logging
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, event
from sqlalchemy.exc import IntegrityError, OperationalError

from govsi.items import DiscoveredPage, FetchedImage, FetchedPage, RobotsFile
from govsi.store.reader import CrawlReader
from govsi.store.spill import replay
from govsi.store.writer import CrawlWriter
from testkit.crawldb import T, q


def test_writer_records_a_small_crawl(engine: Engine) -> None:
    w = CrawlWriter(engine, store_binary_data=True)
    a, b, c = "http://a.gov.si/", "http://a.gov.si/b", "http://c.gov.si/doc.pdf"
    w.add(DiscoveredPage(a, 0))
    w.add(RobotsFile("a.gov.si", "User-agent: *\nDisallow:\n"))
    w.add(
        FetchedPage(
            a,
            0,
            "HTML",
            T,
            200,
            "text/html",
            "<p>š</p>",
            links=[b, c, a],
            images=["http://a.gov.si/i.png"],
        )
    )
    assert w.flush()
    w.add(
        FetchedPage(
            b,
            1,
            "HTML",
            T,
            200,
            "text/html",
            "<p>b</p>",
            links=[a],
            images=["http://a.gov.si/i.png"],
        )
    )
    w.add(FetchedImage("http://a.gov.si/i.png", T, 200, "image/png", b"PNG"))
    w.add(
        FetchedPage(
            c, 1, "BINARY", T, 200, "application/pdf", data_type="PDF", data=b"%PDF", size=4
        )
    )
    assert w.flush()
    # A page seen after the image was fetched copies the download, not a second fetch.
    w.add(
        FetchedPage(
            "http://a.gov.si/d",
            1,
            "HTML",
            T,
            200,
            "text/html",
            "<p>d</p>",
            images=["http://a.gov.si/i.png"],
        )
    )
    assert w.flush()

    pages = {
        r[0]: r[1:]
        for r in q(engine, "SELECT url, page_type_code, http_status_code, depth FROM page")
    }
    assert pages == {
        a: ("HTML", 200, 0),
        b: ("HTML", 200, 1),
        c: ("BINARY", 200, 1),
        "http://a.gov.si/d": ("HTML", 200, 1),
    }
    assert q(engine, "SELECT html_content FROM page WHERE url='http://a.gov.si/'") == [
        ("<p>š</p>",)
    ]
    sites = dict(q(engine, "SELECT domain, robots_content FROM site"))
    assert sites == {"a.gov.si": "User-agent: *\nDisallow:\n", "c.gov.si": None}
    ids = {u: i for i, u in q(engine, "SELECT id, url FROM page")}
    links = set(q(engine, "SELECT from_page, to_page FROM link"))
    assert links == {(ids[a], ids[b]), (ids[a], ids[c]), (ids[a], ids[a]), (ids[b], ids[a])}
    images = q(engine, "SELECT page_id, filename, content_type, data FROM image ORDER BY id")
    # One row per (page, image); the bytes on the URL's first row only.
    assert [(p, f, ct, d and bytes(d)) for p, f, ct, d in images] == [
        (ids[a], "i.png", "image/png", b"PNG"),
        (ids[b], "i.png", "image/png", None),
        (ids["http://a.gov.si/d"], "i.png", "image/png", None),
    ]
    data = q(engine, "SELECT page_id, data_type_code, data, size FROM page_data")
    assert [(p, t, bytes(d), s) for p, t, d, s in data] == [(ids[c], "PDF", b"%PDF", 4)]


def test_binary_bytes_dropped_unless_kept(engine: Engine) -> None:
    w = CrawlWriter(engine, store_binary_data=False, store_image_data=False)
    w.add(
        FetchedPage(
            "http://a.gov.si/x.pdf",
            0,
            "BINARY",
            T,
            200,
            data_type="PDF",
            data=b"%PDF",
            size=4,
            images=[],
        )
    )
    w.add(
        FetchedPage(
            "http://a.gov.si/",
            0,
            "HTML",
            T,
            200,
            html_content="x",
            images=["http://a.gov.si/i.png"],
        )
    )
    w.add(FetchedImage("http://a.gov.si/i.png", T, 200, "image/png", b"PNG"))
    assert w.flush()
    assert q(engine, "SELECT data, size FROM page_data") == [(None, 4)]
    assert q(engine, "SELECT data, content_type FROM image") == [(None, "image/png")]


def test_failed_write_is_retried_then_kept_then_spilled_and_replayed(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    w = CrawlWriter(engine, retries=2, retry_backoff=0)
    calls = {"n": 0}
    real_apply = w._apply

    def broken(conn, batch):  # type: ignore[no-untyped-def]
        calls["n"] += 1
        raise OperationalError("INSERT", {}, Exception("server closed the connection"))

    monkeypatch.setattr(w, "_apply", broken)
    w.add(DiscoveredPage("http://a.gov.si/", 0))
    assert not w.flush()
    assert calls["n"] == 3  # one try and two retries
    assert len(w.pending) == 1  # kept, not lost
    path = w.spill(tmp_path)
    assert path is not None and w.pending == []
    monkeypatch.setattr(w, "_apply", real_apply)
    assert replay(path, CrawlWriter(engine)) == 1
    assert q(engine, "SELECT url, page_type_code FROM page") == [("http://a.gov.si/", "FRONTIER")]


@pytest.mark.parametrize(
    ("error", "traceback"),
    [
        (OperationalError("INSERT", {}, Exception("server closed the connection\nmore")), False),
        (IntegrityError("INSERT", {}, Exception("duplicate key value")), True),
    ],
)
def test_an_outage_is_logged_in_one_line_and_a_bug_with_its_traceback(
    engine: Engine,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    error: Exception,
    traceback: bool,
) -> None:
    w = CrawlWriter(engine, retries=1, retry_backoff=0)

    def broken(conn, batch):  # type: ignore[no-untyped-def]
        raise error

    monkeypatch.setattr(w, "_apply", broken)
    w.add(DiscoveredPage("http://a.gov.si/", 0))
    with caplog.at_level(logging.WARNING, logger="govsi.store.writer"):
        assert not w.flush()
    failed = [r for r in caplog.records if "failed (attempt" in r.getMessage()]
    assert len(failed) == 2
    assert any(r.exc_info for r in failed) is traceback
    if not traceback:
        assert "server closed the connection" in failed[-1].getMessage()
        assert "more" not in failed[-1].getMessage()


def test_links_to_pages_already_written_cost_no_rows_and_stay_right(engine: Engine) -> None:
    # A menu on every page: its URLs are written once; later pages link them by their
    # remembered ids, and a failed transaction's new ids are never remembered.
    w = CrawlWriter(engine, page_id_cache=100, retries=0)
    menu = [f"http://a.gov.si/m{i}" for i in range(5)]
    w.add(FetchedPage("http://a.gov.si/", 0, "HTML", T, 200, "text/html", "<p>0</p>",
                      links=menu))  # fmt: skip
    assert w.flush()
    statements: list[str] = []
    event.listen(engine, "before_cursor_execute",
                 lambda *a: statements.append(a[2]))  # fmt: skip
    w.add(FetchedPage(menu[0], 1, "HTML", T, 200, "text/html", "<p>1</p>", links=menu))
    assert w.flush()
    # No page row inserted, nor read back: menu[0]'s own row is only updated.
    assert not [s for s in statements if s.startswith("INSERT INTO page ")], statements
    links = q(engine, "SELECT t.url FROM link JOIN page f ON f.id = link.from_page "
                      f"JOIN page t ON t.id = link.to_page WHERE f.url = '{menu[0]}'")  # fmt: skip
    assert sorted(t for (t,) in links) == menu

    def broken(conn, batch):  # type: ignore[no-untyped-def]
        w._ensure_pages(conn, {"http://a.gov.si/novo": 2}, w._ensure_sites(conn, ["a.gov.si"]))
        w.page_ids.stage({"http://a.gov.si/nikoli": 999_999})  # rolled back: never was
        raise OperationalError("INSERT", {}, Exception("server closed the connection"))

    real = w._apply
    w._apply = broken  # type: ignore[method-assign]
    w.add(DiscoveredPage("http://a.gov.si/novo", 2))
    assert not w.flush()
    w._apply = real  # type: ignore[method-assign]
    assert w.flush()
    assert w.page_ids.known(["http://a.gov.si/nikoli"]) == {}
    novo = q(engine, "SELECT id, page_type_code FROM page WHERE url = 'http://a.gov.si/novo'")
    assert [t for _, t in novo] == ["FRONTIER"]
    # The id the next transaction remembers is the row's, not the failed one's.
    assert w.page_ids.known(["http://a.gov.si/novo"]) == {"http://a.gov.si/novo": novo[0][0]}


def test_frontier_order_and_fetched_urls(engine: Engine) -> None:
    w = CrawlWriter(engine)
    w.add(DiscoveredPage("http://a.gov.si/", 0))
    w.add(
        FetchedPage(
            "http://a.gov.si/",
            0,
            "HTML",
            T,
            200,
            html_content="x",
            links=["http://a.gov.si/2", "http://a.gov.si/1"],
        )
    )
    w.add(
        FetchedPage(
            "http://a.gov.si/1", 1, "HTML", T, 200, html_content="x", links=["http://a.gov.si/deep"]
        )
    )
    assert w.flush()
    r = CrawlReader(engine)
    batch = r.frontier_batch("a.gov.si", (-1, 0), 10)
    assert [(url, depth) for url, depth, _ in batch] == [
        ("http://a.gov.si/2", 1),
        ("http://a.gov.si/deep", 2),
    ]
    assert r.fetched_on_hosts(["a.gov.si"]) == {"http://a.gov.si/", "http://a.gov.si/1"}


def test_a_picture_on_many_pages_is_stored_once_and_read_without_its_bytes(
    engine: Engine,
) -> None:
    logo, data = "http://a.gov.si/logo.png", b"\x89PNG" + bytes(100_000)
    w = CrawlWriter(engine)
    selects: list[str] = []

    @event.listens_for(engine, "before_cursor_execute")
    def seen(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        if statement.lstrip().upper().startswith("SELECT") and "image" in statement:
            selects.append(statement)

    for i in range(60):
        w.add(FetchedPage(f"http://a.gov.si/{i}", 1, "HTML", T, 200, "text/html", "<p>x</p>",
                          images=[logo]))  # fmt: skip
        if i == 5:
            w.add(FetchedImage(logo, T, 200, "image/png", data))
        assert w.flush()
    event.remove(engine, "before_cursor_execute", seen)
    rows = q(engine, "SELECT count(*), count(data), sum(length(data)) FROM image")
    assert rows == [(60, 1, len(data))]
    # Every row says what the download was; the bytes are on the URL's first row.
    assert q(engine, "SELECT DISTINCT content_type, http_status_code FROM image") == [
        ("image/png", 200)
    ]
    (first,) = q(engine, f"SELECT min(id) FROM image WHERE url = '{logo}'")[0]
    assert q(engine, "SELECT id FROM image WHERE data IS NOT NULL") == [(first,)]
    assert selects and not [s for s in selects if "image.data" in s or " data," in s]


def test_one_address_per_host_for_the_whole_crawl(engine: Engine) -> None:
    # Two workers whose DNS answers differ (round-robin): both use the first one stored.
    first, second = CrawlWriter(engine), CrawlWriter(engine)
    assert first.pin_address("www.gov.si", "193.2.1.66") == "193.2.1.66"
    assert second.pin_address("www.gov.si", "193.2.1.67") == "193.2.1.66"
    assert second.pin_address("evem.gov.si", "193.2.1.70") == "193.2.1.70"
    assert q(engine, "SELECT domain, ip_address FROM site ORDER BY domain") == [
        ("evem.gov.si", "193.2.1.70"), ("www.gov.si", "193.2.1.66"),
    ]  # fmt: skip


# -- writes never go backwards ---------------------------------------------------------------
U = "http://a.gov.si/stran"


def _fetched(when: datetime = T, html: str = "<p>stran</p>") -> FetchedPage:
    return FetchedPage(U, 1, "HTML", when, 200, "text/html", html)


def _weaker() -> list[FetchedPage]:
    return [
        FetchedPage(U, 1, "FRONTIER", None, fetch_error="DNS lookup failed: no such host"),
        FetchedPage(U, 1, "FRONTIER", None, fetch_error="robots.txt unavailable (HTTP 503)"),
        FetchedPage(U, 1, "ERROR", T, fetch_error="TimeoutError: took longer than 60 s"),
    ]


def _row(engine: Engine) -> tuple:
    sql = ("SELECT page_type_code, http_status_code, html_content, fetch_error, "
           f"accessed_time IS NOT NULL FROM page WHERE url = '{U}'")  # fmt: skip
    return q(engine, sql)[0]


@pytest.mark.parametrize("weaker_first", [False, True])
def test_a_weaker_record_never_sets_a_fetched_page_back(engine: Engine, weaker_first: bool) -> None:
    # Two workers: one fetched the page, the other failed to (its DNS, its robots.txt, a
    # timeout); whichever write comes last, the fetched page stays.
    fetched_by, failed_by = CrawlWriter(engine), CrawlWriter(engine)
    writers = [(failed_by, _weaker()), (fetched_by, [_fetched()])]
    for writer, records in writers if weaker_first else writers[::-1]:
        for record in records:
            writer.add(record)
            assert writer.flush()
    assert _row(engine) == ("HTML", 200, "<p>stran</p>", None, True)


def test_a_row_moves_forward_and_a_newer_fetch_replaces_an_older_one(engine: Engine) -> None:
    w = CrawlWriter(engine)
    w.add(DiscoveredPage(U, 1))
    w.add(FetchedPage(U, 1, "FRONTIER", None, fetch_error="forbidden by robots.txt"))
    assert w.flush()
    assert _row(engine) == ("FRONTIER", None, None, "forbidden by robots.txt", False)
    w.add(FetchedPage(U, 1, "ERROR", T, fetch_error="ConnectionRefusedError"))
    assert w.flush()
    assert _row(engine)[0] == "ERROR"
    w.add(_fetched(T))
    assert w.flush()
    w.add(_fetched(T.replace(hour=13), "<p>novejša</p>"))
    assert w.flush()
    w.add(_fetched(T.replace(hour=11), "<p>starejša</p>"))  # an old fetch, written late
    assert w.flush()
    assert _row(engine) == ("HTML", 200, "<p>novejša</p>", None, True)


def test_an_old_spill_replayed_over_a_finished_crawl_changes_nothing(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An earlier run could not write these; they are saved to a spill file.
    old = CrawlWriter(engine, retries=0, retry_backoff=0)
    monkeypatch.setattr(old, "_apply", lambda conn, batch: (_ for _ in ()).throw(
        OperationalError("UPDATE", {}, Exception("server closed the connection"))))  # fmt: skip
    old.add(DiscoveredPage(U, 1))
    for record in [*_weaker(), _fetched(T.replace(hour=9), "<p>stara</p>")]:
        old.add(record)
    assert not old.flush()
    path = old.spill(tmp_path)
    assert path is not None
    # The crawl went on and finished; then the spill is found and replayed.
    done = CrawlWriter(engine)
    done.add(DiscoveredPage(U, 1))
    done.add(_fetched(T))
    assert done.flush()
    assert replay(path, CrawlWriter(engine)) == 5
    assert _row(engine) == ("HTML", 200, "<p>stran</p>", None, True)
