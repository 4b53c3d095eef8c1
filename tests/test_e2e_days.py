"""End-to-end over several simulated days (``testkit.simweb.newsweb``): three sites crawled
once a day with the default settings (REVISIT=due), crawldb's clock moved a day forward
between runs (``testkit.clock.move_clock``), a new item published each day on a news
list with a feed and on one without. Three hours after the day-2 run, a run reads the feed
and the sitemap again, which name a page each that no list links to.

Judged at the servers: every new page is stored by the next day's run; a page that never
changes is not asked for before its next visit; the three-hour run stores the feed's and the
sitemap's new pages; every picture due in a round (shown on a page the round visited) is
asked for in it; no two requests to a host or an address closer than the delay. A last run
with REVISIT_WAIT stays open for a page whose next visit comes after it went idle."""

from __future__ import annotations

import os
import signal
import time
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from itertools import pairwise
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from sqlalchemy import update

from govsi.store.database import make_engine
from govsi.store.schema import PAGE, utcnow
from testkit.clock import move_clock
from testkit.crawl import CrawlRun, query, run_crawl, start_crawl
from testkit.simweb import newsweb
from testkit.simweb.expected import E2E_SETTINGS
from testkit.simweb.newsweb import A, N, U
from testkit.simweb.server import Hit, SimWeb

DELAY = 0.2
SETTINGS = {**E2E_SETTINGS, "DEFAULT_CRAWL_DELAY": DELAY}
DAYS = 3  # days after the first crawl: four daily runs
BETWEEN_AFTER = 2  # the three-hour run follows this day's
BETWEEN = timedelta(hours=3)  # past FEED_POLL_INTERVAL and SITEMAP_POLL_INTERVAL (defaults)
MIN_INTERVAL = timedelta(days=1)  # REVISIT_MIN_INTERVAL's default
WAITED_PAGE = (A, "/o-agenciji")  # the REVISIT_WAIT run's page, due after it went idle
WAIT_DUE_IN = 10.0  # seconds after the run's start
Key = tuple[str, str]


def key(url: str) -> Key:
    parts = urlsplit(url)
    return parts.hostname or "", parts.path


@dataclass
class Run:
    name: str
    hits: list[Hit]
    published: set[Key]  # new pages published since the previous run
    not_due: set[Key]  # steady pages whose next visit was still to come as the run began
    stored_before: set[Key]  # pages and pictures crawldb held as the run began
    stored: set[Key]  # HTML pages crawldb holds after it
    crawl: CrawlRun

    def asked(self) -> set[Key]:
        return {(h.host, h.target) for h in self.hits}


@dataclass
class Days:
    web: SimWeb
    db_url: str
    runs: list[Run] = field(default_factory=list)

    def daily(self) -> list[Run]:
        return [r for r in self.runs if r.name.startswith("day")]

    def between(self) -> Run:
        return next(r for r in self.runs if r.name.startswith("3 h"))


def _stored(db_url: str) -> set[Key]:
    pages = query(db_url, "SELECT url FROM page WHERE page_type_code = 'HTML'")
    return {key(u) for (u,) in pages}


def _stored_all(db_url: str) -> set[Key]:
    pages = query(db_url, "SELECT url FROM page WHERE page_type_code NOT IN ('FRONTIER')")
    images = query(db_url, "SELECT url FROM image WHERE accessed_time IS NOT NULL")
    return {key(u) for (u,) in pages + images}


def _not_due(db_url: str) -> set[Key]:
    """Steady pages the schedule does not make due now: next visit still to come, or
    visited within the minimum interval."""
    now = utcnow()
    steady = {(h, p) for h, paths in newsweb.STEADY.items() for p in paths}
    out = set()
    for url, next_visit, accessed in query(
        db_url, "SELECT url, next_visit, accessed_time FROM page"
    ):
        k = key(url)
        if k not in steady:
            continue
        visit = _when(next_visit)
        last = _when(accessed)
        if (visit is not None and visit > now) or (last is not None and last > now - MIN_INTERVAL):
            out.add(k)
    return out


def _when(value: object) -> datetime | None:
    if value is None or isinstance(value, datetime):
        return value
    return datetime.fromisoformat(str(value))


@pytest.fixture(scope="module")
def days(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Days]:
    work: Path = tmp_path_factory.mktemp("days")
    db_url = f"sqlite:///{work / 'crawldb.sqlite3'}"
    web = newsweb.build().start()
    out = Days(web, db_url)
    first_pages = {(h, p) for h, paths in newsweb.STEADY.items() for p in paths}

    def crawl(name: str, published: set[Key]) -> None:
        first = not out.runs  # crawldb is made by the first run
        not_due = set() if first else _not_due(db_url)
        before = set() if first else _stored_all(db_url)
        web.reset_log()
        run = run_crawl(web, db_url, work / name.replace(" ", "-"), newsweb.SEEDS, **SETTINGS)
        assert run.returncode == 0, run.log[-3000:]
        assert "Traceback" not in run.log, run.log[-5000:]
        out.runs.append(
            Run(name, web.requested(), published, not_due, before, _stored(db_url), run)
        )

    try:
        crawl("day 0", first_pages)
        for day in range(1, DAYS + 1):
            # A day after the previous day's run (the three-hour run's hours included).
            since = BETWEEN if day == BETWEEN_AFTER + 1 else timedelta(0)
            move_clock(db_url, timedelta(days=1) - since)
            crawl(f"day {day}", newsweb.publish(web, day))
            if day == BETWEEN_AFTER:
                move_clock(db_url, BETWEEN)
                crawl("3 h later", newsweb.publish_between(web))
        yield out
    finally:
        web.stop()


def test_every_new_page_is_stored_by_the_next_days_run(days: Days) -> None:
    for run in days.daily():
        missing = run.published - run.stored
        assert not missing, (run.name, missing)
    # The lists were read again each day (the pages are reached through them).
    for run in days.daily()[1:]:
        assert {(N, "/novice/"), (U, "/obvestila/")} <= run.asked(), run.name


def test_pages_that_never_change_are_not_asked_for_before_their_next_visit(days: Days) -> None:
    checked = 0
    for run in days.runs[1:]:
        early = run.not_due & run.asked()
        assert not early, (run.name, early)
        checked += len(run.not_due)
    # Not a test that cannot fail: steady pages were not due on some runs.
    assert checked


def test_a_run_three_hours_later_reads_feed_and_sitemap_and_stores_their_new_pages(
    days: Days,
) -> None:
    run = days.between()
    asked = run.asked()
    assert (N, newsweb.FEED) in asked and (A, newsweb.SITEMAP) in asked
    assert run.published == {newsweb.ONLY_IN_FEED, newsweb.ONLY_IN_SITEMAP}
    assert run.published <= run.stored
    # Nothing else was due: no news list, no steady page.
    pages = {k for k in asked if not k[1].startswith("/slike/")}
    assert pages - {(N, newsweb.FEED), (A, newsweb.SITEMAP)} - run.published <= {
        (h, "/robots.txt") for h in (N, U, A)
    }, pages


def test_a_due_round_asks_for_every_due_picture(days: Days) -> None:
    checked = 0
    for run in days.daily()[1:]:
        asked = run.asked()
        visited = {(h.host, h.target) for h in run.hits if h.status in (200, 304)}
        due = set()
        for host, path in visited:
            if path.startswith("/slike/") or path == "/robots.txt":
                continue
            due |= newsweb.pictures_on(days.web, host, path) & run.stored_before
        missing = due - asked
        assert not missing, (run.name, missing)
        checked += len(due)
    assert checked


def test_no_request_closer_than_its_hosts_or_its_addresss_delay(days: Days) -> None:
    for run in days.runs:
        by_host: dict[str, list[float]] = defaultdict(list)
        by_ip: dict[str, list[float]] = defaultdict(list)
        for h in run.hits:
            by_host[h.host].append(h.time)
            by_ip[days.web.ip_of(h.host)].append(h.time)
        for name, times in [*by_host.items(), *by_ip.items()]:
            gaps = [b - a for a, b in pairwise(sorted(times))]
            assert min(gaps, default=DELAY) >= DELAY, (run.name, name)


def _due_in(db_url: str, page: Key, seconds: float) -> None:
    """``page`` last visited two days ago, its next visit ``seconds`` from now."""
    now = utcnow()
    engine = make_engine(db_url)
    try:
        with engine.begin() as conn:
            conn.execute(
                update(PAGE)
                .where(PAGE.c.url == f"http://{page[0]}{page[1]}")
                .values(
                    accessed_time=now - 2 * MIN_INTERVAL,
                    next_visit=now + timedelta(seconds=seconds),
                )
            )
    finally:
        engine.dispose()


def test_revisit_wait_keeps_the_crawl_open_for_the_next_due_visit(
    days: Days, tmp_path: Path
) -> None:
    """REVISIT_WAIT: a page whose next visit comes seconds after the crawl went idle is
    asked for by the same run, which then ends (the next due poll is an hour away)."""
    host, path = WAITED_PAGE
    _due_in(days.db_url, WAITED_PAGE, WAIT_DUE_IN)
    days.web.reset_log()
    run = run_crawl(days.web, days.db_url, tmp_path, newsweb.SEEDS, **SETTINGS, REVISIT_WAIT=120)
    assert run.returncode == 0, run.log[-3000:]
    assert "Traceback" not in run.log, run.log[-5000:]
    assert (host, path) in {(h.host, h.target) for h in days.web.requested()}
    assert int(run.stats.get("govsi/revisit/wait/woken", 0)) >= 1  # type: ignore[call-overload]


def test_a_crawl_waiting_for_its_next_due_visit_stops_at_once_on_sigint(
    days: Days, tmp_path: Path
) -> None:
    _due_in(days.db_url, (U, "/storitve"), 600)
    crawl = start_crawl(days.web, days.db_url, tmp_path, newsweb.SEEDS, **SETTINGS,
                        REVISIT_WAIT=3600)  # fmt: skip
    log = tmp_path / "crawl.log"
    deadline = time.monotonic() + 120
    while "REVISIT_WAIT: nothing to do" not in (log.read_text() if log.exists() else ""):
        assert time.monotonic() < deadline and crawl.proc.poll() is None, "it never waited"
        time.sleep(0.2)
    os.kill(crawl.proc.pid, signal.SIGINT)
    # Well before the page falls due (600 s): the wait holds only the idle close.
    run = crawl.wait(timeout=120)
    assert run.returncode == 0, run.log[-3000:]
    assert run.stats.get("finish_reason") == "shutdown"
    assert (U, "/storitve") not in {(h.host, h.target) for h in days.web.requested()}
