"""The Atom 1.0 feed (RFC 4287) of a Changes filter's newest changes, as bytes (pure).

Ids are ``tag:`` URIs (RFC 4151) under crawldb's crawl id (``store.crawltables.crawl_id``,
made once by a crawldb's first run), so a feed reader sees the same ids from any run or
process of ``scrapy serve`` over that crawldb, and new ones after FRESH_START (whose
``page_change`` ids may come again): a change's entry ``tag:govsi,2026:<crawl id>/change/<id>``,
a filter's feed ``tag:govsi,2026:<crawl id>/changes?<canonical params>``. The canonical
params (``canonical_params``) are the request's filter as written, not as resolved, so
``since=7d`` names one feed whenever it is asked for. An entry's ``updated`` is the visit
that found the change; its ``alternate`` link the page, ``related`` its diff; its summary
the words added and removed. Written with lxml (escaping its own); every crawled string
through ``showing.shown`` first, as lxml refuses XML 1.0's forbidden characters.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Final
from urllib.parse import quote, urlencode

from lxml import etree
from lxml.builder import ElementMaker

from govsi.changes.query import ChangeEntry
from govsi.changes.showing import kind_label, link_target, shown

__all__ = [
    "ATOM_TYPE",
    "FILTER_KEYS",
    "canonical_params",
    "entry_id",
    "feed_document",
    "feed_id",
]

ATOM_TYPE: Final = "application/atom+xml; charset=utf-8"
ATOM_NS: Final = "http://www.w3.org/2005/Atom"
# The query parameters that make a filter (ChangeFilter.from_params's); the lists among them.
FILTER_KEYS: Final = ("q", "since", "until", "host", "kind", "type")
_LISTS: Final = frozenset({"host", "kind", "type"})
_TAG: Final = "tag:govsi,2026:"
_SCHEME: Final = "https://govsi.invalid/changes/"  # categories' schemes: names, never fetched
_TITLE_CHARS: Final = 300
_PARAM_CHARS: Final = 500
_A = ElementMaker(namespace=ATOM_NS, nsmap={None: ATOM_NS})


def canonical_params(params: Mapping[str, str]) -> dict[str, str]:
    """The filter's params in one spelling: only ``FILTER_KEYS``, sorted; list values
    lower-cased, split on commas, deduplicated and sorted; whitespace collapsed; empty
    ones dropped; each at most 500 characters."""
    out: dict[str, str] = {}
    for key in sorted(FILTER_KEYS):
        value = " ".join(params.get(key, "")[:_PARAM_CHARS].split())
        if key in _LISTS:
            value = ",".join(sorted({v.strip().lower() for v in value.split(",")} - {""}))
        if value:
            out[key] = value
    return out


def _query(params: Mapping[str, str]) -> str:
    return urlencode(canonical_params(params), quote_via=quote, safe=",")


def feed_id(crawl_id: str, params: Mapping[str, str]) -> str:
    """The feed's id: one per crawldb and filter, however its params were written."""
    query = _query(params)
    return f"{_TAG}{quote(crawl_id, safe='')}/changes" + (f"?{query}" if query else "")


def entry_id(crawl_id: str, change_id: int) -> str:
    """The id of change ``change_id``'s entry: one per crawldb and ``page_change`` row."""
    return f"{_TAG}{quote(crawl_id, safe='')}/change/{change_id}"


def _time(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")  # crawldb's times are naive UTC


def summary(entry: ChangeEntry) -> str:
    """What an entry says of its change: its kind, and the words added and removed."""
    parts = [f"Stran {kind_label(entry.kind)}."]
    if entry.added:
        parts.append(f"Dodano: {shown(entry.added, 1000)}")
    if entry.removed:
        parts.append(f"Odstranjeno: {shown(entry.removed, 1000)}")
    return " ".join(parts)


def _entry(entry: ChangeEntry, crawl_id: str, base: str) -> etree._Element:
    title = shown(entry.title, _TITLE_CHARS) or shown(entry.url, _TITLE_CHARS)
    element = _A.entry(
        _A.id(entry_id(crawl_id, entry.id)),
        _A.title(f"{kind_label(entry.kind)}: {title}", type="text"),
        _A.updated(_time(entry.time)),
    )
    if (href := link_target(entry.url)) is not None:
        element.append(_A.link(rel="alternate", href=href))
    element.append(_A.link(rel="related", type="text/html", href=f"{base}/changes/{entry.id}",
                           title="razlike"))  # fmt: skip
    element.append(_A.category(term=shown(entry.kind, 20), scheme=_SCHEME + "kind",
                               label=kind_label(entry.kind)))  # fmt: skip
    if entry.doc_type:
        element.append(_A.category(term=shown(entry.doc_type, 20), scheme=_SCHEME + "type"))
    element.append(_A.summary(summary(entry), type="text"))
    return element


def feed_document(
    entries: Sequence[ChangeEntry],
    *,
    crawl_id: str,
    params: Mapping[str, str],
    base: str,
    now: datetime,
) -> bytes:
    """The feed of ``entries`` (newest first, as listed) for the filter ``params``, its
    links under ``base`` (``http://host:port``, no final slash): UTF-8 XML. Its
    ``updated`` is the newest entry's visit, ``now`` when there is none."""
    query = _query(params)
    shown_filter = shown(", ".join(f"{k}={v}" for k, v in canonical_params(params).items()),
                         _TITLE_CHARS)  # fmt: skip
    feed = _A.feed(
        _A.id(feed_id(crawl_id, params)),
        _A.title("govsi: spremembe" + (f" ({shown_filter})" if shown_filter else ""), type="text"),
        _A.updated(_time(max((e.time for e in entries), default=now))),
        _A.link(rel="self", type="application/atom+xml",
                href=f"{base}/changes.atom" + (f"?{query}" if query else "")),
        _A.link(rel="alternate", type="text/html",
                href=f"{base}/changes" + (f"?{query}" if query else "")),
        _A.author(_A.name("govsi")),
        _A.generator("govsi"),
    )  # fmt: skip
    for entry in entries:
        feed.append(_entry(entry, crawl_id, base))
    return bytes(etree.tostring(feed, xml_declaration=True, encoding="utf-8"))
