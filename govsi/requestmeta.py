"""What govsi's requests carry, in one place: their kinds, the ``Request.meta`` keys its
components read and write, and the interface the scheduler makes requests through.

A request's kind decides its queue and its fate: pages and images are crawldb rows
(FRONTIER until fetched), robots.txt and sitemaps belong to a host's set-up, resources are
what rendered pages' scripts fetch. Components agree on these names here rather than
through string literals, so a grep for one finds every reader and writer, and mypy checks
every kind against ``Kind``.
"""

from __future__ import annotations

from typing import Any, Final, Literal, Protocol, runtime_checkable

from scrapy import Request

from govsi.items import Revisit

Kind = Literal["page", "image", "robots", "sitemap", "resource"]
KIND_PAGE: Final[Kind] = "page"
KIND_IMAGE: Final[Kind] = "image"
KIND_ROBOTS: Final[Kind] = "robots"
KIND_SITEMAP: Final[Kind] = "sitemap"
KIND_RESOURCE: Final[Kind] = "resource"

# Request.meta keys (Scrapy's own "depth" is used as Scrapy means it).
META_KIND: Final = "govsi_kind"  # the request's Kind
META_URL: Final = "govsi_url"  # the canonical URL the row is stored under (redirects keep it)
# The host whose queue, delays and robots.txt the request counts for.
META_HOST: Final = "govsi_host"
# A sitemap request's site: the host whose robots.txt (or sitemap index) led to it, whose
# sitemap budget it spends and whose site.sitemap_content keeps it.
META_SITE: Final = "govsi_site"
# Set (True) on the request for a page a sitemap listed: the frontier queues it after the
# pages links lead to at the same depth (``govsi.frontier.queue``'s late entries).
META_FROM_SITEMAP: Final = "govsi_sitemap"
# Set (True) on the request for a page new to the crawl a feed listed: the frontier queues
# it at the host's first level, ahead of its breadth-first order (new pages first).
META_FROM_FEED: Final = "govsi_from_feed"
# A feed or sitemap request's row in crawldb's ``feed`` table: (kind, found on), written
# with the poll's outcome (``govsi.responses.feeding``).
META_FEED: Final = "govsi_feed"
# A feed or sitemap request reached by redirects: the URLs before it and each one's status,
# [(url, status), ...], first the one polled (``govsi.responses.feeding``).
META_FEED_HOPS: Final = "govsi_feed_hops"


# Monotonic time the response's headers arrived (delays count from it).
META_ARRIVED: Final = "govsi_arrived"
META_FINISHED: Final = "govsi_finished"  # set once the scheduler has settled the request
# robots.txt redirects followed so far (RFC 9309: at most 5).
META_REDIRECTS: Final = "govsi_redirects"
# A rendered page's sub-resource: the cache entry it fills.
META_RESOURCE: Final = "govsi_resource"
META_STALE: Final = "govsi_stale"  # a cached resource being revalidated
# What a rendered page runs after load, before its DOM is taken.
META_SETTLE: Final = "govsi_settle"
# A revisit of a stored page or image: its ``govsi.items.Revisit`` (validators, content key).
META_REVISIT: Final = "govsi_revisit"
# A sitemap's ``<lastmod>`` for the page it lists (raw text): a known page last visited
# before it is due again (``govsi.frontier.revisits``).
META_LASTMOD: Final = "govsi_lastmod"
# The WARC record id of the request's response (WarcMiddleware): a DOM record refers to it.
META_WARC_RECORD: Final = "govsi_warc_record"


def is_feed(meta: dict[str, Any]) -> bool:
    """``meta`` is a feed's request's (``govsi.responses.feeding``), not a sitemap's."""
    feed = meta.get(META_FEED)
    return isinstance(feed, tuple | list) and bool(feed) and feed[0] == "feed"


@runtime_checkable
class RequestFactory(Protocol):
    """How the scheduler turns what it keeps (kind, URL, depth) back into requests: the
    spider implements it, since the callbacks are the spider's."""

    def request_for(
        self, kind: Kind, url: str, depth: int, revisit: Revisit | None = None
    ) -> Request: ...

    def sitemap_request(self, url: str, site: str) -> Request | None: ...
