"""The spider's feed part without a crawl: which stored feeds and sitemaps a run polls,
what a conditional poll sends, which declared feeds are requested (once per run, not
before their next poll, at their new URL when they moved) and recorded as named, what a
poll records (its back-off after failures, parking), and redirects followed or refused."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta
from typing import Any

import pytest
from scrapy.http import HtmlResponse, Request
from sqlalchemy import Engine

from govsi.items import FeedState, RobotsFile
from govsi.requestmeta import (
    KIND_SITEMAP,
    META_FEED,
    META_FEED_HOPS,
    META_KIND,
    META_SITE,
    META_URL,
)
from govsi.responses.feeding import FeedPolling
from govsi.responses.feedpolicy import FeedPolls
from govsi.responses.sitemapping import SitemapLimits, Sitemaps
from govsi.store.feeds import StoredFeed
from govsi.store.writer import CrawlWriter

NOW = datetime(2026, 11, 29, 12, 0)
HOUR = timedelta(hours=1)
PAGE = "https://www.gov.si/novice/"
F1, F2, F3 = (f"https://www.gov.si/rss{i}" for i in (1, 2, 3))
MAP = "https://www.gov.si/sitemap.xml"
GONE, OLD, UNLISTED = (f"https://www.gov.si/{p}" for p in ("gone", "old-rss", "old.xml"))
STORED = {
    F1: StoredFeed(F1, "feed", '"e1"', "Sun, 29 Nov 2026 10:00:00 GMT", NOW - HOUR),  # due
    F2: StoredFeed(F2, "feed", None, None, NOW + HOUR),  # not yet
    MAP: StoredFeed(MAP, "sitemap", '"s"', None, None),  # never polled: due
    # Failing: two failures in a row, due.
    F3: StoredFeed(F3, "feed", None, None, NOW - HOUR, failures=2, found_on=PAGE),
    # Parked, its time come: polled; moved, unlisted: never.
    GONE: StoredFeed(GONE, "feed", None, None, NOW - HOUR, 3, "gone"),
    OLD: StoredFeed(OLD, "feed", None, None, None, 0, "moved", F1, PAGE),
    UNLISTED: StoredFeed(UNLISTED, "sitemap", None, None, None, 0, "unlisted"),
}


def admit(url: str) -> str | None:
    """In scope: gov.si; canonical: the host lower-cased."""
    return url.replace("WWW.", "www.") if ".gov.si/" in url.lower() else None


def polling(follow: bool = True, repoll: bool = True,
            recorded: list[FeedState] | None = None) -> FeedPolling:  # fmt: skip
    def page_request(url: str, depth: int) -> Request:
        return Request(url, meta={"depth": depth})

    part = FeedPolling(
        FeedPolls(follow, 3600.0, 7200.0, repoll), worker=None,  # type: ignore[arg-type]
        count=lambda key, n=1: None, admit=admit, is_new=lambda url: True,
        page_request=page_request, failure_reason=lambda failure: "?", clock=lambda: NOW,
        record=(recorded if recorded is not None else []).append,
    )  # fmt: skip
    part.open(dict(STORED))
    return part


@pytest.mark.parametrize(
    ("follow", "repoll", "due"),
    [(True, True, {F1, F3, GONE, MAP}), (False, True, {MAP}), (True, False, set())],
)
def test_which_stored_feeds_a_run_polls(follow: bool, repoll: bool, due: set[str]) -> None:
    assert {row.url for row in polling(follow, repoll).due()} == due


@pytest.mark.parametrize(
    ("url", "headers"),
    [
        (F1, {"If-None-Match": '"e1"', "If-Modified-Since": "Sun, 29 Nov 2026 10:00:00 GMT"}),
        (F2, {}),
        (MAP, {"If-None-Match": '"s"'}),
        ("https://www.gov.si/new", {}),
    ],
)
def test_a_poll_sends_the_stored_validators_verbatim(url: str, headers: dict[str, str]) -> None:
    assert polling().headers(url) == headers


def test_declared_feeds_are_requested_once_per_run_and_not_before_their_next_poll() -> None:
    recorded: list[FeedState] = []
    part = polling(recorded=recorded)
    new = "https://www.gov.si/rss-new"
    requests = list(part.declared(PAGE, [F1, F2, new]))
    assert [r.url for r in requests] == [F1, new]  # F2's next poll has not come
    assert requests[0].headers.get("If-None-Match") == b'"e1"'
    assert requests[1].meta[META_FEED] == ("feed", PAGE)
    assert requests[1].meta[META_KIND] == KIND_SITEMAP  # read whole, as a sitemap is
    assert list(part.declared("https://www.gov.si/other", [new])) == []  # once per run
    assert list(polling(follow=False).declared(PAGE, [new])) == []
    # Each stored one named once per run (its row's last_seen), due or not; a new one's
    # row comes with its poll.
    assert [(r.url, r.found_on, r.seen_at, r.polled_at) for r in recorded] == [
        (F1, PAGE, NOW, None), (F2, PAGE, NOW, None)]  # fmt: skip


def test_a_feed_that_moved_is_asked_for_at_its_new_url() -> None:
    recorded: list[FeedState] = []
    requests = list(polling(recorded=recorded).declared(PAGE, [OLD]))
    assert [r.url for r in requests] == [F1]
    assert [r.url for r in recorded] == [OLD, F1]  # both named: neither forgotten


def response(status: int, url: str = F1, hops: list[tuple[str, int]] | None = None,
             **headers: str) -> HtmlResponse:  # fmt: skip
    meta: dict[str, Any] = {META_URL: url, META_FEED: ("feed", PAGE), META_SITE: "www.gov.si",
                            META_FEED_HOPS: hops or []}  # fmt: skip
    request = Request(url, meta=meta)
    return HtmlResponse(url, status=status, headers=headers, body=b"", request=request)


@pytest.mark.parametrize(
    ("status", "headers", "etag"),
    [(200, {"ETag": '"e2"'}, '"e2"'), (304, {}, None), (200, {"ETag": "x\x01y"}, None)],
)
def test_a_polls_record(status: int, headers: dict[str, str], etag: str | None) -> None:
    [state] = polling().records.polled(response(status, **headers), 5, 2)
    assert (state.url, state.kind, state.found_on) == (F1, "feed", PAGE)
    assert (state.failures, state.state) == (0, "active")
    assert (state.status, state.etag, state.entries, state.new_entries) == (status, etag, 5, 2)
    assert state.polled_at == NOW and state.next_poll == NOW + HOUR


@pytest.mark.parametrize(
    ("url", "status", "entries", "error", "failures", "state", "wait"),
    [
        (F3, 200, 4, None, 0, "active", HOUR),  # a success resets the back-off
        (F3, 500, 0, None, 3, "active", 8 * HOUR),
        (F3, 200, 0, "not a sitemap", 3, "active", 8 * HOUR),  # an HTML page
        (F3, 404, 0, None, 3, "gone", timedelta(days=60)),  # the third 404 in a row parks it
        (F1, 503, 0, None, 1, "active", 2 * HOUR),
        (GONE, 200, 2, None, 0, "active", HOUR),  # back from parking
    ],
)  # fmt: skip
def test_a_failing_feed_backs_off(url: str, status: int, entries: int, error: str | None,
                                  failures: int, state: str, wait: timedelta) -> None:  # fmt: skip
    [record] = polling().records.polled(response(status, url), entries, 0, error)
    assert (record.failures, record.state, record.next_poll) == (failures, state, NOW + wait)


def test_a_poll_without_an_answer_backs_off_on_the_row_polled() -> None:
    request = Request(F1, meta={META_URL: F1, META_FEED: ("feed", PAGE),
                                META_FEED_HOPS: [(F3, 302)]})  # fmt: skip
    record = polling().records.poll_failed(request, "TimeoutError")
    assert (record.url, record.status, record.error) == (F3, None, "TimeoutError")
    assert (record.failures, record.next_poll) == (3, NOW + 8 * HOUR)


def redirect(status: int, location: str, url: str = F1,
             hops: list[tuple[str, int]] | None = None) -> list[Any]:  # fmt: skip
    part = polling()
    part.take(F1)  # polled in this run already
    return part.redirected(
        response(status, url, hops, Location=location),
        lambda target, hops: part.request(target, "www.gov.si", "feed", PAGE, hops),
    )


@pytest.mark.parametrize(
    ("status", "location", "url", "hops", "followed", "error"),
    [
        (301, "/novice/rss", F1, None, ("https://www.gov.si/novice/rss", [(F1, 301)]), None),
        (302, "https://WWW.gov.si/x", F2, [(F1, 308)], ("https://www.gov.si/x",
                                                         [(F1, 308), (F2, 302)]), None),
        (301, "https://example.com/rss", F2, None, None,
         "redirect out of scope: https://example.com/rss"),
        (308, F2, F3, [(F2, 301)], None, f"redirect loop: {F2}"),
        (302, F1, F2, None, None, f"redirect to {F1}: not requested again in this run"),
        (307, "", F2, None, None, "redirect without a usable Location"),
    ],
)  # fmt: skip
def test_a_feeds_redirects(status: int, location: str, url: str,
                           hops: list[tuple[str, int]] | None,
                           followed: tuple[str, list[tuple[str, int]]] | None,
                           error: str | None) -> None:  # fmt: skip
    [out] = redirect(status, location, url, hops)
    if followed is not None:
        assert isinstance(out, Request)
        assert (out.url, out.meta[META_FEED_HOPS]) == followed
        assert out.meta[META_FEED] == ("feed", PAGE)
    else:
        assert isinstance(out, FeedState)
        origin = (hops or [(url, status)])[0][0]
        assert (out.url, out.status, out.error) == (origin, status, error)
        assert out.failures == 1 and out.next_poll == NOW + 2 * HOUR


def test_a_feed_moved_to_one_read_in_this_run_already_is_moved_not_failed() -> None:
    [out] = redirect(301, F1, F2)
    assert isinstance(out, FeedState)
    assert (out.url, out.state, out.moved_to, out.status, out.error) == (
        F2, "moved", F1, 301, None)  # fmt: skip


def test_a_feed_moved_for_good_is_recorded_at_its_new_url() -> None:
    new = "https://www.gov.si/novice/rss"
    records = polling().records.polled(response(200, new, [(F1, 301), (F2, 308)], ETag='"n"'), 3, 1)
    assert [(r.url, r.state, r.moved_to, r.status) for r in records] == [
        (new, "active", None, 200), (F1, "moved", new, 301), (F2, "moved", new, 308)]
    assert records[0].etag == '"n"' and records[0].found_on == PAGE and records[0].seen_at == NOW


def test_a_temporary_redirect_records_the_poll_on_the_url_polled() -> None:
    [record] = polling().records.polled(response(200, F2, [(F1, 301), (F3, 302)]), 3, 1)
    assert (record.url, record.state, record.entries) == (F1, "active", 3)


def test_a_run_polls_only_the_sitemaps_robots_txt_still_lists(engine: Engine) -> None:
    robots = "https://www.gov.si/robots.txt"
    w = CrawlWriter(engine)
    w.add(RobotsFile("www.gov.si", f"User-agent: *\nSitemap: {MAP}\n", 200, NOW))
    dropped = "https://www.gov.si/sitemap-old.xml"
    for url in (MAP, dropped):
        w.add(FeedState(url, "www.gov.si", "sitemap", robots, seen_at=NOW))
    # Named by no page for 61 days: forgotten as the run starts.
    w.add(FeedState(F3, "www.gov.si", "feed", PAGE, seen_at=NOW - timedelta(days=61)))
    w.flush()
    recorded: list[FeedState] = []
    part = polling(recorded=recorded)
    assert [row.url for row in part.start(engine)] == [MAP]
    assert [(r.url, r.state) for r in recorded] == [(dropped, "unlisted")]
    assert F3 not in part.stored


def sitemaps_part(recorded: list[FeedState]) -> Sitemaps:
    polls = polling(recorded=recorded)
    polls.stored[OLD_MAP] = StoredFeed(OLD_MAP, "sitemap", None, None, None, 0, "moved", MAP)
    return Sitemaps(
        SitemapLimits(100, 10, 0), worker=None, count=lambda key, n=1: None,  # type: ignore[arg-type]
        max_size=2**20, admit=admit, page_request=lambda url, depth: Request(url),
        failure_reason=lambda failure: "?", polls=polls,
    )  # fmt: skip


OLD_MAP = "https://www.gov.si/old-sitemap.xml"


def test_a_sitemap_robots_txt_names_is_asked_for_where_it_moved() -> None:
    recorded: list[FeedState] = []
    part = sitemaps_part(recorded)
    robots = "https://www.gov.si/robots.txt"
    request = part.request(OLD_MAP, "www.gov.si", robots)
    assert request is not None and request.url == MAP
    assert request.headers.get("If-None-Match") == b'"s"'  # the new row's validators
    assert {(r.url, r.found_on) for r in recorded} == {(OLD_MAP, robots), (MAP, robots)}


def test_a_sitemaps_redirect_is_followed_within_scope() -> None:
    part = sitemaps_part([])
    moved = "https://www.gov.si/sitemap_index.xml"
    meta: dict[str, Any] = {META_URL: MAP, META_FEED: ("sitemap", None), META_SITE: "www.gov.si",
                            META_FEED_HOPS: []}  # fmt: skip
    answer = HtmlResponse(MAP, status=308, headers={"Location": "/sitemap_index.xml"},
                          body=b"", request=Request(MAP, meta=meta))  # fmt: skip
    [out] = asyncio.run(part.parse(answer))
    assert isinstance(out, Request)
    assert (out.url, out.meta[META_FEED_HOPS]) == (moved, [(MAP, 308)])
    away = answer.replace(headers={"Location": "https://example.com/s.xml"})
    [record] = asyncio.run(part.parse(away))
    assert isinstance(record, FeedState) and record.failures == 1
    assert record.error == "redirect out of scope: https://example.com/s.xml"
