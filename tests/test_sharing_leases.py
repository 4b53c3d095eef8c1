"""Tests for govsi.sharing.leases: one worker per IP address at a time, across processes."""

from __future__ import annotations

import os
import time

import pytest
from sqlalchemy import Engine, text

from govsi.sharing.leases import (
    FREE,
    WANT,
    Grant,
    WorkerReport,
    acquire,
    db_now,
    goodbye,
    heartbeat,
    live_elsewhere,
    live_leases,
    parse_notice,
    release,
    renew,
    worker_id,
)
from govsi.sharing.notices import LeaseNotices

IP = "10.0.0.1"


def take(eng: Engine, worker: str, ip: str = IP, ttl: float = 30.0) -> Grant | None:
    with eng.begin() as conn:
        return acquire(conn, ip, worker, ttl)


def test_a_free_address_is_granted_once(pg: Engine) -> None:
    grant = take(pg, "a")
    assert grant is not None and grant.last_arrival is None and not grant.handed_over
    assert take(pg, "b") is None  # held by a
    again = take(pg, "a")  # a again: still a's, nobody else served it
    assert again is not None and not again.handed_over
    assert take(pg, "b", ip="10.0.0.2") is not None  # another address is free


def test_a_released_lease_passes_on_its_last_arrival(pg: Engine) -> None:
    take(pg, "a")
    with pg.begin() as conn:
        arrival = db_now(conn) - 1.0
        release(conn, "a", {IP: arrival})
    grant = take(pg, "b")
    assert grant is not None and grant.last_arrival == pytest.approx(arrival)
    assert grant.handed_over  # b must learn what a fetched there


def test_a_lease_that_ran_out_counts_the_delay_from_the_takeover(pg: Engine) -> None:
    take(pg, "a", ttl=0.2)
    with pg.begin() as conn:
        renew(conn, "a", {IP: db_now(conn) - 10.0}, ttl=0.2)
    assert take(pg, "b") is None
    time.sleep(0.3)
    with pg.begin() as conn:
        before = db_now(conn)
    grant = take(pg, "b")
    # a may have sent a request after its last renewal: b waits as if one arrived now.
    assert grant is not None and grant.last_arrival is not None
    assert grant.last_arrival >= before


def test_renewal_keeps_a_lease_and_reports_one_lost(pg: Engine) -> None:
    take(pg, "a", ttl=0.2)
    with pg.begin() as conn:
        held = renew(conn, "a", {IP: None}, ttl=30)
        assert set(held) == {IP} and held[IP] > db_now(conn) + 20
    time.sleep(0.3)
    assert take(pg, "b") is None  # renewed: still a's
    take(pg, "c", ip="10.0.0.3", ttl=0.1)
    time.sleep(0.2)
    assert take(pg, "b", ip="10.0.0.3") is not None  # c's ran out; b has it now
    with pg.begin() as conn:
        assert renew(conn, "c", {"10.0.0.3": None}, ttl=30) == {}  # c learns it lost it


def test_live_leases_and_those_of_other_workers(pg: Engine) -> None:
    take(pg, "a")
    take(pg, "b", ip="10.0.0.2")
    take(pg, "c", ip="10.0.0.3", ttl=0.05)
    time.sleep(0.1)
    with pg.begin() as conn:
        assert live_elsewhere(conn, "a") == 1  # b's; c's ran out
        assert live_leases(conn) == {IP, "10.0.0.2"}
        release(conn, "b", {"10.0.0.2": None})
        assert live_elsewhere(conn, "a") == 0
        assert live_leases(conn) == {IP}


def test_heartbeats_count_live_workers_and_keep_their_figures(pg: Engine) -> None:
    with pg.begin() as conn:
        assert heartbeat(conn, "a", ttl=30) == 1
        report = WorkerReport(job="j1", pages=7, fetch_errors=1, log_errors=2, addresses=3, hosts=4)
        assert heartbeat(conn, "b", ttl=30, report=report) == 2
        goodbye(conn, "a", WorkerReport(pages=5))
        assert heartbeat(conn, "b", ttl=30, report=report) == 1  # a has ended
        rows = conn.execute(
            text(
                "SELECT worker, job, pages, fetch_errors, log_errors, addresses, hosts, "
                "ended_at IS NOT NULL, started_at <= seen_at FROM crawldb.crawl_worker "
                "ORDER BY worker"
            )
        ).all()
    # An ended worker's row stays, with its last figures: the crawl's record of who did what.
    assert [tuple(r) for r in rows] == [
        ("a", None, 5, 0, 0, 0, 0, True, True),
        ("b", "j1", 7, 1, 2, 3, 4, False, True),
    ]
    time.sleep(0.1)
    with pg.begin() as conn:
        assert heartbeat(conn, "c", ttl=0.05) == 1  # b was not seen within ttl


def test_racing_workers_never_both_get_an_address(pg: Engine) -> None:
    from concurrent.futures import ThreadPoolExecutor

    def grab(i: int) -> bool:
        return take(pg, f"w{i}", ip="10.9.9.9") is not None

    with ThreadPoolExecutor(8) as pool:
        granted = list(pool.map(grab, range(16)))
    assert sum(granted) == 1


def test_worker_ids_differ_between_processes() -> None:
    wid = worker_id()
    assert wid.count(":") == 2 and str(os.getpid()) in wid


def test_asking_and_giving_back_are_heard_at_once(pg: Engine) -> None:
    # The holder hears that another worker asks; the asker hears when the address it asked
    # for is given back. Nothing is said when nobody asked.
    heard: list[tuple[str, str]] = []
    notices = LeaseNotices(pg, lambda kind, ip: heard.append((kind, ip)), lambda f, *a: f(*a))
    notices.start()
    try:
        deadline = time.monotonic() + 10
        while notices._thread is not None and notices.received == 0:
            # LISTEN is in place once a first notice gets through.
            with pg.begin() as conn:
                conn.execute(text("SELECT pg_notify('govsi_leases', 'want 10.9.0.0')"))
            time.sleep(0.05)
            assert time.monotonic() < deadline
        heard.clear()
        take(pg, "a", ip="10.9.0.1")
        with pg.begin() as conn:
            release(conn, "a", {"10.9.0.1": None})  # nobody asked: silent
        take(pg, "a")
        assert take(pg, "b") is None  # b asks for a's address
        with pg.begin() as conn:
            release(conn, "a", {IP: None})
        deadline = time.monotonic() + 10
        while len(heard) < 2 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert heard == [(WANT, IP), (FREE, IP)]
    finally:
        notices.stop()


@pytest.mark.parametrize(
    ("payload", "notice"),
    [
        ("want 10.0.0.1", (WANT, "10.0.0.1")),
        ("free ::1", (FREE, "::1")),
        ("want", None),
        ("hello 10.0.0.1", None),
        ("", None),
    ],
)
def test_notices_read(payload: str, notice: tuple[str, str] | None) -> None:
    assert parse_notice(payload) == notice
