"""Where a request enters its host's queue: its level, whether it is kept as an
``Entry`` (a page or image, remade by the spider when it leaves) or whole, and whether it
waits for the links found at its level (``late``).

Levels, lowest first: robots.txt (``DEPTH_ROBOTS``), what renders wait for, sitemaps, then
the host's pages by depth; feeds a page declares, and the new pages they list, at
``DEPTH_FEED`` (with the host's first pages, once robots.txt is known: levels below 0
leave before it).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from govsi.frontier.entries import Entry
from govsi.frontier.hostsetup import DEPTH_ROBOTS
from govsi.requestmeta import (
    KIND_IMAGE,
    KIND_PAGE,
    KIND_RESOURCE,
    KIND_ROBOTS,
    KIND_SITEMAP,
    META_FROM_FEED,
    META_FROM_SITEMAP,
    META_KIND,
    META_URL,
    Kind,
    is_feed,
)

__all__ = ["DEPTH_FEED", "DEPTH_RESOURCE", "DEPTH_SITEMAP", "Place", "place"]

DEPTH_RESOURCE, DEPTH_SITEMAP = -2, -1  # after robots.txt (DEPTH_ROBOTS, -3)
DEPTH_FEED = 0


class Place(NamedTuple):
    """``entry``: the page or image as the queue keeps it (None: the request is kept
    whole); ``late``: after the links found at its level (a sitemap's page)."""

    level: int
    entry: Entry | None
    late: bool = False


def place(url: str, meta: dict[str, Any], dont_filter: bool) -> Place:
    """Where a request for ``url`` with ``meta`` enters its host's queue."""
    kind: Kind | None = meta.get(META_KIND)
    depth: int = meta.get("depth", 0)
    if kind in (KIND_PAGE, KIND_IMAGE) and not dont_filter:
        entry = Entry(kind, meta.get(META_URL, url), depth)
        # A page new to the crawl a feed lists goes ahead of its host's breadth-first
        # order; its row keeps its depth.
        level = DEPTH_FEED if meta.get(META_FROM_FEED) else depth
        return Place(level, entry, bool(meta.get(META_FROM_SITEMAP)))
    if kind == KIND_ROBOTS:
        return Place(DEPTH_ROBOTS, None)
    if kind == KIND_RESOURCE:
        return Place(DEPTH_RESOURCE, None)
    # Sitemaps, and deliberate repeats (dont_filter: Scrapy's retries), are kept whole:
    # their meta (a retry count) must survive, and they may repeat a URL.
    if kind == KIND_SITEMAP:
        # A feed waits behind robots.txt's gate: a page's link, not robots.txt's.
        return Place(DEPTH_FEED if is_feed(meta) else DEPTH_SITEMAP, None)
    return Place(depth, None)
