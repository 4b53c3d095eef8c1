"""Read sitemap documents as the sitemaps.org protocol defines them and as servers serve them.

Pure: no Scrapy, no network. ``parse_sitemap`` takes a response body and returns the page
URLs (``<urlset>``) and child sitemaps (``<sitemapindex>``) it lists, and never raises.

Accepted: XML in any namespace (sitemaps.org, Google's old 0.84, none, misspelt ones), gzip
(by magic bytes, whatever the URL or Content-Type says), plain text (one URL per line) and
RSS / Atom feeds, all of which the protocol allows. Only absolute http(s) URLs are kept, as
written (stripped of surrounding whitespace): nothing is resolved or canonicalized here.

Hostile input stays cheap: at most MAX_BYTES are inflated from gzip, the XML parser expands
no entities and loads no DTD or anything else from the network, libxml2 stops on entity
amplification (billion laughs), and the parsed tree is pruned as entries are read.
Not Scrapy's Sitemap nor ultimate-sitemap-parser: they read fewer forms, unbounded (bench/README).
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Final, Literal
from urllib.parse import urlsplit

from lxml import etree

MAX_URLS = 50_000  # protocol limit per sitemap file
MAX_BYTES = 50 * 1024 * 1024  # protocol limit per file, uncompressed
# Elements of any kind read from one file, past which reading stops: 50 MB of empty
# <url/> are 8 M elements, a long parse, and list nothing. Ten per listed URL (url, loc,
# lastmod, changefreq, priority and a few image:*) keep a file to a short one.
MAX_ELEMENTS = 500_000

# Why reading stopped before the end of a document (Sitemap.stopped).
Stopped = Literal["urls", "bytes", "elements"]
STOPPED_URLS: Final[Stopped] = "urls"  # MAX_URLS or the caller's max_urls
STOPPED_BYTES: Final[Stopped] = "bytes"  # MAX_BYTES
STOPPED_ELEMENTS: Final[Stopped] = "elements"  # MAX_ELEMENTS

NOT_A_SITEMAP = "not a sitemap"

_GZIP_MAGIC = b"\x1f\x8b"
_BOM = b"\xef\xbb\xbf"
# Small enough to stop soon after a limit, large enough to be cheap.
_FEED_CHUNK = 1 << 16
_LINE_BREAKS = ("\n", "\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029")

# Root element (local name, any namespace) -> (entry elements, link element). A link counts
# only as a direct child of an entry and in the entry's namespace, which is what keeps
# image:loc, video:content_loc, xhtml:link and an RSS item's atom:link out.
_LAYOUTS: dict[str, tuple[frozenset[str], str]] = {
    "urlset": (frozenset({"url", "sitemap"}), "loc"),
    "sitemapindex": (frozenset({"url", "sitemap"}), "loc"),
    "rss": (frozenset({"item"}), "link"),  # RSS 2.0
    "RDF": (frozenset({"item"}), "link"),  # RSS 1.0
    "feed": (frozenset({"entry"}), "link"),  # Atom: the URL is in href, not in the text
}

# A bare "&" (common in generated sitemaps: "?a=1&b=2") makes libxml2's recovery silently
# drop text, turning the URL into a different one. Escape every "&" that does not start a
# reference, outside CDATA sections, whose text is literal. An unterminated section runs to
# the end (as in libxml2), which also keeps the split linear.
_BARE_AMP = re.compile(rb"&(?![A-Za-z_:][\w.:-]*;|#[0-9]+;|#x[0-9A-Fa-f]+;)")
_CDATA = re.compile(rb"(<!\[CDATA\[.*?(?:\]\]>|\Z))", re.DOTALL)


@dataclass
class Sitemap:
    urls: list[str]  # <urlset><url><loc>: absolute http(s) URLs, document order, deduplicated
    sitemaps: list[str]  # <sitemapindex><sitemap><loc>: child sitemaps, same rules
    truncated: bool  # a limit cut the document: MAX_URLS, MAX_BYTES or the caller's max_urls
    error: str | None  # "not a sitemap", "gzip: ...", "xml: ..."; None when read cleanly
    # Which limit cut it (STOPPED_*), when truncated; not compared: it explains truncated.
    stopped: Stopped | None = field(default=None, compare=False)
    # <urlset><url><lastmod> of the listed URLs that have one, as written (stripped): when
    # the site says the page last changed (govsi.revisit.due.parse_lastmod reads it).
    lastmod: dict[str, str] = field(default_factory=dict, compare=False)


@dataclass
class SitemapRead:
    """``read_sitemap``'s answer: the parsed sitemap and the start of the inflated body."""

    sitemap: Sitemap
    head: bytes  # the first ``keep`` bytes of the document, inflated
    size: int  # the inflated document's length (at most MAX_BYTES)


def is_gzip(body: bytes) -> bool:
    """True when body is gzip data, by its magic bytes."""
    return body[:2] == _GZIP_MAGIC


def gunzip(body: bytes, limit: int | None = None) -> bytes:
    """The body inflated as parse_sitemap inflates it: at most ``limit`` bytes (MAX_BYTES),
    whatever was readable of a corrupt or cut stream, and a body that is not gzip as it is
    (cut at ``limit``). Never raises."""
    most = MAX_BYTES if limit is None else limit
    return _gunzip(body, most)[0] if is_gzip(body) else body[:most]


def parse_sitemap(body: bytes, url: str, *, max_urls: int = MAX_URLS) -> Sitemap:
    """Read one sitemap response body; never raises.

    ``url`` is the sitemap's own address. It is not used to resolve anything: the protocol
    requires absolute locs, and a relative one is dropped rather than guessed at.
    """
    return read_sitemap(body, url, max_urls=max_urls).sitemap


def read_sitemap(body: bytes, url: str, *, max_urls: int = MAX_URLS, keep: int = 0) -> SitemapRead:
    """``parse_sitemap``, and the first ``keep`` bytes of the inflated document, inflated
    once. Picklable in and out: the spider runs it in a worker process."""
    limit = MAX_BYTES  # looked up per call, so tests can lower it
    gzip_error: str | None = None
    if is_gzip(body):
        data, cut, gzip_error = _gunzip(body, limit)
    else:
        data, cut = body[:limit], len(body) > limit
    return SitemapRead(_parse(data, max_urls, cut, gzip_error), data[: max(0, keep)], len(data))


def _parse(data: bytes, max_urls: int, cut: bool, gzip_error: str | None) -> Sitemap:
    data = data.lstrip().removeprefix(_BOM).lstrip()
    out = _Collector(max(0, min(max_urls, MAX_URLS)))
    if data.startswith(b"<"):
        # A document we cut, or whose gzip stream broke off, has no end to look for.
        error = _read_xml(data, out, complete=not cut and gzip_error is None)
    else:
        error = _read_text(data, out, cut)
    if error == NOT_A_SITEMAP:
        return Sitemap([], [], False, gzip_error or NOT_A_SITEMAP)
    stopped = out.stopped or (STOPPED_BYTES if cut else None)
    # A broken gzip stream is the cause of whatever the XML parser then complains about.
    return Sitemap(
        list(out.urls),
        list(out.sitemaps),
        cut or out.truncated,
        gzip_error or error,
        stopped,
        {url: when for url, when in out.lastmod.items() if url in out.urls},
    )


class _Collector:
    """Entries in document order, each list deduplicated, up to a limit on both together."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.urls: dict[str, None] = {}  # dicts: ordered sets
        self.sitemaps: dict[str, None] = {}
        self.truncated = False
        self.stopped: Stopped | None = None  # once a limit stopped the reading
        self.lastmod: dict[str, str] = {}
        # The <url> entry being read, its loc and its lastmod (either may come first).
        self._entry: object = None
        self._entry_url: str | None = None
        self._entry_lastmod: str | None = None

    def stop(self, reason: Stopped) -> bool:
        self.truncated = True
        self.stopped = reason
        return False

    def add(self, text: str | None, *, child: bool = False) -> bool:
        """Take one loc if it is a new absolute http(s) URL; False once reading must stop."""
        url = _absolute(text)
        target = self.sitemaps if child else self.urls
        if url is None or url in target:
            return True
        if len(self.urls) + len(self.sitemaps) >= self.limit:
            return self.stop(STOPPED_URLS)
        target[url] = None
        return True

    def entry_part(
        self, entry: object, *, url: str | None = None, lastmod: str | None = None
    ) -> None:
        """A <url> entry's loc or lastmod; the two together make a ``lastmod`` pair."""
        if entry is not self._entry:
            self._entry, self._entry_url, self._entry_lastmod = entry, None, None
        self._entry_url = self._entry_url or url
        self._entry_lastmod = self._entry_lastmod or lastmod
        if self._entry_url and self._entry_lastmod:
            self.lastmod.setdefault(self._entry_url, self._entry_lastmod)


def _absolute(text: str | None) -> str | None:
    """The stripped text when it is an absolute http(s) URL with a host, else None."""
    if not text:
        return None
    url = text.strip()
    try:
        parts = urlsplit(url)
    except ValueError:  # e.g. an unbalanced "[" in the host
        return None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        return None
    return url


def _gunzip(body: bytes, limit: int) -> tuple[bytes, bool, str | None]:
    """Inflate at most ``limit`` bytes of gzip data: (data, cut at limit, error)."""
    parts: list[bytes] = []
    size = 0
    pending = body
    try:
        # Concatenated members are one file (gzip -c a b); whatever follows the last member
        # that is not another member is ignored, as gzip(1) ignores trailing garbage.
        while is_gzip(pending):
            inflater = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
            while pending and not inflater.eof:
                # max_length bounds each step, so a bomb never expands past limit + 1 bytes.
                part = inflater.decompress(pending, limit + 1 - size)
                size += len(part)
                if size > limit:
                    parts.append(part[: len(part) - (size - limit)])
                    return b"".join(parts), True, None
                parts.append(part)
                pending = inflater.unconsumed_tail
            if not inflater.eof:
                return b"".join(parts), False, "gzip: incomplete stream"
            pending = inflater.unused_data
    except zlib.error as exc:
        return b"".join(parts), False, f"gzip: {exc}"
    return b"".join(parts), False, None


def _read_xml(data: bytes, out: _Collector, *, complete: bool) -> str | None:
    """Collect entries from an XML sitemap or feed; the error, if any."""
    if _BARE_AMP.search(data):
        pieces = _CDATA.split(data)  # text, CDATA, text, ...
        pieces[::2] = [_BARE_AMP.sub(b"&amp;", text) for text in pieces[::2]]
        data = b"".join(pieces)
    parser = etree.XMLPullParser(
        events=("end",),
        resolve_entities=False,
        no_network=True,
        load_dtd=False,
        huge_tree=False,
        recover=True,
    )
    layout: tuple[frozenset[str], str] | None = None
    closed = False
    elements = 0
    most = MAX_ELEMENTS  # looked up per call, so tests can lower it
    try:
        for offset in range(0, len(data), _FEED_CHUNK):
            parser.feed(data[offset : offset + _FEED_CHUNK])
            for _, el in parser.read_events():
                elements += 1
                if elements > most:
                    out.stop(STOPPED_ELEMENTS)
                    return _xml_error(parser)
                if layout is None:  # the first element to end decides what the document is
                    layout = _LAYOUTS.get(el.getroottree().getroot().tag.rpartition("}")[2])
                    if layout is None:  # an HTML error page, or any other XML
                        return NOT_A_SITEMAP
                parent = el.getparent()
                if parent is None:
                    closed = True
                    continue
                if not _take(el, parent, layout, out):
                    return _xml_error(parser)
                # Everything is read once, so drop it: the tree stays a handful of nodes.
                el.clear()
                while el.getprevious() is not None:
                    del parent[0]
    except etree.XMLSyntaxError as exc:  # fatal even in recover mode
        return NOT_A_SITEMAP if layout is None else f"xml: {exc}"
    if layout is None:
        return NOT_A_SITEMAP
    # close() is never called: recovery would auto-close a half-written last <loc> and hand
    # back a URL cut in the middle; an unclosed root is reported here instead.
    error = _xml_error(parser)
    if error is None and complete and not closed:
        return "xml: premature end of document"
    return error


def _take(
    el: etree._Element, parent: etree._Element, layout: tuple[frozenset[str], str], out: _Collector
) -> bool:
    """Offer ``el`` to ``out`` if it is an entry's link; False once reading must stop."""
    entries, link = layout
    namespace, _, name = el.tag.rpartition("}")
    parent_namespace, _, entry = parent.tag.rpartition("}")
    if name == "lastmod" and entry == "url" and namespace == parent_namespace:
        if len(el) == 0 and el.text and el.text.strip():
            out.entry_part(parent, lastmod=el.text.strip()[:100])
        return True
    if name != link or entry not in entries or namespace != parent_namespace:
        return True
    if entry == "entry":  # Atom: rel defaults to "alternate", the page itself
        if el.get("rel", "alternate") != "alternate":
            return True
        return out.add(el.get("href"))
    # Child nodes mean an unexpanded entity reference or markup: not a plain URL.
    text = el.text if len(el) == 0 else None
    if entry == "url" and link == "loc":
        url = _absolute(text)
        if url is not None:
            out.entry_part(parent, url=url)
    return out.add(text, child=entry == "sitemap")


def _xml_error(parser: etree.XMLPullParser) -> str | None:
    errors = parser.feed_error_log.filter_from_errors()
    return f"xml: {errors[0].message.strip()}" if errors else None


def _read_text(data: bytes, out: _Collector, cut: bool) -> str | None:
    """Collect URLs from a plain-text sitemap, one per line; other lines are skipped."""
    text = data.decode("utf-8", errors="replace")
    if cut:  # the last line may be a URL cut in half
        text = text[: text.rfind("\n") + 1]
    most = MAX_ELEMENTS
    for count, line in enumerate(_lines(text), 1):
        if count > most:
            out.stop(STOPPED_ELEMENTS)
            break
        # A line with inner whitespace is prose that merely starts with a URL.
        if len(line.split()) == 1 and not out.add(line):
            break
    return None if out.urls or out.truncated else NOT_A_SITEMAP


def _lines(text: str) -> Iterator[str]:
    """``text.splitlines()``, made _FEED_CHUNK characters at a time: 50 MB of line breaks
    would be a list of 50 M strings. A line longer than that is no URL and is skipped."""
    start = 0
    while start < len(text):
        stop = start + _FEED_CHUNK
        if stop < len(text):
            cut = max(text.rfind(sep, start, stop) for sep in _LINE_BREAKS)
            if cut < start:  # no break in the window: skip to the next one
                found = [i for sep in _LINE_BREAKS if (i := text.find(sep, stop)) >= 0]
                start = min(found) + 1 if found else len(text)
                continue
            stop = cut + 1
        yield from text[start:stop].splitlines()
        start = stop
