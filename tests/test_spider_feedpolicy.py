"""When a feed or sitemap is polled next (``govsi.responses.feedpolicy``): what counts as a
failed poll, the back-off and its cap, parking after 404/410 in a row, a success's reset,
and which redirects are followed and which move a feed for good."""

from __future__ import annotations

from datetime import timedelta

import pytest

from govsi.responses.feedpolicy import (
    Backoff,
    PollPlan,
    moved_for_good,
    plan_next_poll,
    poll_failed,
    redirect_refusal,
)

HOUR = 3600.0
DAY = 24 * HOUR
BACKOFF = Backoff(most=DAY, gone_after=3, park=60 * DAY)


@pytest.mark.parametrize(
    ("status", "entries", "error", "failed"),
    [
        (200, 5, None, False),
        (200, 0, None, False),  # an empty feed is a feed
        (200, 3, "xml: premature end of document", False),  # cut, but read
        (304, 0, None, False),
        (200, 0, "not a sitemap", True),  # HTML, garbage
        (200, 0, "not a JSON feed", True),
        (200, 0, "xml: Document is empty", True),
        (None, 0, "TimeoutError: took longer than 180 s", True),
        (None, 0, "download cancelled: past the size bound", True),
        (404, 0, None, True), (410, 0, None, True), (403, 0, None, True),
        (429, 0, None, True), (500, 0, None, True), (503, 0, None, True),
        (301, 0, "redirect loop: https://www.gov.si/rss", True),
        (302, 0, "redirect out of scope: https://example.com/rss", True),
    ],
)  # fmt: skip
def test_which_polls_failed(status: int | None, entries: int, error: str | None,
                            failed: bool) -> None:  # fmt: skip
    assert poll_failed(status, entries, error) is failed


@pytest.mark.parametrize(
    ("interval", "before", "status", "failed", "plan"),
    [
        # A success: the interval, failures reset, a parked feed active again.
        (HOUR, 0, 200, False, PollPlan(0, "active", timedelta(hours=1))),
        (HOUR, 7, 304, False, PollPlan(0, "active", timedelta(hours=1))),
        (2 * HOUR, 4, 200, False, PollPlan(0, "active", timedelta(hours=2))),
        # Failures double the interval per failure in a row...
        (HOUR, 0, 500, True, PollPlan(1, "active", timedelta(hours=2))),
        (HOUR, 1, None, True, PollPlan(2, "active", timedelta(hours=4))),
        (HOUR, 3, 503, True, PollPlan(4, "active", timedelta(hours=16))),
        # ... up to the cap, however many.
        (HOUR, 4, 500, True, PollPlan(5, "active", timedelta(days=1))),
        (HOUR, 10_000, None, True, PollPlan(10_001, "active", timedelta(days=1))),
        # An interval longer than the cap is never shortened by a failure.
        (2 * DAY, 0, 500, True, PollPlan(1, "active", timedelta(days=2))),
        # 404/410: backed off like any failure, then parked at the third in a row.
        (HOUR, 0, 404, True, PollPlan(1, "active", timedelta(hours=2))),
        (HOUR, 1, 410, True, PollPlan(2, "active", timedelta(hours=4))),
        (HOUR, 2, 404, True, PollPlan(3, "gone", timedelta(days=60))),
        (HOUR, 5, 410, True, PollPlan(6, "gone", timedelta(days=60))),
        # Failures of other kinds before count; the last one decides.
        (HOUR, 2, 500, True, PollPlan(3, "active", timedelta(hours=8))),
        (HOUR, 0, 0, False, PollPlan(0, "active", timedelta(hours=1))),
        (-5.0, 0, 200, False, PollPlan(0, "active", timedelta(0))),
    ],
)  # fmt: skip
def test_the_next_poll(interval: float, before: int, status: int | None, failed: bool,
                       plan: PollPlan) -> None:  # fmt: skip
    assert plan_next_poll(interval, before, status, failed, BACKOFF) == plan


def test_parking_can_be_turned_off() -> None:
    never = Backoff(most=DAY, gone_after=0, park=60 * DAY)
    assert plan_next_poll(HOUR, 50, 410, True, never) == PollPlan(51, "active", timedelta(days=1))


A = "https://www.gov.si/rss"
B = "https://www.gov.si/novice/rss"


@pytest.mark.parametrize(
    ("visited", "location", "target", "refusal"),
    [
        ([A], B, B, None),
        ([A, "https://www.gov.si/2", "https://www.gov.si/3", "https://www.gov.si/4",
          "https://www.gov.si/5"], B, B, None),  # the fifth redirect
        ([A, "https://www.gov.si/2", "https://www.gov.si/3", "https://www.gov.si/4",
          "https://www.gov.si/5", "https://www.gov.si/6"], B, B, "more than 5 redirects"),
        ([A], None, None, "redirect without a usable Location"),
        ([A], "https://example.com/rss", None, "redirect out of scope: https://example.com/rss"),
        ([A], A, A, f"redirect loop: {A}"),
        ([A, B], A, A, f"redirect loop: {A}"),
        # The canonical form decides: a spelling of A is A.
        ([A], "https://WWW.gov.si:443/rss", A, f"redirect loop: {A}"),
    ],
)  # fmt: skip
def test_which_redirects_are_followed(visited: list[str], location: str | None,
                                      target: str | None, refusal: str | None) -> None:  # fmt: skip
    assert redirect_refusal(visited, location, target) == refusal


@pytest.mark.parametrize(
    ("statuses", "moved"),
    [([301], True), ([308], True), ([301, 308], True), ([302], False), ([307], False),
     ([301, 302], False), ([303, 301], False), ([], False)],
)  # fmt: skip
def test_which_redirect_chains_move_a_feed(statuses: list[int], moved: bool) -> None:
    assert moved_for_good(statuses) is moved
