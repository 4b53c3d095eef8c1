"""Politeness, checked where it matters: at the server, from the arrival time of every
request (pages, images, robots.txt alike), per host and per IP address."""

from __future__ import annotations

from collections import defaultdict
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

from testkit.crawl import CrawlRun, query, run_crawl
from testkit.simweb import politeweb
from testkit.simweb.server import Hit, SimWeb

DELAY = 0.5


@pytest.fixture(scope="module")
def polite(tmp_path_factory: Any) -> tuple[CrawlRun, list[Hit], SimWeb, str]:
    web = politeweb.build().start()
    work: Path = tmp_path_factory.mktemp("polite")
    db_url = f"sqlite:///{work / 'crawldb.sqlite3'}"
    try:
        run = run_crawl(
            web,
            db_url,
            work,
            politeweb.SEEDS,
            DEFAULT_CRAWL_DELAY=DELAY,
            ROBOTSTXT_RETRY_TIMES=1,
            ROBOTSTXT_RETRY_DELAY=1,
        )
        assert run.returncode == 0, run.log[-3000:]
        assert "Traceback" not in run.log
        return run, web.requested(), web, db_url
    finally:
        web.stop()


def gaps(times: list[float]) -> list[float]:
    return [b - a for a, b in pairwise(sorted(times))]


def test_no_two_requests_to_one_host_closer_than_its_delay(polite: Any) -> None:
    _, hits, _, _ = polite
    by_host: dict[str, list[float]] = defaultdict(list)
    for h in hits:
        by_host[h.host].append(h.time)
    for host, times in by_host.items():
        delay = politeweb.CRAWL_DELAY if host == "c.gov.si" else DELAY
        assert min(gaps(times), default=delay) >= delay, (host, gaps(times))


def test_no_two_requests_to_one_address_closer_than_the_default_delay(polite: Any) -> None:
    _, hits, web, _ = polite
    by_ip: dict[str, list[float]] = defaultdict(list)
    for h in hits:
        by_ip[web.ip_of(h.host)].append(h.time)
    shared = {web.ip_of("a.gov.si"), web.ip_of("d.gov.si")}
    assert shared <= set(by_ip)
    for ip, times in by_ip.items():
        assert min(gaps(times)) >= DELAY, (ip, gaps(times))


def test_every_allowed_page_once_nothing_forbidden(polite: Any) -> None:
    _, hits, _, db_url = polite
    requested = defaultdict(int)
    for h in hits:
        requested[(h.host, h.target)] += 1
    assert all(n == 1 for key, n in requested.items() if key[0] != "d.gov.si"), requested
    expected = {
        (host, "/" if i == 0 else f"/p{i}")
        for host in ("a.gov.si", "b.gov.si", "c.gov.si", "e.gov.si")
        for i in range(politeweb.PAGES_PER_HOST)
    } - {("a.gov.si", "/p5"), ("e.gov.si", "/p4")}
    expected |= {("b.gov.si", path) for path in politeweb.SITEMAP_ONLY}
    not_pages = ("/robots.txt", "/pravila.txt", "/sitemap.xml", "/sitemap-1.xml.gz")
    pages = {k for k in requested if k[1] not in not_pages}
    assert pages == expected
    forbidden = dict(
        query(db_url, "SELECT url, fetch_error FROM page WHERE page_type_code = 'FRONTIER'")
    )
    assert forbidden["http://a.gov.si/p5"] == "forbidden by robots.txt"
    assert forbidden["http://e.gov.si/p4"] == "forbidden by robots.txt"


def test_a_host_whose_robots_txt_fails_is_not_crawled(polite: Any) -> None:
    _, hits, _, db_url = polite
    d = [h.target for h in hits if h.host == "d.gov.si"]
    assert d == ["/robots.txt", "/robots.txt"]  # the first try and one retry
    rows = query(
        db_url, "SELECT page_type_code, fetch_error FROM page WHERE url = 'http://d.gov.si/'"
    )
    assert rows == [("FRONTIER", "robots.txt unavailable (HTTP 503)")]


def test_site_rows_record_address_and_delay(polite: Any) -> None:
    _, _, web, db_url = polite
    sites = {
        d: (ip, delay)
        for d, ip, delay in query(db_url, "SELECT domain, ip_address, crawl_delay FROM site")
    }
    assert sites["a.gov.si"] == (web.ip_of("a.gov.si"), DELAY)
    assert sites["c.gov.si"] == (web.ip_of("c.gov.si"), politeweb.CRAWL_DELAY)
    assert sites["e.gov.si"][1] == DELAY
    assert sites["e.gov.si"] and sites["d.gov.si"][1] is None


def test_pages_only_in_sitemaps_are_found(polite: Any) -> None:
    _, hits, _, db_url = polite
    b = [h.target for h in hits if h.host == "b.gov.si"]
    # robots.txt, then the index, then its gzipped child, before any page of the host.
    assert b[:3] == ["/robots.txt", "/sitemap.xml", "/sitemap-1.xml.gz"]
    rows = dict(
        query(db_url, "SELECT url, depth FROM page WHERE url LIKE 'http://b.gov.si/skrito%'")
    )
    assert rows == {f"http://b.gov.si{p}": 1 for p in politeweb.SITEMAP_ONLY}
    assert not query(db_url, "SELECT url FROM page WHERE url LIKE '%example.com%'")
    (content,) = query(db_url, "SELECT sitemap_content FROM site WHERE domain = 'b.gov.si'")[0]
    assert "sitemap-1.xml.gz" in content and "/skrito2</loc>" in content


def test_old_robots_rules_are_fetched_again_and_progress_is_logged(tmp_path: Path) -> None:
    web = politeweb.build().start()
    try:
        run = run_crawl(
            web,
            f"sqlite:///{tmp_path / 'crawldb.sqlite3'}",
            tmp_path,
            politeweb.SEEDS,
            DEFAULT_CRAWL_DELAY=DELAY,
            ROBOTSTXT_MAX_AGE=1.2,  # stands in for the 24 hours of a long crawl
            ROBOTSTXT_RETRY_TIMES=0,
            PROGRESS_INTERVAL=1,
        )
        hits = web.requested()
    finally:
        web.stop()
    assert run.returncode == 0, run.log[-3000:]
    a = [h.target for h in hits if h.host == "a.gov.si"]
    # a.gov.si takes about 3 s at 0.5 s a request, so its rules expire on the way.
    assert a.count("/robots.txt") >= 2, a
    assert a[0] == "/robots.txt"
    progress = [line for line in run.log.splitlines() if "progress:" in line]
    assert progress and "pages fetched" in progress[0] and "slowest host" in progress[0]


def test_nofollow_pages_are_not_followed_and_say_so(polite: Any) -> None:
    _, hits, _, db_url = polite
    assert not [h for h in hits if h.target.startswith("/samo-prek")]
    nofollow = dict(query(db_url, "SELECT url, nofollow FROM page WHERE nofollow IS NOT NULL"))
    assert nofollow == {"http://a.gov.si/p1": 1, "http://c.gov.si/p1": 1}
    assert not query(db_url, "SELECT url FROM page WHERE url LIKE '%samo-prek%'")
