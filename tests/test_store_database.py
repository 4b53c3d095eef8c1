"""crawldb's engine and upkeep (govsi.store.database): migrating twice, emptying the tables,
connections that time out, and passwords that are never shown, in URLs nor in log lines."""

from __future__ import annotations

import logging
import subprocess
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from scrapy.utils.test import get_crawler
from sqlalchemy import Engine, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import OperationalError

from govsi import settings as govsi_settings
from govsi.items import FetchedPage, WarcCapture
from govsi.spiders.govsi import GovsiSpider
from govsi.store import database
from govsi.store.extension import CrawlStore
from govsi.store.writer import CrawlWriter
from testkit.crawldb import T, q
from testkit.imports import loaded_after


def test_migrate_twice_is_harmless(engine: Engine) -> None:
    database.migrate(engine)
    assert len(q(engine, "SELECT code FROM data_type")) == 5


def test_empty_tables_keeps_lookups(engine: Engine) -> None:
    w = CrawlWriter(engine)
    w.add(
        FetchedPage(
            "http://a.gov.si/", 0, "HTML", T, 200, html_content="x", links=["http://a.gov.si/1"],
            content_hash="k1",
        )
    )
    assert w.flush()
    # Rows that reference pages: an earlier version with its HTML, a WARC capture.
    w.add(FetchedPage("http://a.gov.si/", 0, "HTML", T + timedelta(days=1), 200,
                      html_content="y", content_hash="k2"))  # fmt: skip
    w.add(WarcCapture("http://a.gov.si/", 0, "a.warc.gz", 0, 10, "<urn:uuid:1>", "response"))
    assert w.flush()
    assert q(engine, "SELECT count(*) FROM page_version_content") == [(1,)]
    database.empty_tables(engine)
    assert q(engine, "SELECT count(*) FROM page") == [(0,)]
    assert q(engine, "SELECT count(*) FROM page_type") == [(6,)]
    for table in ("page_version", "page_version_content", "warc_capture", "page_change"):
        assert q(engine, f"SELECT count(*) FROM {table}") == [(0,)]


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


def test_head_revision_is_alembics_head(engine: Engine) -> None:
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    cfg = Config()
    cfg.set_main_option("script_location", str(database.migrations_dir()))
    assert ScriptDirectory.from_config(cfg).get_current_head() == database.HEAD_REVISION
    assert database.schema_revision(engine) == database.HEAD_REVISION


def test_a_schema_at_head_is_recognised_without_alembic(engine: Engine) -> None:
    code = (
        "from govsi.store import database;"
        f"database.migrate(database.make_engine({engine.url.render_as_string(False)!r}))"
    )
    assert loaded_after(code, ["alembic", "mako"]) == []


def test_no_schema_yet_has_no_revision(tmp_path: Path) -> None:
    fresh = database.make_engine(f"sqlite:///{tmp_path / 'new.sqlite3'}")
    assert database.schema_revision(fresh) is None
    database.migrate(fresh)
    assert database.schema_revision(fresh) == database.HEAD_REVISION


def _migrate_in_a_new_process(url: str, before: str = "") -> list[str]:
    code = (
        "import threading; from govsi.store import database;"
        f"{before}"
        f"engine = database.make_engine({url!r}); database.migrate(engine);"
        "assert database.schema_revision(engine) == database.HEAD_REVISION"
    )
    return loaded_after(code, ["alembic", "mako"])


def test_a_new_schema_is_made_without_loading_alembic_here(
    request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    # SQLite and PostgreSQL: Alembic runs in a forked copy of the process.
    assert _migrate_in_a_new_process(f"sqlite:///{tmp_path / 'new.sqlite3'}") == []
    url = request.getfixturevalue("pg_cluster").create_database("forked_migration")
    assert _migrate_in_a_new_process(url) == []


def test_with_other_threads_running_the_schema_is_made_here(tmp_path: Path) -> None:
    # A fork copies only the calling thread: with others running it is not safe.
    busy = "threading.Thread(target=__import__('time').sleep, args=(5,), daemon=True).start();"
    url = f"sqlite:///{tmp_path / 'new.sqlite3'}"
    assert _migrate_in_a_new_process(url, before=busy) == ["alembic", "mako"]


def test_a_failed_upgrade_raises_with_its_reason(tmp_path: Path) -> None:
    path = tmp_path / "odd.sqlite3"
    with database.make_engine(f"sqlite:///{path}").begin() as conn:
        conn.execute(text("CREATE TABLE alembic_version (version_num VARCHAR(32) NOT NULL)"))
        conn.execute(text("INSERT INTO alembic_version VALUES ('9999')"))
    code = (
        "from govsi.store import database;"
        f"database.migrate(database.make_engine('sqlite:///{path}'))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("RuntimeError: crawldb's schema could not be brought up to date: ")
    assert "9999" in last


def test_an_unreachable_database_raises_as_before(tmp_path: Path) -> None:
    engine = database.make_engine("postgresql://nobody@127.0.0.1:9/none", connect_timeout=1)
    with pytest.raises(OperationalError):
        database.migrate(engine)
