"""The spider's feed part without a crawl: which stored feeds and sitemaps a run polls,
what a conditional poll sends, which declared feeds are requested (once per run, not
before their next poll), and what a poll records."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest
from scrapy.http import HtmlResponse, Request

from govsi.requestmeta import KIND_SITEMAP, META_FEED, META_KIND, META_URL
from govsi.spiders.config import FeedPolls
from govsi.spiders.feeding import FeedPolling
from govsi.store.feeds import StoredFeed

NOW = datetime(2026, 11, 29, 12, 0)
HOUR = timedelta(hours=1)
PAGE = "https://www.gov.si/novice/"
F1, F2, F3 = (f"https://www.gov.si/rss{i}" for i in (1, 2, 3))
MAP = "https://www.gov.si/sitemap.xml"
STORED = {
    F1: StoredFeed(F1, "feed", '"e1"', "Sun, 29 Nov 2026 10:00:00 GMT", NOW - HOUR),  # due
    F2: StoredFeed(F2, "feed", None, None, NOW + HOUR),  # not yet
    MAP: StoredFeed(MAP, "sitemap", '"s"', None, None),  # never polled: due
}


def polling(follow: bool = True, repoll: bool = True) -> FeedPolling:
    def page_request(url: str, depth: int) -> Request:
        return Request(url, meta={"depth": depth})

    part = FeedPolling(
        FeedPolls(follow, 3600.0, 7200.0, repoll), worker=None,  # type: ignore[arg-type]
        count=lambda key, n=1: None, admit=lambda url: url, is_new=lambda url: True,
        page_request=page_request, failure_reason=lambda failure: "?", clock=lambda: NOW,
    )  # fmt: skip
    part.open(dict(STORED))
    return part


@pytest.mark.parametrize(
    ("follow", "repoll", "due"),
    [(True, True, {F1, MAP}), (False, True, {MAP}), (True, False, set())],
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
    part = polling()
    new = "https://www.gov.si/rss-new"
    requests = list(part.declared(PAGE, [F1, F2, new]))
    assert [r.url for r in requests] == [F1, new]  # F2's next poll has not come
    assert requests[0].headers.get("If-None-Match") == b'"e1"'
    assert requests[1].meta[META_FEED] == ("feed", PAGE)
    assert requests[1].meta[META_KIND] == KIND_SITEMAP  # read whole, as a sitemap is
    assert list(part.declared("https://www.gov.si/other", [new])) == []  # once per run
    assert list(polling(follow=False).declared(PAGE, [new])) == []


def response(status: int, **headers: str) -> HtmlResponse:
    meta: dict[str, Any] = {META_URL: F1, META_FEED: ("feed", PAGE)}
    request = Request(F1, meta=meta)
    return HtmlResponse(F1, status=status, headers=headers, body=b"", request=request)


@pytest.mark.parametrize(
    ("status", "headers", "etag"),
    [(200, {"ETag": '"e2"'}, '"e2"'), (304, {}, None), (200, {"ETag": "x\x01y"}, None)],
)
def test_a_polls_record(status: int, headers: dict[str, str], etag: str | None) -> None:
    state = polling().polled(response(status, **headers), 5, 2)
    assert (state.url, state.kind, state.found_on) == (F1, "feed", PAGE)
    assert (state.status, state.etag, state.entries, state.new_entries) == (status, etag, 5, 2)
    assert state.polled_at == NOW and state.next_poll == NOW + HOUR
