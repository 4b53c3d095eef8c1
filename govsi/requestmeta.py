"""What govsi's requests carry, in one place: their kinds, the ``Request.meta`` keys its
components read and write, and the interface the scheduler makes requests through.

A request's kind decides its queue and its fate: pages and images are crawldb rows
(FRONTIER until fetched), robots.txt and sitemaps belong to a host's set-up, resources are
what rendered pages' scripts fetch. Components agree on these names here rather than
through string literals, so a grep for one finds every reader and writer.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from scrapy import Request

KIND_PAGE = "page"
KIND_IMAGE = "image"
KIND_ROBOTS = "robots"
KIND_SITEMAP = "sitemap"
KIND_RESOURCE = "resource"

# Request.meta keys (Scrapy's own "depth" is used as Scrapy means it).
META_KIND = "govsi_kind"  # one of the kinds above
META_URL = "govsi_url"  # the canonical URL the row is stored under (redirects keep it)
META_HOST = "govsi_host"  # the host whose queue, delays and robots.txt the request counts for
META_SITEMAP = "govsi_sitemap"  # a sitemap request's site
META_ARRIVED = (
    "govsi_arrived"  # monotonic time the response's headers arrived (delays count from it)
)
META_FINISHED = "govsi_finished"  # set once the scheduler has settled the request
META_REDIRECTS = "govsi_redirects"  # robots.txt redirects followed so far (RFC 9309: at most 5)
META_RESOURCE = "govsi_resource"  # a rendered page's sub-resource: the cache entry it fills
META_STALE = "govsi_stale"  # a cached resource being revalidated
META_SETTLE = "govsi_settle"  # what a rendered page runs after load, before its DOM is taken


@runtime_checkable
class RequestFactory(Protocol):
    """How the scheduler turns what it keeps (kind, URL, depth) back into requests: the
    spider implements it, since the callbacks are the spider's."""

    def request_for(self, kind: str, url: str, depth: int) -> Request: ...

    def sitemap_request(self, url: str, site: str) -> Request | None: ...
