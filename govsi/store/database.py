"""Opening crawldb: its URL (shown without passwords), the engine, the SQLite lock, and the
schema's migrations (Alembic, under an advisory lock on PostgreSQL); statements kept within
the drivers' bound-parameter limits (``chunks``)."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import importlib.resources
import logging
import os
import re
import socket
import sqlite3
import tempfile
import threading
from collections.abc import Iterator, Sequence
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any
from urllib.parse import quote, unquote

from sqlalchemy import (
    Connection,
    Engine,
    create_engine,
    event,
    text,
)
from sqlalchemy.engine import URL, make_url
from sqlalchemy.engine.interfaces import DBAPIConnection
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.pool import ConnectionPoolEntry, QueuePool

from govsi.store.config import StoreConfig
from govsi.store.schema import DEFAULT_CRAWLDB_URL, SCHEMA

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings

logger = logging.getLogger(__name__)

# Bound parameters per statement stay well under SQLite's and psycopg2's limits.
CHUNK = 500


def chunks(seq: Sequence[Any], size: int = CHUNK) -> Iterator[Sequence[Any]]:
    """``seq`` in slices of ``size``: one statement each, its IN (...) list bounded."""
    for i in range(0, len(seq), size):
        yield seq[i : i + size]


def display_url(url: str | URL | Any) -> str:
    """A crawldb URL fit for logs and reports: the password hidden, whether it is in the
    userinfo (``u:secret@host``) or the query (``?password=secret``, ``sslpassword=``, any
    parameter whose name contains "password", in any case). Never raises: what cannot be
    parsed is shown as ``<unparsable URL>``, since its parts cannot be told apart."""
    try:
        parsed = url if isinstance(url, URL) else make_url(str(url))
        if parsed.password is not None and parsed.host and "@" in parsed.host:
            # SQLAlchemy ends the password at its first "@", so the rest of one typed with
            # a raw "@" (meant as %40) would be shown as part of the host.
            parsed = parsed.set(host=parsed.host.rpartition("@")[2])
        shown = parsed.set(query={}).render_as_string(hide_password=True)
        # By hand, not render_as_string: that sorts the keys and percent-encodes "***".
        pairs = [
            f"{quote(key, safe='')}="
            + ("***" if _is_password(key) else quote(value, safe=_SHOWN_AS_IS))
            for key, values in parsed.query.items()
            for value in ((values,) if isinstance(values, str) else values)
        ]
        return shown + ("?" + "&".join(pairs) if pairs else "")
    except Exception:  # a display helper must not take the crawl down
        return "<unparsable URL>"


# Query values shown as typed (a socket folder "/var/run/postgresql" stays readable); "&",
# "=", "@", space and the like are percent-encoded so that the parts stay apart.
_SHOWN_AS_IS = "/:,"


def _is_password(key: str) -> bool:
    return "password" in unquote(key).lower()


# The userinfo as SQLAlchemy reads it: the user up to ":" (it may hold "@"), the password
# up to "@" (it may hold "/"); then any further "@"-ended parts before the path, which
# are the rest of a password typed with a raw "@". After "//", not "://", so that a
# mistyped scheme ("postgresql//u:pw@h") is masked too. Hiding too much beats showing any.
_USERINFO_PASSWORD = re.compile(r"(//[^:/\s]*:)[^@\s]*@(?:[^/@\s]*@)*")
# A query parameter: its value runs to "&", white space or the end of the text, or to a
# quote that closes it (log lines quote settings as Python literals, and a password may
# hold a quote of the other kind).
_QUERY_PARAM = re.compile(r"""([?&])([^=&?#\s'"]+)=[^&\s]*?(?=&|\s|$|['"](?:[\s,:)\]}]|$))""")


def hide_passwords(text: str) -> str:
    """``text`` with every URL's password masked (userinfo and query), for log lines that
    quote settings. Scrapy's "Overridden settings" line lists only Scrapy's own settings
    today, not CRAWLDB_URL; this keeps a password out should one get there."""
    if "//" not in text:
        return text
    text = _USERINFO_PASSWORD.sub(r"\1***@", text)
    return _QUERY_PARAM.sub(lambda m: f"{m[1]}{m[2]}=***" if _is_password(m[2]) else m[0], text)


class HidePasswords(logging.Filter):
    """A logging filter that masks URL passwords in a record's message."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        hidden = hide_passwords(message)
        if hidden != message:
            record.msg, record.args = hidden, None
        return True


def disk_full(error: BaseException) -> bool:
    """``error`` says a disk is full: an OSError, or the words SQLite, PostgreSQL or
    Tantivy put it in (they turn it into errors of their own)."""
    if isinstance(error, OSError) and error.errno in (errno.ENOSPC, errno.EDQUOT):
        return True
    text = str(error)
    return "No space left on device" in text or "database or disk is full" in text


def resolve_crawldb_url(setting: str | None) -> str:
    """An explicit setting first, then the environment (where passwords belong)."""
    return setting or os.environ.get("CRAWLDB_URL") or DEFAULT_CRAWLDB_URL


def crawldb_url_of(settings: BaseSettings) -> str:
    """The crawldb a command or extension run with ``settings`` works on: CRAWLDB_URL
    (``resolve_crawldb_url``)."""
    return resolve_crawldb_url(StoreConfig.from_settings(settings).crawldb_url)


def is_sqlite(url: str) -> bool:
    return url.startswith("sqlite")


def in_memory(url: str) -> bool:
    """An SQLite crawldb that lives in its process's memory only (``sqlite://``)."""
    path = make_url(url).database
    return is_sqlite(url) and (not path or path == ":memory:")


class CrawldbInUse(RuntimeError):
    """An SQLite crawldb another crawl process is using."""


def lock_sqlite(url: str) -> IO[bytes] | None:
    """Hold the SQLite crawldb for this process (until the returned file is closed or the
    process ends), or raise CrawldbInUse. SQLite crawls are single-process: two writers
    would each queue and fetch the same pages. None for PostgreSQL and in-memory SQLite."""
    if not is_sqlite(url) or in_memory(url):
        return None
    path = make_url(url).database
    lock = open(f"{path}.lock", "a+b")  # noqa: SIM115 - held for the crawl's lifetime
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        lock.seek(0)
        holder = lock.read().decode(errors="replace").strip() or "another process"
        lock.close()
        raise CrawldbInUse(
            f"{path} is in use by another crawl ({holder}). An SQLite crawldb serves one "
            "crawler process; to run several on one crawl, use PostgreSQL (CRAWLDB_URL)."
        ) from None
    lock.truncate(0)
    lock.write(f"pid {os.getpid()} on {socket.gethostname()}".encode())
    lock.flush()
    return lock


class NoCrawldb(RuntimeError):
    """A command that only reads crawldb found no SQLite file where it looked."""


def reading_engine(url: str) -> Engine:
    """An engine for a command that only reads crawldb (report, search, serve, index,
    warc pack). It never creates or changes an SQLite file: a missing one raises
    ``NoCrawldb``, the file is opened read-only (``mode=ro``) with no pragmas, and the
    journal mode stays the crawl's. PostgreSQL sessions are read-only
    (``default_transaction_read_only``)."""
    if not is_sqlite(url):
        return make_engine(url, read_only=True)
    path = make_url(url).database
    if not path or path == ":memory:":
        raise NoCrawldb("an in-memory crawldb lives in its crawl's process only")
    if not Path(path).is_file():
        raise NoCrawldb(f"no crawldb at {path} (set CRAWLDB_URL, or run a crawl first)")
    uri = f"file:{quote(str(Path(path).resolve()))}?mode=ro"
    return create_engine(
        "sqlite://",
        creator=lambda: sqlite3.connect(uri, uri=True, timeout=30, check_same_thread=False),
        # A file's pool, as make_engine's (``sqlite://`` alone would mean one per thread).
        poolclass=QueuePool,
        execution_options={"schema_translate_map": {SCHEMA: None}},
    )


def make_engine(
    url: str,
    connect_timeout: float = 10.0,
    statement_timeout: float = 0.0,
    keepalives_idle: int = 10,
    read_only: bool = False,
) -> Engine:
    """The crawldb engine. On PostgreSQL every connection has a connect timeout, a
    statement timeout and TCP keepalives, so that a partitioned database fails a round in
    seconds instead of hanging it for the kernel's minutes (the lease keeper depends on
    hearing back). SQLite waits up to 30 s for a lock. ``read_only``: PostgreSQL sessions
    that refuse writes (``reading_engine``)."""
    if is_sqlite(url):
        engine = create_engine(
            url,
            execution_options={"schema_translate_map": {SCHEMA: None}},
            connect_args={"timeout": 30},
        )

        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_conn: DBAPIConnection, _record: ConnectionPoolEntry) -> None:
            cur = dbapi_conn.cursor()
            # FKs are off by default in SQLite; WAL lets readers query a running crawl.
            cur.execute("PRAGMA foreign_keys=ON")
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA synchronous=NORMAL")
            cur.close()

        return engine
    # search_path lets the same unqualified SQL run on both back ends.
    options = f"-c search_path={SCHEMA},public"
    if statement_timeout > 0:
        options += f" -c statement_timeout={int(statement_timeout * 1000)}"
    if read_only:
        options += " -c default_transaction_read_only=on"
    connect_args: dict[str, Any] = {"options": options}
    if connect_timeout > 0:
        connect_args["connect_timeout"] = max(1, round(connect_timeout))
    if keepalives_idle > 0:
        connect_args.update(keepalives=1, keepalives_idle=keepalives_idle,
                            keepalives_interval=max(1, keepalives_idle // 2),
                            keepalives_count=3)  # fmt: skip
    return create_engine(url, pool_pre_ping=True, connect_args=connect_args)


def alter_schema(conn: Connection) -> str | None:
    """The schema a migration's ALTER statements must name: none on SQLite, which has no
    schemas; crawldb on PostgreSQL (ALTER does not pass through the engine's
    schema_translate_map as CREATE TABLE does)."""
    return None if conn.dialect.name == "sqlite" else SCHEMA


# The advisory lock key schema migrations run under ("govm").
MIGRATE_LOCK = 0x676F766D


def migrations_dir() -> Path:
    """Alembic's script directory: govsi/store/migrations, or, when govsi is imported from a
    zipped egg (scrapyd), a copy of it extracted to a temporary directory."""
    here = Path(__file__).with_name("migrations")
    if here.is_dir():
        return here
    target = Path(tempfile.mkdtemp(prefix="govsi-migrations-")) / "migrations"

    def copy(node: Traversable, to: Path) -> None:
        to.mkdir(parents=True, exist_ok=True)
        for child in node.iterdir():
            if child.is_dir():
                if child.name != "__pycache__":
                    copy(child, to / child.name)
            else:
                (to / child.name).write_bytes(child.read_bytes())

    copy(importlib.resources.files("govsi.store") / "migrations", target)
    return target


# The newest revision in migrations/versions (a test holds it to Alembic's head): a schema
# already there is recognised without loading Alembic. Every crawler process but the first
# on a crawldb, and every resumed crawl, finds it there.
HEAD_REVISION = "0021"

# The longest reason a failed upgrade sends back from its process.
_REASON_CHARS = 4000


def schema_revision(engine: Engine) -> str | None:
    """The Alembic revision crawldb's schema is at; None before it has one. A database that
    cannot be reached raises, as any other use of it would."""
    table = "alembic_version" if is_sqlite(str(engine.url)) else f"{SCHEMA}.alembic_version"
    with engine.connect() as conn:
        try:
            found = conn.execute(text(f"SELECT version_num FROM {table}")).scalar()
        except SQLAlchemyError:  # no such table (or schema) yet
            return None
    return None if found is None else str(found)


def migrate(engine: Engine) -> None:
    """Bring the schema to the newest Alembic revision (creates it on first run).

    A schema at ``HEAD_REVISION`` costs one query. Otherwise Alembic runs in a forked copy
    of this process, so that its modules (with Mako and Pygments; bench/README) never stay in a
    crawl's memory; a failure there raises ``RuntimeError`` with its reason. Where a fork
    would not be safe (other threads running, which the copy would lack mid-work) or could
    not reach the database (SQLite in memory), it runs here.
    """
    if schema_revision(engine) == HEAD_REVISION:
        return
    if in_memory(str(engine.url)) or threading.active_count() > 1:
        upgrade(engine)
    else:
        _upgrade_forked(engine)


def upgrade(engine: Engine) -> None:
    """Alembic's upgrade to head, in this process."""
    from alembic import command
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(migrations_dir()))
    with engine.begin() as conn:
        if not is_sqlite(str(engine.url)):
            # Crawler processes starting together on one new database: one migrates, the
            # others wait for it and then find the schema at head.
            conn.execute(text(f"SELECT pg_advisory_xact_lock({MIGRATE_LOCK})"))
            conn.execute(text(f"CREATE SCHEMA IF NOT EXISTS {SCHEMA}"))
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "head")


def _upgrade_forked(engine: Engine) -> None:
    reader, writer = os.pipe()
    pid = os.fork()
    if pid == 0:  # the copy: the engine's settings, none of the parent's connections
        os.close(reader)
        code = 1
        try:
            engine.dispose(close=False)
            upgrade(engine)
            code = 0
        except BaseException as e:  # every failure goes back as its reason
            reason = hide_passwords(f"{type(e).__name__}: {e}")[:_REASON_CHARS]
            with contextlib.suppress(OSError):
                os.write(writer, reason.encode(errors="replace"))
        finally:
            # No exit handlers, no flushing of buffers: they are the parent's.
            os._exit(code)
    os.close(writer)
    with os.fdopen(reader, "rb") as pipe:
        reason = pipe.read(_REASON_CHARS * 4).decode(errors="replace")
    _, status = os.waitpid(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(
            f"crawldb's schema could not be brought up to date: {reason or 'its process died'}"
        )


def empty_tables(engine: Engine) -> None:
    """FRESH_START: drop the crawl's rows but keep the schema and the lookup rows."""
    with engine.begin() as conn:
        # A new crawl_id too: spill files of the emptied crawl belong to it, not to this one.
        # Versions before the contents they point at, both before their pages.
        # page_change's id sequence is not restarted: Atom feeds name their entries by it.
        tables = ("crawl_meta", "crawl_worker", "ip_lease", "page_lsh", "link", "image",
                  "page_data", "page_text", "page_version", "page_version_content",
                  "warc_capture", "page_change")  # fmt: skip
        for table in tables:
            conn.execute(text(f"DELETE FROM {table}"))
        # Duplicates point at their originals: drop those references before the rows.
        conn.execute(text("UPDATE page SET duplicate_of = NULL"))
        for table in ("page", "site"):
            conn.execute(text(f"DELETE FROM {table}"))
        if not is_sqlite(str(engine.url)):
            for table in ("site", "page", "page_data", "image"):
                conn.execute(text(f"ALTER SEQUENCE {SCHEMA}.{table}_id_seq RESTART WITH 1"))
