"""Tests for govsi.frontier.intake: where each kind of request enters its host's queue, as a
table of cases (robots.txt first, then what renders wait for, sitemaps, feeds with the
first pages, pages by depth; a sitemap's page after the links at its depth)."""

from __future__ import annotations

from typing import Any

import pytest

from govsi.frontier.entries import Entry
from govsi.frontier.hostsetup import DEPTH_ROBOTS
from govsi.frontier.intake import DEPTH_FEED, DEPTH_RESOURCE, DEPTH_SITEMAP, Place, place
from govsi.requestmeta import (
    KIND_IMAGE,
    KIND_PAGE,
    KIND_RESOURCE,
    KIND_ROBOTS,
    KIND_SITEMAP,
    META_FEED,
    META_FROM_FEED,
    META_FROM_SITEMAP,
    META_KIND,
    META_URL,
)

U = "https://a.gov.si/x"


@pytest.mark.parametrize(
    ("meta", "dont_filter", "expected"),
    [
        ({META_KIND: KIND_PAGE, "depth": 3}, False, Place(3, Entry(KIND_PAGE, U, 3))),
        ({META_KIND: KIND_IMAGE, "depth": 2}, False, Place(2, Entry(KIND_IMAGE, U, 2))),
        # The page's own URL (a redirect's target) over the request's.
        (
            {META_KIND: KIND_PAGE, "depth": 1, META_URL: "https://a.gov.si/y"}, False,
            Place(1, Entry(KIND_PAGE, "https://a.gov.si/y", 1)),
        ),
        # A sitemap's page: after the links found at its depth.
        (
            {META_KIND: KIND_PAGE, "depth": 1, META_FROM_SITEMAP: True}, False,
            Place(1, Entry(KIND_PAGE, U, 1), late=True),
        ),
        # A feed's new page: ahead of the breadth-first order, its depth kept.
        (
            {META_KIND: KIND_PAGE, "depth": 1, META_FROM_FEED: True}, False,
            Place(DEPTH_FEED, Entry(KIND_PAGE, U, 1)),
        ),
        # Scrapy's retry of a page: kept whole (its retry count), at its depth.
        ({META_KIND: KIND_PAGE, "depth": 4}, True, Place(4, None)),
        ({META_KIND: KIND_ROBOTS}, False, Place(DEPTH_ROBOTS, None)),
        ({META_KIND: KIND_RESOURCE, "depth": 2}, False, Place(DEPTH_RESOURCE, None)),
        ({META_KIND: KIND_SITEMAP}, False, Place(DEPTH_SITEMAP, None)),
        ({META_KIND: KIND_SITEMAP, META_FEED: ("feed", U)}, False, Place(DEPTH_FEED, None)),
        ({META_KIND: KIND_SITEMAP, META_FEED: ("sitemap", U)}, False, Place(DEPTH_SITEMAP, None)),
        ({"depth": 2}, False, Place(2, None)),  # no kind: kept whole at its depth
    ],
)  # fmt: skip
def test_where_a_request_enters_its_hosts_queue(
    meta: dict[str, Any], dont_filter: bool, expected: Place
) -> None:
    assert place(U, meta, dont_filter) == expected


def test_levels_robots_first_then_resources_sitemaps_then_pages() -> None:
    assert DEPTH_ROBOTS < DEPTH_RESOURCE < DEPTH_SITEMAP < DEPTH_FEED == 0
