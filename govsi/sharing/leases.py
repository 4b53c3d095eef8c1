"""Leases on IP addresses: how several crawler processes share one crawl politely.

A process (a *worker*) fetches from an address only while it holds that address's lease in
crawldb's ``ip_lease`` table, so no two workers ever ask one address (nor any host on it)
at once, and the per-host and per-address delays each worker keeps hold for the crawl as a
whole. A lease runs out ``ttl`` seconds after its last renewal: a worker that dies loses
its addresses after that and the others take them over. The row keeps when a request last
reached the address, so the next holder waits out the delay; after a lease merely ran out,
the last request may have come after the last renewal, so the next holder counts the delay
from the moment it took over.

Times are seconds since the epoch on the database server's clock, the one clock all
workers share; ``govsi.sharing.keeper`` converts them to the worker's own monotonic clock.

PostgreSQL only: an SQLite crawldb serves one process (``govsi.store.database.lock_sqlite``), which
needs no leases.
"""

from __future__ import annotations

import os
import socket
import time
from dataclasses import asdict, dataclass

from sqlalchemy import Connection, text

__all__ = [
    "CHANNEL",
    "FREE",
    "WANT",
    "Grant",
    "WorkerReport",
    "acquire",
    "db_now",
    "goodbye",
    "heartbeat",
    "live_elsewhere",
    "live_leases",
    "notify",
    "parse_notice",
    "release",
    "renew",
    "wanted_by_others",
    "worker_id",
]

_NOW = "EXTRACT(EPOCH FROM clock_timestamp())::float8"


@dataclass(frozen=True)
class Grant:
    ip: str
    # When a request last reached the address, on the database clock (None: never, as
    # far as crawldb knows).
    last_arrival: float | None
    expires_at: float
    # Another worker held it before: pages on it may have been fetched there.
    handed_over: bool = False


def db_now(conn: Connection) -> float:
    return float(conn.execute(text(f"SELECT {_NOW}")).scalar_one())


def acquire(conn: Connection, ip: str, worker: str, ttl: float) -> Grant | None:
    """Take the address's lease if it is free, given back, run out, or ours already.
    Run inside a transaction: the row is locked while deciding."""
    row = conn.execute(
        text(
            f"SELECT worker, expires_at, last_arrival, released, {_NOW} "
            "FROM crawldb.ip_lease WHERE ip = :ip FOR UPDATE"
        ),
        {"ip": ip},
    ).first()
    if row is None:
        inserted = conn.execute(
            text(
                "INSERT INTO crawldb.ip_lease (ip, worker, expires_at, released) "
                f"VALUES (:ip, :w, {_NOW} + :ttl, false) "
                "ON CONFLICT (ip) DO NOTHING RETURNING expires_at"
            ),
            {"ip": ip, "w": worker, "ttl": ttl},
        ).first()
        return None if inserted is None else Grant(ip, None, float(inserted[0]))
    holder, expires_at, last_arrival, released, now = row
    if holder != worker and not released and expires_at > now:
        conn.execute(
            text("UPDATE crawldb.ip_lease SET wanted_at = :now WHERE ip = :ip"),
            {"now": now, "ip": ip},
        )
        notify(conn, WANT, ip)
        return None
    if holder != worker and not released:
        # Ran out: its holder may have sent a request after its last renewal.
        last_arrival = now
    conn.execute(
        text(
            "UPDATE crawldb.ip_lease SET worker = :w, expires_at = :exp, released = false, "
            "last_arrival = :la, wanted_at = NULL WHERE ip = :ip"
        ),
        {"w": worker, "exp": now + ttl, "la": last_arrival, "ip": ip},
    )
    return Grant(ip, last_arrival, now + ttl, handed_over=holder != worker)


def renew(
    conn: Connection, worker: str, arrivals: dict[str, float | None], ttl: float
) -> dict[str, float]:
    """Extend the worker's leases on these addresses and record their last arrivals;
    returns the new expiry of each lease still held (one that ran out and was taken by
    another worker is missing)."""
    held: dict[str, float] = {}
    for ip, arrival in arrivals.items():
        row = conn.execute(
            text(
                f"UPDATE crawldb.ip_lease SET expires_at = {_NOW} + :ttl, "
                "last_arrival = GREATEST(last_arrival, :la) "
                "WHERE ip = :ip AND worker = :w AND NOT released RETURNING expires_at"
            ),
            {"ttl": ttl, "la": arrival, "ip": ip, "w": worker},
        ).first()
        if row is not None:
            held[ip] = float(row[0])
    return held


def release(conn: Connection, worker: str, arrivals: dict[str, float | None]) -> None:
    """Give the leases back, with when a request last reached each address, so the next
    holder waits only what the delay still asks."""
    for ip, arrival in arrivals.items():
        freed = conn.execute(
            text(
                f"UPDATE crawldb.ip_lease SET released = true, expires_at = {_NOW}, "
                "last_arrival = GREATEST(last_arrival, :la) WHERE ip = :ip AND worker = :w "
                "RETURNING wanted_at"
            ),
            {"la": arrival, "ip": ip, "w": worker},
        ).first()
        if freed is not None and freed[0] is not None:
            notify(conn, FREE, ip)  # someone asked for it: it may take it now


# Notifications on CHANNEL (delivered when the transaction commits): a worker asked for an
# address another holds (WANT), or an address someone asked for was given back (FREE). The
# holder and the waiting worker act on them at once instead of at their next round.
CHANNEL = "govsi_leases"
WANT, FREE = "want", "free"


def notify(conn: Connection, kind: str, ip: str) -> None:
    conn.execute(text("SELECT pg_notify(:c, :m)"), {"c": CHANNEL, "m": f"{kind} {ip}"})


def parse_notice(payload: str) -> tuple[str, str] | None:
    """(kind, ip) of a notification's payload; None for anything else on the channel."""
    kind, _, ip = payload.partition(" ")
    return (kind, ip) if kind in (WANT, FREE) and ip else None


def live_elsewhere(conn: Connection, worker: str) -> int:
    """Leases other workers hold now: while there are any, the crawl is not over (they
    may still find pages for everyone)."""
    return int(
        conn.execute(
            text(
                "SELECT count(*) FROM crawldb.ip_lease "
                f"WHERE worker <> :w AND NOT released AND expires_at > {_NOW}"
            ),
            {"w": worker},
        ).scalar_one()
    )


@dataclass(frozen=True)
class WorkerReport:
    """A worker's figures, written with each heartbeat (``crawl_worker``)."""

    job: str | None = None
    pages: int = 0
    fetch_errors: int = 0
    log_errors: int = 0
    addresses: int = 0
    hosts: int = 0


_REPORT = ", ".join(f"{f} = :{f}" for f in WorkerReport.__dataclass_fields__)


def _record(conn: Connection, worker: str, report: WorkerReport | None, ended: bool) -> None:
    """The worker's row: seen now (and ended now), with its figures when given."""
    conn.execute(
        text(
            f"INSERT INTO crawldb.crawl_worker (worker, seen_at, started_at) "
            f"VALUES (:w, {_NOW}, {_NOW}) ON CONFLICT (worker) DO NOTHING"
        ),
        {"w": worker},
    )
    sets = f"seen_at = {_NOW}" + (f", ended_at = {_NOW}" if ended else "")
    sets += f", {_REPORT}" if report else ""
    params = {"w": worker, **(asdict(report) if report else {})}
    conn.execute(text(f"UPDATE crawldb.crawl_worker SET {sets} WHERE worker = :w"), params)


def heartbeat(conn: Connection, worker: str, ttl: float, report: WorkerReport | None = None) -> int:
    """Say this worker is alive (with its figures); returns how many are (seen within
    ``ttl`` and not ended)."""
    _record(conn, worker, report, ended=False)
    return int(
        conn.execute(
            text(
                "SELECT count(*) FROM crawldb.crawl_worker "
                f"WHERE seen_at > {_NOW} - :ttl AND ended_at IS NULL"
            ),
            {"ttl": ttl},
        ).scalar_one()
    )


def goodbye(conn: Connection, worker: str, report: WorkerReport | None = None) -> None:
    """The worker has ended: its row stays, with its final figures."""
    _record(conn, worker, report, ended=True)


def live_leases(conn: Connection) -> set[str]:
    """The addresses any worker holds a lease on now."""
    return set(
        conn.execute(
            text(f"SELECT ip FROM crawldb.ip_lease WHERE NOT released AND expires_at > {_NOW}")
        ).scalars()
    )


def wanted_by_others(conn: Connection, worker: str, ttl: float) -> set[str]:
    """The worker's addresses another worker asked for within ``ttl``."""
    return set(
        conn.execute(
            text(
                "SELECT ip FROM crawldb.ip_lease WHERE worker = :w AND NOT released "
                f"AND wanted_at > {_NOW} - :ttl"
            ),
            {"w": worker, "ttl": ttl},
        ).scalars()
    )


def worker_id() -> str:
    """This process's name in ip_lease: host, pid and start time (a restarted process
    with a recycled pid is someone else)."""
    return f"{socket.gethostname()}:{os.getpid()}:{time.time():.0f}"
