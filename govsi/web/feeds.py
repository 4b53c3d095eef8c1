"""Feeds a page links to, and what a feed lists (pure).

``feed_links`` finds the RSS, Atom and JSON feeds an HTML page declares (``<link
rel="alternate" type="application/rss+xml" href>``, the autodiscovery convention), resolved
against the document base as a browser resolves them; nothing is canonicalized or
scope-checked here.

``read_feed`` reads a feed's entries. RSS 2.0, RSS 1.0 and Atom are sitemap formats
(sitemaps.org), so they are read by ``govsi.web.sitemaps.read_sitemap``, within its bounds
(bytes, elements, URLs) and with its XML parser (no entity expansion, no DTD, no network).
A JSON Feed (jsonfeed.org, 1.0 and 1.1) is read an item at a time from at most
``JSON_MAX_BYTES`` of the body: never the whole document at once.
feedparser stays out: it reads a document whole with no bound on bytes or entries, and
measures slower per entry and larger (``bench.feed_parsers``, bench/README.md).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from lxml import etree

from govsi.web import sitemaps
from govsi.web.urls import resolve

__all__ = [
    "FEED_TYPES",
    "JSON_MAX_BYTES",
    "MAX_ENTRIES",
    "FeedRead",
    "feed_links",
    "feed_type",
    "read_feed",
]

# The media types a feed is declared with, by what they are.
FeedFormat = Literal["rss", "atom", "json"]
FEED_TYPES: Final[dict[str, FeedFormat]] = {
    "application/rss+xml": "rss",
    "application/rdf+xml": "rss",  # RSS 1.0
    "application/atom+xml": "atom",
    "application/feed+json": "json",  # JSON Feed 1.1
}
# JSON Feed 1.0 was declared as plain application/json, which also declares any JSON API
# (WordPress puts one on every page): taken only when the link says it is a feed.
_PLAIN_JSON = "application/json"
# Entries read from one feed: real feeds list 10 to 50; a feed naming thousands is a
# sitemap in disguise, and its pages come through the crawl's breadth-first order anyway.
MAX_ENTRIES = 500
# Feeds taken from one page: a page declares one to a handful.
MAX_FEEDS_PER_PAGE = 10
# Bytes of a JSON Feed read: a JSON value costs many times its bytes in memory, so the XML
# reader's 50 MB would be far too much (bench/README, bench.feed_parsers). 500 entries with
# their full HTML text fit.
JSON_MAX_BYTES = 8 * 1024 * 1024
# Items of a JSON Feed looked at, with or without a link: 8 MiB of ``{},`` are 2.8 M items,
# seconds of reading, and list nothing. Twenty per entry taken leaves room for linkless ones.
JSON_MAX_ITEMS = 20 * MAX_ENTRIES
# What a JSON Feed's ``version`` starts with (jsonfeed.org/version/1, /version/1.1).
_JSON_VERSIONS = ("https://jsonfeed.org/version/", "http://jsonfeed.org/version/")
NOT_A_JSON_FEED = "not a JSON feed"

_FEED_LINKS = etree.XPath("//link[@href and @type and @rel]")
# JSON's whitespace, skipped in one C-level match: a Python loop per character took seconds
# over a body of 8 MiB of spaces.
_JSON_SPACE = re.compile(r"[ \t\r\n]*")


def feed_type(declared: str) -> FeedFormat | None:
    """What a ``type`` attribute (or Content-Type) declares: "rss", "atom", "json" or None;
    parameters (``; charset=...``), case and surrounding space ignored."""
    return FEED_TYPES.get(declared.split(";", 1)[0].strip().lower())


def _declares_feed(element: etree._Element) -> bool:
    declared = str(element.get("type"))
    if feed_type(declared) is not None:
        return True
    if declared.split(";", 1)[0].strip().lower() != _PLAIN_JSON:
        return False
    said = f"{element.get('title') or ''} {element.get('href') or ''}".lower()
    return "feed" in said


def feed_links(root: etree._Element, base_url: str) -> list[str]:
    """The feeds a parsed HTML page declares: ``<link>`` elements whose ``rel`` has the
    token ``alternate`` (and not ``stylesheet``) and whose ``type`` is a feed's (plain
    ``application/json`` only with "feed" in its title or href), their ``href`` resolved
    against ``base_url``; document order, each once, at most MAX_FEEDS_PER_PAGE.
    Unresolvable or non-http(s) hrefs are left out."""
    found: dict[str, None] = {}
    for element in _FEED_LINKS(root):
        rel = str(element.get("rel")).lower().split()
        if "alternate" not in rel or "stylesheet" in rel or not _declares_feed(element):
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

    entries: list[str]  # the entries' links: absolute http(s) URLs, each once
    truncated: bool  # a bound cut the feed (MAX_ENTRIES, bytes, the XML reader's elements)
    error: str | None  # "not a sitemap" (no feed at all), "not a JSON feed", "xml: ...", ...
    # When an entry last changed, as the feed says (a JSON Feed's date_modified, else
    # date_published; RFC 3339, read by govsi.revisit.due.parse_lastmod).
    lastmod: dict[str, str] = field(default_factory=dict, compare=False)
    # Bytes of the body the reader looked at (at most its bound), for the tests' counting.
    read_bytes: int = field(default=0, compare=False)


def read_feed(body: bytes, url: str, *, max_entries: int = MAX_ENTRIES) -> FeedRead:
    """The entries of one feed response body; never raises. A sitemap served where a feed
    was declared is read as one (its page URLs are the entries); child sitemaps are not
    followed from a feed. Picklable in and out: the spider runs it in a worker process."""
    start = sitemaps.gunzip(body, 64).lstrip().removeprefix(b"\xef\xbb\xbf").lstrip()
    if start[:1] in (b"{", b"["):
        return read_json_feed(body, url, max_entries=max_entries)
    found = sitemaps.read_sitemap(body, url, max_urls=max(0, max_entries))
    return FeedRead(found.sitemap.urls, found.sitemap.truncated, found.sitemap.error,
                    read_bytes=found.size)  # fmt: skip


def read_json_feed(body: bytes, url: str, *, max_entries: int = MAX_ENTRIES) -> FeedRead:
    """A JSON Feed's items' ``url`` (resolved against the feed's ``url``), in order, at most
    ``max_entries``, from at most JSON_MAX_BYTES of the (inflated) body and its first
    JSON_MAX_ITEMS items: each item decoded
    alone, so what is held is one item and the entries so far. A document whose
    ``version`` is not a JSON Feed's is "not a JSON feed"; one cut by the bound keeps the
    items read whole before the cut."""
    limit = JSON_MAX_BYTES  # looked up per call, so tests can lower it
    data = sitemaps.gunzip(body, limit + 1)
    cut = len(data) > limit
    window = data[:limit]
    text = window.decode("utf-8", "ignore" if cut else "replace").lstrip("\ufeff \t\r\n")
    reader = _JsonItems(text, url, max(0, max_entries), JSON_MAX_ITEMS)
    error = reader.read()
    if reader.version is None or not reader.version.startswith(_JSON_VERSIONS):
        return FeedRead([], False, NOT_A_JSON_FEED, read_bytes=len(window))
    if error is not None and cut:
        error = None  # the bound cut the document: said by ``truncated``
    return FeedRead(list(reader.entries), cut or reader.full, error, reader.lastmod,
                    read_bytes=len(window))  # fmt: skip


class _JsonItems:
    """The top-level object of a JSON Feed walked key by key with ``raw_decode``: ``items``
    an element at a time, every other value decoded and dropped (``version`` kept)."""

    def __init__(self, text: str, url: str, most: int, most_items: int) -> None:
        self.text, self.url, self.most, self.most_items = text, url, most, most_items
        self.pos = 0
        self.version: str | None = None
        self.entries: dict[str, None] = {}
        self.lastmod: dict[str, str] = {}
        self.full = False  # stopped at ``most`` entries or ``most_items`` items
        self._decoder = json.JSONDecoder()

    def read(self) -> str | None:
        """Walk the document; the error that stopped it, if any."""
        try:
            self._expect("{")
            if self._peek() == "}":
                return None
            while True:
                key = self._value()
                self._expect(":")
                if key == "items" and self._peek() == "[":
                    if not self._items():
                        return None
                else:
                    value = self._value()
                    if key == "version" and isinstance(value, str):
                        self.version = value.strip()
                if self._peek() == "}":
                    return None
                self._expect(",")
        except (ValueError, IndexError) as exc:
            return f"json: {exc}"[:300]

    def _items(self) -> bool:
        """Read the ``items`` array; False once ``most`` entries are taken or ``most_items``
        items looked at."""
        self._expect("[")
        if self._peek() == "]":
            self.pos += 1
            return True
        for _ in range(self.most_items):
            item = self._value()
            if isinstance(item, dict) and not self._take(item):
                self.full = True
                return False
            if self._peek() == "]":
                self.pos += 1
                return True
            self._expect(",")
        self.full = True
        return False

    def _take(self, item: dict[str, Any]) -> bool:
        link = item.get("url")
        target = resolve(self.url, link.strip()) if isinstance(link, str) and link else None
        if target is None or target in self.entries:
            return True
        if len(self.entries) >= self.most:
            return False
        self.entries[target] = None
        when = item.get("date_modified") or item.get("date_published")
        if isinstance(when, str) and when.strip():
            self.lastmod[target] = when.strip()[:100]
        return True

    def _skip_space(self) -> None:
        self.pos = _JSON_SPACE.match(self.text, self.pos).end()  # type: ignore[union-attr]

    def _peek(self) -> str:
        self._skip_space()
        return self.text[self.pos]  # IndexError at the end: a cut document

    def _expect(self, char: str) -> None:
        if self._peek() != char:
            raise ValueError(f"expected {char!r} at {self.pos}")
        self.pos += 1

    def _value(self) -> Any:
        self._skip_space()
        value, self.pos = self._decoder.raw_decode(self.text, self.pos)
        return value
