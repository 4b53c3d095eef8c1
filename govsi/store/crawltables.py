"""govsi's tables of the crawl itself (``# govsi extension``s, SQLAlchemy Core): which
process serves an address and the processes that worked on crawldb, the feeds and sitemaps
polled, the limits a run reached, facts about the crawl (``crawl_meta``) and its id.
Every table is imported from ``govsi.store.schema``."""

from __future__ import annotations

import uuid

from sqlalchemy import (
    Boolean,
    Column,
    DateTime,
    Engine,
    Float,
    ForeignKey,
    Index,
    Integer,
    PrimaryKeyConstraint,
    String,
    Table,
    Text,
    select,
)
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from govsi.store.metadata import METADATA, SCHEMA

# govsi extension: which crawler process serves an IP address (and so every host on
# it) now, until when, and when a request last reached that address. Several processes
# on one crawldb take addresses from here; see govsi/sharing/leases.py.
IP_LEASE = Table(
    "ip_lease",
    METADATA,
    Column("ip", String(64), primary_key=True),
    Column("worker", String(200), nullable=False),
    # Seconds since the epoch on the database's clock: the one clock all workers share.
    Column("expires_at", Float, nullable=False),
    Column("last_arrival", Float),
    # Given back by its worker (expires_at is then the moment it was given back).
    Column("released", Boolean, nullable=False, default=False),
    # When another worker last asked for it in vain: its holder gives back addresses
    # beyond its share of the work when others want them.
    Column("wanted_at", Float),
)


# govsi extension: the crawler processes that worked on this crawldb (PostgreSQL), one
# row per process run, with its figures as of its last heartbeat. Alive: ``ended_at`` is
# NULL and ``seen_at`` within LEASE_TTL. Times are seconds since the epoch, database clock.
CRAWL_WORKER = Table(
    "crawl_worker",
    METADATA,
    Column("worker", String(200), primary_key=True),
    Column("seen_at", Float, nullable=False),
    # The scrapyd job it ran as (the spider's ``_job`` argument), if any.
    Column("job", String(200)),
    Column("started_at", Float),
    Column("ended_at", Float),
    # Responses it turned into page rows, of them fetch failures, and ERROR log lines.
    Column("pages", Integer),
    Column("fetch_errors", Integer),
    Column("log_errors", Integer),
    # IP addresses it holds a lease on, and the hosts on them it knows.
    Column("addresses", Integer),
    Column("hosts", Integer),
)


# govsi extension: the feeds (RSS, Atom) and sitemaps the crawl polls, each on its own
# interval (FEED_POLL_INTERVAL, SITEMAP_POLL_INTERVAL) with a conditional request from its
# validators (``govsi.responses.feeding``): where it was first found (a page declaring it, or
# robots.txt), its last poll's time, status (NULL: no response; ``poll_error`` says why)
# and entries (read, and new to the crawl), and when it is polled next.
FEED = Table(
    "feed",
    METADATA,
    Column("id", Integer, autoincrement=True, nullable=False),
    Column("site_id", ForeignKey(f"{SCHEMA}.site.id", name="fk_feed_site", ondelete="RESTRICT")),
    Column("url", String(3000), nullable=False),
    Column("kind", String(10), nullable=False),  # items.FeedKind: feed or sitemap
    Column("found_on", String(3000)),
    Column("found_at", DateTime(timezone=False)),
    Column("etag", String(1000)),
    Column("last_modified", String(200)),
    Column("polled_at", DateTime(timezone=False)),
    Column("poll_status", Integer),
    Column("poll_error", Text),
    Column("entries", Integer),
    Column("new_entries", Integer),
    Column("next_poll", DateTime(timezone=False)),
    # Failed polls in a row (0 after a success): the next poll backs off by them.
    Column("failures", Integer, nullable=False, server_default="0"),
    # items.FeedStatus: polled (active), parked (gone), moved (to moved_to), unlisted.
    Column("state", String(10), nullable=False, server_default="active"),
    Column("moved_to", String(3000)),
    # When a page or robots.txt last named it: forgotten FEED_FORGET_AFTER later.
    Column("last_seen", DateTime(timezone=False)),
    PrimaryKeyConstraint("id", name="pk_feed_id"),
    Index("idx_feed_url", "url", unique=True),
    Index("idx_feed_next_poll", "next_poll"),
)


# govsi extension: a limit one crawler run reached, as its stat (``govsi/budget/...``,
# ``govsi/robots/refused/...``, the reactor's longest stall, ...) and the stat's value when
# the run ended (``govsi.store.limits``); ``scrapy report`` shows them.
CRAWL_LIMIT = Table(
    "crawl_limit",
    METADATA,
    Column("run", String(200), primary_key=True),
    Column("name", String(200), primary_key=True),
    Column("value", Float, nullable=False),
    Column("recorded_at", DateTime(timezone=False)),
)


# govsi extension: facts about the crawl this crawldb holds. ``crawl_id`` (a UUID
# made by the first run) names it, so that a spill file is loaded only into the crawldb
# it was written for.
CRAWL_META = Table(
    "crawl_meta",
    METADATA,
    Column("key", String(50), primary_key=True),
    Column("value", String(200), nullable=False),
)


def crawl_id(engine: Engine) -> str:
    """This crawldb's crawl id, made on first use; every process on it reads the same."""
    table = CRAWL_META
    with engine.begin() as conn:
        insert = (sqlite_insert if engine.dialect.name == "sqlite" else pg_insert)(table)
        conn.execute(
            insert.values(key="crawl_id", value=str(uuid.uuid4())).on_conflict_do_nothing()
        )
        value = conn.execute(select(table.c.value).where(table.c.key == "crawl_id")).scalar_one()
    return str(value)
