"""Feeds a page links to, and what a feed lists (pure).

``feed_links`` finds the RSS and Atom feeds an HTML page declares (``<link rel="alternate"
type="application/rss+xml" href>``, the autodiscovery convention), resolved against the
document base as a browser resolves them; nothing is canonicalized or scope-checked here.

``read_feed`` reads a feed's entries: RSS 2.0, RSS 1.0 and Atom are sitemap formats
(sitemaps.org), so a feed is read by ``govsi.web.sitemaps.read_sitemap``, within its bounds
(bytes, elements, URLs) and with its XML parser (no entity expansion, no DTD, no network).
feedparser stays out: it reads a document whole with no bound on bytes or entries, and
measures slower per entry and larger (``bench.feed_parsers``, bench/README.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

from lxml import etree

from govsi.web import sitemaps
from govsi.web.urls import resolve

__all__ = ["FEED_TYPES", "MAX_ENTRIES", "FeedRead", "feed_links", "feed_type", "read_feed"]

# The media types a feed is declared with, by what they are.
FeedFormat = Literal["rss", "atom"]
FEED_TYPES: Final[dict[str, FeedFormat]] = {
    "application/rss+xml": "rss",
    "application/rdf+xml": "rss",  # RSS 1.0
    "application/atom+xml": "atom",
}
# Entries read from one feed: real feeds list 10 to 50; a feed naming thousands is a
# sitemap in disguise, and its pages come through the crawl's breadth-first order anyway.
MAX_ENTRIES = 500
# Feeds taken from one page: a page declares one to a handful.
MAX_FEEDS_PER_PAGE = 10

_FEED_LINKS = etree.XPath("//link[@href and @type and @rel]")


def feed_type(declared: str) -> FeedFormat | None:
    """What a ``type`` attribute (or Content-Type) declares: "rss", "atom" or None;
    parameters (``; charset=...``), case and surrounding space ignored."""
    return FEED_TYPES.get(declared.split(";", 1)[0].strip().lower())


def feed_links(root: etree._Element, base_url: str) -> list[str]:
    """The feeds a parsed HTML page declares: ``<link>`` elements whose ``rel`` has the
    token ``alternate`` (and not ``stylesheet``) and whose ``type`` is a feed's, their
    ``href`` resolved against ``base_url``; document order, each once, at most
    MAX_FEEDS_PER_PAGE. Unresolvable or non-http(s) hrefs are left out."""
    found: dict[str, None] = {}
    for element in _FEED_LINKS(root):
        rel = str(element.get("rel")).lower().split()
        if "alternate" not in rel or "stylesheet" in rel:
            continue
        if feed_type(str(element.get("type"))) is None:
            continue
        href = str(element.get("href")).strip()
        url = resolve(base_url, href) if href else None
        if url is not None:
            found.setdefault(url)
            if len(found) >= MAX_FEEDS_PER_PAGE:
                break
    return list(found)


@dataclass(frozen=True)
class FeedRead:
    """``read_feed``'s answer."""

    entries: list[str]  # the entries' links: absolute http(s) URLs as written, each once
    truncated: bool  # a bound cut the feed (MAX_ENTRIES, the sitemap reader's bytes/elements)
    error: str | None  # "not a sitemap" (neither feed nor sitemap), "xml: ...", "gzip: ..."


def read_feed(body: bytes, url: str, *, max_entries: int = MAX_ENTRIES) -> FeedRead:
    """The entries of one feed response body; never raises. A sitemap served where a feed
    was declared is read as one (its page URLs are the entries); child sitemaps are not
    followed from a feed. Picklable in and out: the spider runs it in a worker process."""
    found = sitemaps.parse_sitemap(body, url, max_urls=max(0, max_entries))
    return FeedRead(found.urls, found.truncated, found.error)
