"""crawldb schema and the batched writer, on SQLite and on a real PostgreSQL."""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from scrapy.utils.test import get_crawler
from sqlalchemy import Engine, event, inspect, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import IntegrityError, OperationalError

from govsi import settings as govsi_settings
from govsi.items import DiscoveredPage, FetchedImage, FetchedPage, RobotsFile
from govsi.robots.fetching import stored_outcome
from govsi.spiders.govsi import GovsiSpider
from govsi.store import database, schema
from govsi.store.extension import CrawlStore
from govsi.store.reader import CrawlReader
from govsi.store.spill import (
    default_spill_dir,
    read_spill,
    replay,
    replay_spills,
    save_spill,
    set_spills_aside,
    spill_files,
)
from govsi.store.writer import CrawlWriter


def q(engine: Engine, sql: str) -> list[tuple]:
    with engine.connect() as conn:
        return [tuple(r) for r in conn.execute(text(sql))]


T = datetime(2026, 11, 22, 12, 0, 0)


# -- schema ------------------------------------------------------------------------------
def test_migrations_match_models(engine: Engine) -> None:
    with engine.connect() as conn:
        ctx = MigrationContext.configure(conn)
        diff = [
            d
            for d in compare_metadata(ctx, schema.unqualified_metadata())
            if not (
                isinstance(d, tuple) and d[0] == "remove_table" and d[1].name == "alembic_version"
            )
        ]
    assert diff == []


def test_lookup_rows(engine: Engine) -> None:
    assert {r[0] for r in q(engine, "SELECT code FROM data_type")} == set(schema.DATA_TYPES)
    assert {r[0] for r in q(engine, "SELECT code FROM page_type")} == set(
        schema.PAGE_TYPES + schema.EXTRA_PAGE_TYPES
    )


def test_migrate_twice_is_harmless(engine: Engine) -> None:
    database.migrate(engine)
    assert len(q(engine, "SELECT code FROM data_type")) == 5


STANDARD_COLUMNS = {
    "data_type": [("code", "character varying", 20, "NO")],
    "page_type": [("code", "character varying", 20, "NO")],
    "site": [
        ("id", "integer", None, "NO"),
        ("domain", "character varying", 500, "YES"),
        ("robots_content", "text", None, "YES"),
        ("sitemap_content", "text", None, "YES"),
    ],
    "page": [
        ("id", "integer", None, "NO"),
        ("site_id", "integer", None, "YES"),
        ("page_type_code", "character varying", 20, "YES"),
        ("url", "character varying", 3000, "YES"),
        ("html_content", "text", None, "YES"),
        ("http_status_code", "integer", None, "YES"),
        ("accessed_time", "timestamp without time zone", None, "YES"),
    ],
    "page_data": [
        ("id", "integer", None, "NO"),
        ("page_id", "integer", None, "YES"),
        ("data_type_code", "character varying", 20, "YES"),
        ("data", "bytea", None, "YES"),
    ],
    "image": [
        ("id", "integer", None, "NO"),
        ("page_id", "integer", None, "YES"),
        ("filename", "character varying", 255, "YES"),
        ("content_type", "character varying", 50, "YES"),
        ("data", "bytea", None, "YES"),
        ("accessed_time", "timestamp without time zone", None, "YES"),
    ],
    "link": [("from_page", "integer", None, "NO"), ("to_page", "integer", None, "NO")],
}


@pytest.mark.parametrize("engine", ["postgresql"], indirect=True)
def test_postgres_standard_schema_exactly(engine: Engine) -> None:
    for table, expected in STANDARD_COLUMNS.items():
        rows = q(
            engine,
            "SELECT column_name, data_type, character_maximum_length, is_nullable "
            "FROM information_schema.columns "
            f"WHERE table_schema='crawldb' AND table_name='{table}'",
        )
        assert set(expected) <= set(rows), table
    # serial ids, unique url, RESTRICT foreign keys, the standard index names
    defaults = dict(
        q(
            engine,
            "SELECT table_name, column_default FROM information_schema.columns "
            "WHERE table_schema='crawldb' AND column_name='id'",
        )
    )
    for table in ("site", "page", "page_data", "image"):
        assert defaults[table].startswith("nextval("), table
    insp = inspect(engine)
    for fk_table in ("page", "page_data", "image", "link"):
        for fk in insp.get_foreign_keys(fk_table, schema="crawldb"):
            assert fk["options"].get("ondelete") == "RESTRICT", fk
    indexes = {i["name"] for t in STANDARD_COLUMNS for i in insp.get_indexes(t, schema="crawldb")}
    assert {
        "unq_url_idx",
        "idx_page_site_id",
        "idx_page_page_type_code",
        "idx_page_data_page_id",
        "idx_page_data_data_type_code",
        "idx_image_page_id",
        "idx_link_from_page",
        "idx_link_to_page",
    } <= indexes
    pk = insp.get_pk_constraint("link", schema="crawldb")
    assert pk["constrained_columns"] == ["from_page", "to_page"]


# -- the writer ----------------------------------------------------------------------------
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


def test_robots_txt_is_read_back_for_the_workers_that_take_a_host_over(engine: Engine) -> None:
    from govsi.store.schema import utcnow

    w = CrawlWriter(engine)
    now = utcnow()
    w.add(RobotsFile("a.gov.si", "User-agent: *\nDisallow: /x\n", 200, now))
    w.add(RobotsFile("b.gov.si", None, 404, now))  # none: everything allowed
    w.add(RobotsFile("old.gov.si", "User-agent: *\n", 200, now - timedelta(days=2)))
    w.add(RobotsFile("legacy.gov.si", "User-agent: *\n"))  # from before the status was kept
    w.add(DiscoveredPage("http://c.gov.si/", 0))  # a site whose robots.txt nobody fetched
    assert w.flush()
    hosts = ["a.gov.si", "b.gov.si", "c.gov.si", "old.gov.si", "legacy.gov.si", "d.gov.si"]
    got = CrawlReader(engine).robots_of_hosts(hosts, max_age=24 * 3600)
    assert sorted(got) == ["a.gov.si", "b.gov.si"]
    assert (got["a.gov.si"].status, got["a.gov.si"].content) == (
        200,
        "User-agent: *\nDisallow: /x\n",
    )
    assert (got["b.gov.si"].status, got["b.gov.si"].content) == (404, None)
    assert all(0 <= r.age < 60 for r in got.values())
    rules = stored_outcome("a.gov.si", 200, got["a.gov.si"].content, "http://a.gov.si/robots.txt")
    assert not rules.rules.allowed("http://a.gov.si/x", "govsi-crawler")
    assert rules.rules.allowed("http://a.gov.si/y", "govsi-crawler") and rules.error is None


def test_empty_tables_keeps_lookups(engine: Engine) -> None:
    w = CrawlWriter(engine)
    w.add(
        FetchedPage(
            "http://a.gov.si/", 0, "HTML", T, 200, html_content="x", links=["http://a.gov.si/1"]
        )
    )
    assert w.flush()
    database.empty_tables(engine)
    assert q(engine, "SELECT count(*) FROM page") == [(0,)]
    assert q(engine, "SELECT count(*) FROM page_type") == [(6,)]


def test_spills_are_replayed_oldest_first_and_removed(engine: Engine, tmp_path: Path) -> None:
    older = CrawlWriter(engine)
    older.add(DiscoveredPage("http://a.gov.si/", 0))
    first = older.spill(tmp_path)
    newer = CrawlWriter(engine)
    # The later file records the fetch of the page the earlier one discovered.
    newer.add(FetchedPage("http://a.gov.si/", 0, "HTML", T, 200, html_content="x"))
    second = newer.spill(tmp_path)
    assert spill_files(tmp_path) == [first, second]
    assert replay_spills(tmp_path, CrawlWriter(engine)) == 2
    assert spill_files(tmp_path) == []
    assert q(engine, "SELECT page_type_code FROM page") == [("HTML",)]


def test_a_spill_stays_when_crawldb_is_still_away(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    w = CrawlWriter(engine)
    w.add(DiscoveredPage("http://a.gov.si/", 0))
    path = w.spill(tmp_path)
    down = CrawlWriter(engine, retries=0)

    def broken(conn, batch):  # type: ignore[no-untyped-def]
        raise OperationalError("INSERT", {}, Exception("connection refused"))

    monkeypatch.setattr(down, "_apply", broken)
    with pytest.raises(RuntimeError):
        replay_spills(tmp_path, down)
    assert spill_files(tmp_path) == [path]


def test_fresh_start_sets_spills_aside(engine: Engine, tmp_path: Path) -> None:
    w = CrawlWriter(engine)
    w.add(DiscoveredPage("http://a.gov.si/", 0))
    w.spill(tmp_path)
    moved = set_spills_aside(tmp_path)
    assert spill_files(tmp_path) == [] and len(moved) == 1 and moved[0].exists()


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


# -- spill files ---------------------------------------------------------------------------
def _spill(tmp_path: Path, crawl_id: str, n: int = 3) -> Path:
    items = [DiscoveredPage(f"http://a.gov.si/{i}", 1) for i in range(n)]
    return save_spill(tmp_path, items, crawl_id)


def test_a_spill_file_is_private_whole_and_names_its_crawldb(tmp_path: Path) -> None:
    path = _spill(tmp_path, "crawl-1")
    assert path.stat().st_mode & 0o777 == 0o600
    assert [p.name for p in tmp_path.iterdir()] == [path.name]  # no temporary left
    header = path.read_text().splitlines()[0]
    assert '"crawl_id": "crawl-1"' in header


def test_spill_of_another_crawldb_is_refused_and_kept(
    engine: Engine, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = _spill(tmp_path, "some-other-crawl")
    mine = schema.crawl_id(engine)
    assert replay_spills(tmp_path, CrawlWriter(engine), mine) == 0
    assert path.exists()
    assert "belongs to another crawldb (crawl some-other-crawl" in caplog.text
    assert q(engine, "SELECT count(*) FROM page") == [(0,)]
    ours = _spill(tmp_path, mine)
    assert replay_spills(tmp_path, CrawlWriter(engine), mine) == 3
    assert not ours.exists() and path.exists()


def test_a_damaged_line_loses_that_line_only(
    engine: Engine, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = _spill(tmp_path, "c", n=4)
    lines = path.read_text().splitlines()
    lines[2] = lines[2][:-7] + "#garbage"
    # ...and the file was cut short in the middle of its last line.
    path.write_text("\n".join(lines[:-1]) + "\n" + lines[-1][: len(lines[-1]) // 2])
    assert replay(path, CrawlWriter(engine), "c") == 2
    assert sorted(u for (u,) in q(engine, "SELECT url FROM page")) == [
        "http://a.gov.si/0", "http://a.gov.si/2",
    ]  # fmt: skip
    assert caplog.text.count("damaged, skipped") == 2


def test_processes_starting_together_load_each_spill_once(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = _spill(tmp_path, "c"), _spill(tmp_path, "c")
    # The other process claims the second file between our listing and our claim.
    real = Path.rename

    def racing(self: Path, target: Any) -> Any:
        if self == second and ".claimed-" in str(target):
            real(second, second.with_name(second.name + ".claimed-999999"))
            raise FileNotFoundError(self)
        return real(self, target)

    monkeypatch.setattr(Path, "rename", racing)
    assert replay_spills(tmp_path, CrawlWriter(engine), "c") == 3
    assert not first.exists()


def test_a_claim_left_by_a_dead_process_is_taken_up(engine: Engine, tmp_path: Path) -> None:
    path = _spill(tmp_path, "c")
    path.rename(path.with_name(path.name + ".claimed-4194999"))  # no such process
    assert replay_spills(tmp_path, CrawlWriter(engine), "c") == 3
    assert list(tmp_path.glob("crawldb-unwritten-*")) == []


def test_spill_folder_is_never_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    assert default_spill_dir(f"sqlite:///{tmp_path}/x/crawldb.sqlite3") == tmp_path / "x"
    assert default_spill_dir("postgresql+psycopg2://u:p@h/db") == tmp_path / "state" / "govsi"
    monkeypatch.delenv("XDG_STATE_HOME")
    assert default_spill_dir("postgresql://h/db") == Path.home() / ".local/state/govsi"


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


# -- passwords are never shown ---------------------------------------------------------------
# Every password below is SECRET, so that a case that leaks any of it fails.
SECRET = "s3cr3t"
UNPARSABLE = "<unparsable URL>"
# (the URL as configured, as display_url shows it)
SHOWN_URLS = [
    # A password in the userinfo, as SQLAlchemy has always hidden it.
    ("postgresql+psycopg2://u:s3cr3t@h/db", "postgresql+psycopg2://u:***@h/db"),
    ("postgresql://u:s3cr3t@h:5433/db", "postgresql://u:***@h:5433/db"),
    ("postgresql://u:s3cr3t@[::1]:5432/db", "postgresql://u:***@[::1]:5432/db"),
    ("postgresql://u:@h/db", "postgresql://u:***@h/db"),
    # A password in the query: any key holding "password", in any case, every value.
    ("postgresql+psycopg2://u@h/db?password=s3cr3t", "postgresql+psycopg2://u@h/db?password=***"),
    ("postgresql://u@h/db?sslmode=require&PassWord=s3cr3t",
     "postgresql://u@h/db?sslmode=require&PassWord=***"),
    ("postgresql://h/db?sslpassword=s3cr3t", "postgresql://h/db?sslpassword=***"),
    ("postgresql://h/db?PGPASSWORD=s3cr3t&passwordfile=s3cr3t&connect_timeout=5",
     "postgresql://h/db?PGPASSWORD=***&passwordfile=***&connect_timeout=5"),
    ("postgresql://h/db?db-password=s3cr3t", "postgresql://h/db?db-password=***"),
    ("postgresql://h/db?pass%77ord=s3cr3t", "postgresql://h/db?password=***"),
    ("postgresql://h/db?password=s3cr3t&password=s3cr3t",
     "postgresql://h/db?password=***&password=***"),
    ("postgresql://u:s3cr3t@h/db?password=s3cr3t&application_name=crawl%20one",
     "postgresql://u:***@h/db?password=***&application_name=crawl%20one"),
    ("postgresql://h/db?password=it's-s3cr3t&x=1", "postgresql://h/db?password=***&x=1"),
    # Characters a password should have had percent-encoded: all of it is still hidden.
    ("postgresql://u:a@s3cr3t@h/db", "postgresql://u:***@h/db"),
    ("postgresql://u:a/s3cr3t@h/db", "postgresql://u:***@h/db"),
    # No password: shown as configured.
    ("postgresql://u@h:5432/db", "postgresql://u@h:5432/db"),
    ("postgresql://u@/db?host=/var/run/postgresql", "postgresql://u@/db?host=/var/run/postgresql"),
    ("postgresql://u@h/db?sslmode=require&application_name=govsi",
     "postgresql://u@h/db?sslmode=require&application_name=govsi"),
    ("sqlite:///crawldb.sqlite3", "sqlite:///crawldb.sqlite3"),
    ("sqlite:////tmp/x/crawldb.sqlite3", "sqlite:////tmp/x/crawldb.sqlite3"),
    ("sqlite:////tmp/me@work/crawl:1.sqlite3", "sqlite:////tmp/me@work/crawl:1.sqlite3"),
    ("sqlite:///file.db?mode=ro&uri=true", "sqlite:///file.db?mode=ro&uri=true"),
    ("sqlite:///:memory:", "sqlite:///:memory:"),
    ("sqlite://", "sqlite://"),
    # Malformed: never an exception, and nothing of the URL, whose parts cannot be told.
    ("not a url", UNPARSABLE),
    ("", UNPARSABLE),
    ("postgresql://u:s3cr3t@h:port/db", UNPARSABLE),
    ("postgresql//u:s3cr3t@h/db", UNPARSABLE),
    ("postgresql://u:s3cr3t@[::1/db", UNPARSABLE),
]  # fmt: skip


@pytest.mark.parametrize(("url", "shown"), SHOWN_URLS)
def test_a_crawldb_url_is_shown_without_its_password(url: str, shown: str) -> None:
    assert database.display_url(url) == shown
    if shown != UNPARSABLE:
        # The engine's URL object, as the crawl and the report pass it.
        assert database.display_url(make_url(url)) == shown


# A URL in a log line: a settings dict as Scrapy prints them (a Python literal, in either
# quote, then more settings), and a plain message.
LOG_LINES = [
    "Overridden settings:\n{{'CRAWLDB_URL': '{}',\n 'LOG_LEVEL': 'INFO'}}",
    "Overridden settings:\n{{'CRAWLDB_URL': \"{}\",\n 'LOG_LEVEL': 'INFO'}}",
    "crawldb at {} (from the environment)",
]


@pytest.mark.parametrize(("url", "shown"), SHOWN_URLS)
@pytest.mark.parametrize("template", LOG_LINES)
def test_log_lines_quoting_a_url_hide_its_password(url: str, shown: str, template: str) -> None:
    line = template.format(url)
    hidden = database.hide_passwords(line)
    assert SECRET not in hidden
    assert hidden.endswith(template.format("|").partition("|")[2])  # the rest is kept
    if shown == url:
        assert hidden == line  # nothing to hide: the line is left alone


@pytest.mark.parametrize(
    ("url", "hidden"),
    [
        ("postgresql://u:s3cr3t@h/db?password=s3cr3t",
         "postgresql://u:***@h/db?password=***"),
        ("postgresql://a@b:s3cr3t@h:5432/db", "postgresql://a@b:***@h:5432/db"),
        ("postgresql://h/db?x=1&PassWord=s3cr3t&y=2", "postgresql://h/db?x=1&PassWord=***&y=2"),
        ("https://www.gov.si:443/a?passwords_page=1", "https://www.gov.si:443/a?passwords_page=***"),
        ("https://www.gov.si:443/a?q=x", "https://www.gov.si:443/a?q=x"),
    ],
)  # fmt: skip
def test_log_lines_keep_what_is_not_a_password(url: str, hidden: str) -> None:
    assert database.hide_passwords(f"crawldb at {url} (ok)") == f"crawldb at {hidden} (ok)"


def test_log_lines_quoting_settings_hide_passwords(caplog: pytest.LogCaptureFixture) -> None:
    log = logging.getLogger("test.passwords")
    log.addFilter(database.HidePasswords())
    with caplog.at_level(logging.INFO, logger="test.passwords"):
        log.info(
            "Overridden settings:\n%(s)s",
            {"s": {"CRAWLDB_URL": "postgresql://u:pw@h/d?password=pw2"}},
        )
    assert "pw" not in caplog.text.replace("password", "")
    assert "postgresql://u:***@h/d?password=***" in caplog.text


def test_a_crawls_log_never_shows_the_crawldb_password(
    pg_cluster: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # Trust authentication: PostgreSQL connects whatever the passwords say.
    plain = pg_cluster.create_database("passwords")
    url = plain.replace("govsi@", f"govsi:{SECRET}@") + f"?password={SECRET}&sslpassword={SECRET}"
    project = {k: getattr(govsi_settings, k) for k in dir(govsi_settings) if k.isupper()}
    with caplog.at_level(logging.INFO):
        crawler = get_crawler(GovsiSpider, {**project, "CRAWLDB_URL": url,
                                            "DB_SPILL_DIR": str(tmp_path)})  # fmt: skip
        CrawlStore.from_crawler(crawler).engine.dispose()
    assert "Overridden settings" in caplog.text
    assert SECRET not in caplog.text
    shown = plain.replace("govsi@", "govsi:***@") + "?password=***&sslpassword=***"
    assert f"crawldb at {shown}\n" in caplog.text


def test_postgresql_connections_time_out_and_keep_alive(pg_cluster: Any) -> None:
    engine = database.make_engine(pg_cluster.create_database("timeouts"), connect_timeout=3,
                            statement_timeout=0.5, keepalives_idle=7)  # fmt: skip
    try:
        with engine.connect() as conn:
            assert conn.execute(text("SHOW statement_timeout")).scalar() == "500ms"
            dsn = conn.connection.dbapi_connection.get_dsn_parameters()  # type: ignore[union-attr]
            assert (dsn["connect_timeout"], dsn["keepalives"], dsn["keepalives_idle"]) == (
                "3", "1", "7",
            )  # fmt: skip
        # A statement that hangs (a partitioned or stuck server) fails instead of waiting.
        with pytest.raises(OperationalError, match="statement timeout"), engine.connect() as conn:
            conn.execute(text("SELECT pg_sleep(5)"))
    finally:
        engine.dispose()


def test_one_address_per_host_for_the_whole_crawl(engine: Engine) -> None:
    # Two workers whose DNS answers differ (round-robin): both use the first one stored.
    first, second = CrawlWriter(engine), CrawlWriter(engine)
    assert first.pin_address("www.gov.si", "193.2.1.66") == "193.2.1.66"
    assert second.pin_address("www.gov.si", "193.2.1.67") == "193.2.1.66"
    assert second.pin_address("evem.gov.si", "193.2.1.70") == "193.2.1.70"
    assert q(engine, "SELECT domain, ip_address FROM site ORDER BY domain") == [
        ("evem.gov.si", "193.2.1.70"), ("www.gov.si", "193.2.1.66"),
    ]  # fmt: skip


# -- the writer's buffer ---------------------------------------------------------------------
def _store(tmp_path: Path, **settings: Any) -> Any:
    from scrapy.utils.test import get_crawler

    from govsi.store.extension import CrawlStore

    tmp_path.mkdir(parents=True, exist_ok=True)
    crawler = get_crawler(settings_dict={
        "CRAWLDB_URL": f"sqlite:///{tmp_path / 'buffer.sqlite3'}", "DB_SPILL_DIR": str(tmp_path),
        "DB_BATCH_SIZE": 10_000, **settings,
    })  # fmt: skip
    return CrawlStore.from_crawler(crawler)


def test_a_full_buffer_says_so_and_during_an_outage_goes_to_disk_at_once(tmp_path: Path) -> None:
    store = _store(tmp_path, DB_BUFFER_MAX_ITEMS=5, DB_BUFFER_MAX_BYTES=0)
    for i in range(4):
        store.add(DiscoveredPage(f"http://a.gov.si/{i}", 1))
    assert not store.saturated()
    store.add(DiscoveredPage("http://a.gov.si/4", 1))
    assert store.saturated()  # crawldb slow: the scheduler holds new requests
    store.outage = True
    store.add(DiscoveredPage("http://a.gov.si/5", 1))
    # crawldb away: the whole buffer went to a private spill file, memory is free again.
    assert not store.saturated() and store.writer.pending == []
    (spill,) = tmp_path.glob("crawldb-unwritten-*.jsonl")
    assert len(read_spill(spill)) == 6 and spill.stat().st_mode & 0o777 == 0o600
    # Bytes count too: one large page fills a 1 MB buffer.
    big = _store(tmp_path / "b", DB_BUFFER_MAX_ITEMS=0, DB_BUFFER_MAX_BYTES=2**20)
    big.add(FetchedPage("http://a.gov.si/x", 0, "HTML", T, 200, "text/html", "x" * 2**20))
    assert big.saturated()
