"""The crawl's cache of what rendered pages' scripts fetch, under HTTP's caching rules
(RFC 9111, as a private cache), so that a site template's scripts cost one request per
host for the crawl, not one per page. Pure: time is passed in.

- ``freshness``: how long a response may be reused without asking the server again, or
  None when it must not be stored (``no-store``, ``Vary: *``, a status not cacheable by
  default without explicit freshness). ``max-age`` first (``s-maxage`` is for shared
  caches), then ``Expires`` against ``Date``, then a heuristic: 10 % of the time since
  ``Last-Modified``, capped, and with nothing at all the caller's TTL, since a crawl is a
  snapshot and a script without caching headers must not be fetched for every page.
  Malformed values are ignored, never fatal.
- ``ResourceCache``: an LRU bounded in bytes; a stale entry with a validator is offered for
  revalidation (``If-None-Match``/``If-Modified-Since``, then ``revalidated`` on a 304).
"""

from __future__ import annotations

import email.utils
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

__all__ = ["ResourceCache", "Stored", "freshness"]

# Cacheable by default (RFC 9110 §15.1); partial content (206) is never stored here.
_CACHEABLE = frozenset({200, 203, 204, 300, 301, 308, 404, 405, 410, 414, 501})


@dataclass(frozen=True)
class Stored:
    url: str
    status: int
    headers: tuple[tuple[str, str], ...]
    body: bytes
    stored_at: float
    fresh_until: float
    etag: str | None
    last_modified: str | None

    @property
    def size(self) -> int:
        return len(self.body) + sum(len(k) + len(v) for k, v in self.headers)


def _items(headers: Mapping[str, str] | Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    pairs = headers.items() if isinstance(headers, Mapping) else headers
    return [(str(k).lower(), str(v)) for k, v in pairs]


def _date(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return email.utils.parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError, IndexError, OverflowError):
        return None


def freshness(
    status: int,
    headers: Mapping[str, str] | Iterable[tuple[str, str]],
    now: float,
    heuristic_ttl: float,
) -> float | None:
    items = _items(headers)
    directives: dict[str, str | None] = {}
    for k, v in items:
        if k == "cache-control":
            for part in v.split(","):
                name, _, arg = part.strip().partition("=")
                directives.setdefault(name.strip().lower(), arg.strip().strip('"') or None)
    if "no-store" in directives:
        return None
    if any(k == "vary" and v.strip() == "*" for k, v in items):
        return None
    if "no-cache" in directives:
        return 0.0
    if "max-age" in directives:
        try:
            return max(0.0, float(int(directives["max-age"] or "")))
        except ValueError:
            pass
    get = dict(items).get
    if status not in _CACHEABLE:
        return None
    date = _date(get("date")) or now
    if get("expires") is not None:
        expires = _date(get("expires"))
        return max(0.0, expires - date) if expires is not None else 0.0
    modified = _date(get("last-modified"))
    if modified is not None and modified < date:
        return min(heuristic_ttl, 0.1 * (date - modified))
    return heuristic_ttl


class ResourceCache:
    def __init__(self, max_bytes: int, max_entry_bytes: int, heuristic_ttl: float) -> None:
        self.max_bytes = max_bytes
        self.max_entry_bytes = max_entry_bytes
        self.heuristic_ttl = heuristic_ttl
        self._entries: OrderedDict[str, Stored] = OrderedDict()
        self.bytes = 0
        self.hits = self.misses = self.revalidations = self.evictions = self.refused = 0

    def __len__(self) -> int:
        return len(self._entries)

    def store(
        self,
        url: str,
        status: int,
        headers: Mapping[str, str] | Iterable[tuple[str, str]],
        body: bytes,
        now: float,
    ) -> Stored | None:
        items = _items(headers)
        lifetime = freshness(status, items, now, self.heuristic_ttl)
        if lifetime is None or len(body) > self.max_entry_bytes:
            self.refused += 1
            return None
        get = dict(items).get
        stored = Stored(
            url, status, tuple(headers.items() if isinstance(headers, Mapping) else headers),
            body, now, now + lifetime, get("etag"), get("last-modified"),
        )  # fmt: skip
        self._drop(url)
        self._entries[url] = stored
        self.bytes += stored.size
        while self.bytes > self.max_bytes and self._entries:
            _, old = self._entries.popitem(last=False)
            self.bytes -= old.size
            self.evictions += 1
        return stored if url in self._entries else None

    def _drop(self, url: str) -> None:
        old = self._entries.pop(url, None)
        if old is not None:
            self.bytes -= old.size

    def lookup(self, url: str, now: float) -> tuple[str, Stored | None]:
        stored = self._entries.get(url)
        if stored is None:
            self.misses += 1
            return "miss", None
        self._entries.move_to_end(url)
        if now < stored.fresh_until:
            self.hits += 1
            return "hit", stored
        if stored.etag or stored.last_modified:
            return "stale", stored
        self._drop(url)
        self.misses += 1
        return "miss", None

    @staticmethod
    def conditional_headers(stored: Stored) -> dict[str, str]:
        out = {}
        if stored.etag:
            out["If-None-Match"] = stored.etag
        if stored.last_modified:
            out["If-Modified-Since"] = stored.last_modified
        return out

    def revalidated(
        self, url: str, headers: Mapping[str, str] | Iterable[tuple[str, str]], now: float
    ) -> Stored | None:
        """A 304 for a stale entry: its headers updated from the 304's (RFC 9111 §4.3.4),
        its freshness counted again; None when the entry is gone."""
        stored = self._entries.get(url)
        if stored is None:
            return None
        updates = _items(headers)
        names = {k for k, _ in updates}
        merged = tuple((k, v) for k, v in stored.headers if k.lower() not in names)
        self.revalidations += 1
        return self.store(url, stored.status, merged + tuple(updates), stored.body, now)
