"""Fetching robots.txt (``govsi.robots.fetching``): what each outcome of the request means
for the host (RFC 9309 §2.3.1), and what is stored; no crawl, responses built by hand."""

from __future__ import annotations

from typing import Any

import pytest
from scrapy import Request
from scrapy.http import Response
from twisted.internet.error import ConnectionRefusedError
from twisted.python.failure import Failure

from govsi.items import RobotsFile
from govsi.requestmeta import KIND_ROBOTS, META_HOST, META_KIND, META_REDIRECTS
from govsi.robots.fetching import (
    MAX_REDIRECTS,
    RobotsFetcher,
    RobotsOutcome,
    robots_url_for,
    stored_outcome,
)

HOST = "a.gov.si"
URL = "https://a.gov.si/robots.txt"
RULES = b"User-agent: *\nDisallow: /zasebno/\nSitemap: https://a.gov.si/sitemap.xml\n"


class Fetch:
    def __init__(self) -> None:
        self.outcomes: list[RobotsOutcome] = []
        self.fetcher = RobotsFetcher(self.outcomes.append, lambda url: ".gov.si/" in url)

    def answer(
        self, status: int, body: bytes = b"", location: str | None = None, request: Any = None
    ) -> list[Any]:
        request = request or self.fetcher.request(HOST, URL)
        headers = {"Location": location} if location else {}
        response = Response(request.url, status=status, body=body, headers=headers, request=request)
        return list(self.fetcher._response(response))


def allowed(outcome: RobotsOutcome, path: str) -> bool:
    return outcome.rules.allowed(f"https://a.gov.si{path}", "govsi-crawler")


def test_the_request_is_the_hosts_own_and_bypasses_scrapys_robots_and_retries() -> None:
    request = RobotsFetcher(lambda o: None).request(HOST, URL)
    assert request.url == URL and request.dont_filter
    assert request.meta[META_KIND] == KIND_ROBOTS and request.meta[META_HOST] == HOST
    assert request.meta[META_REDIRECTS] == 0
    assert request.meta["dont_retry"] and request.meta["dont_obey_robotstxt"]


@pytest.mark.parametrize(
    ("status", "body", "error", "public", "private", "stored"),
    [
        (200, RULES, None, True, False, RULES.decode()),  # rules as written
        (404, b"", None, True, True, None),  # no robots.txt: everything allowed
        (403, b"", None, True, True, None),  # 4xx: "unavailable", allow all (2.3.1.3)
        (503, b"", "HTTP 503", False, False, "not stored"),  # not now: nothing (2.3.1.4)
        (500, b"", "HTTP 500", False, False, "not stored"),
        (429, b"", "HTTP 429", False, False, "not stored"),  # slow down, not "no rules"
    ],
)
def test_what_each_status_means(
    status: int, body: bytes, error: str | None, public: bool, private: bool, stored: Any
) -> None:
    f = Fetch()
    yielded = f.answer(status, body)
    [outcome] = f.outcomes
    assert (outcome.host, outcome.error) == (HOST, error)
    assert allowed(outcome, "/javno") is public and allowed(outcome, "/zasebno/x") is private
    files = [y for y in yielded if isinstance(y, RobotsFile)]
    if stored == "not stored":
        assert files == []  # a temporary failure is retried, never recorded as the file
    else:
        [record] = files
        assert (record.host, record.status, record.content) == (HOST, status, stored)
        assert record.fetched_at is not None


def test_rules_list_their_sitemaps() -> None:
    f = Fetch()
    f.answer(200, RULES)
    assert f.outcomes[0].rules.sitemaps == ["https://a.gov.si/sitemap.xml"]


def test_a_redirect_is_followed_as_a_new_robots_request_of_the_same_host() -> None:
    f = Fetch()
    [follow] = f.answer(301, location="/robots-new.txt")
    assert isinstance(follow, Request) and follow.url == "https://a.gov.si/robots-new.txt"
    assert follow.meta[META_HOST] == HOST and follow.meta[META_REDIRECTS] == 1
    assert f.outcomes == []  # the outcome is the redirect target's
    f.answer(200, RULES, request=follow)
    assert not allowed(f.outcomes[0], "/zasebno/x")


def test_after_five_redirects_robots_txt_counts_as_absent() -> None:
    f = Fetch()
    request = f.fetcher.request(HOST, URL, redirects=MAX_REDIRECTS)
    yielded = f.answer(302, location="/again.txt", request=request)
    assert not any(isinstance(y, Request) for y in yielded)
    [outcome] = f.outcomes
    assert outcome.error is None and allowed(outcome, "/zasebno/x")  # 2.3.1.2: allow all


def test_a_redirect_out_of_scope_is_not_followed() -> None:
    f = Fetch()
    yielded = f.answer(301, location="https://example.com/robots.txt")
    assert not any(isinstance(y, Request) for y in yielded)
    assert len(f.outcomes) == 1


def test_an_unreachable_host_is_not_now_and_says_why() -> None:
    f = Fetch()
    request = f.fetcher.request(HOST, URL)
    failure = Failure(ConnectionRefusedError("refused"))
    failure.request = request  # type: ignore[attr-defined]  (as Scrapy's errback gets it)
    f.fetcher._failure(failure)
    [outcome] = f.outcomes
    assert outcome.error is not None and "ConnectionRefusedError" in outcome.error
    assert not allowed(outcome, "/javno")


def test_a_body_with_nul_bytes_is_stored_without_them() -> None:
    f = Fetch()
    [record] = [
        y for y in f.answer(200, b"User-agent: *\x00\nDisallow: /x\n") if isinstance(y, RobotsFile)
    ]
    assert record.content is not None and "\x00" not in record.content


@pytest.mark.parametrize(
    ("status", "content", "public", "private"),
    [
        (200, RULES.decode(), True, False),
        (404, None, True, True),
        (410, None, True, True),
    ],
)
def test_a_stored_robots_txt_reads_as_the_fetch_did(
    status: int, content: str | None, public: bool, private: bool
) -> None:
    outcome = stored_outcome(HOST, status, content, URL)
    assert outcome.error is None
    assert allowed(outcome, "/javno") is public and allowed(outcome, "/zasebno/x") is private


@pytest.mark.parametrize(
    ("url", "robots"),
    [
        ("https://a.gov.si/stran?x=1#y", "https://a.gov.si/robots.txt"),
        ("http://a.gov.si:8080/a/b", "http://a.gov.si:8080/robots.txt"),
        ("HTTPS://A.GOV.SI/", "https://a.gov.si/robots.txt"),
    ],
)
def test_where_robots_txt_lives(url: str, robots: str) -> None:
    assert robots_url_for(url) == robots
