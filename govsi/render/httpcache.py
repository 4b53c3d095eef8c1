"""The crawl's cache of what rendered pages' scripts fetch, under HTTP's caching rules
(RFC 9111, as a private cache), so that a site template's scripts cost one request per
host for the crawl, not one per page. Pure: no I/O, and time is passed in (``now``, the
caller's ``time.time()``).

``freshness`` says how long a response may be reused without asking the server again
(None: it must not be stored); ``ResourceCache`` is an LRU bounded in bytes that offers a
stale entry with a validator for revalidation (``conditional_headers``, then
``revalidated`` with the 304's headers). Hostile or broken headers never raise. The choices
where RFC 9111 leaves one, and why: docs/rendering.md, "The sub-resource cache".
Hand-written, not hishel, Scrapy's RFC2616Policy or CacheControl: each breaks RFC 9111
rules on cases a crawl meets, and costs far more per lookup (bench/README, bench.http_cache).
"""

from __future__ import annotations

import email.utils
import re
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import UTC
from typing import Literal

__all__ = ["CacheState", "ResourceCache", "Stored", "freshness", "same_representation"]

Headers = Mapping[str, str] | Iterable[tuple[str, str]]
# What the cache holds for a URL (``ResourceCache.lookup``).
CacheState = Literal["hit", "stale", "miss"]

# Cacheable by default (RFC 9110 §15.1); partial content (206) is never stored here.
_CACHEABLE = frozenset({200, 203, 204, 300, 301, 308, 404, 405, 410, 414, 501})
# A range of a body, or a 304 with none, is not a response the cache can answer with.
_NEVER = frozenset({206, 304})
# RFC 9111 §1.2.2: the largest delta-seconds a cache need represent.
_DELTA_MAX = 2**31
_DIGITS = re.compile(r"[0-9]+")
# Hop-by-hop fields (RFC 9110 §7.6.1) describe one connection, not the response, and
# RFC 9111 §3.1 forbids storing them.
_HOP_BY_HOP = frozenset(
    {"connection", "keep-alive", "proxy-connection", "te", "transfer-encoding", "upgrade"}
)
# A 304 has no body, so what it says about a body's framing or form must not replace what
# describes the stored body (RFC 9111 §3.2 names Content-Length; browsers keep these too).
_BODY_FIELDS = frozenset({"content-length", "content-encoding", "content-range", "content-type"})
# Validators go back to the server in request headers: never with line breaks or NULs.
_UNSAFE = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")


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


def _pairs(headers: Headers) -> list[tuple[str, str]]:
    pairs = headers.items() if isinstance(headers, Mapping) else headers
    return [(str(k), str(v)) for k, v in pairs]


def _lowered(pairs: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    return [(k.strip().lower(), v) for k, v in pairs]


def _all(items: list[tuple[str, str]], name: str) -> list[str]:
    return [v for k, v in items if k == name]


def _first(items: list[tuple[str, str]], name: str) -> str | None:
    return next((v for k, v in items if k == name), None)


def _date(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        parsed = email.utils.parsedate_to_datetime(value.strip())
        # A zone the parser does not know comes back naive; HTTP dates are all GMT, and
        # a naive value would otherwise be read in the machine's local zone.
        if parsed.tzinfo is None:
            parsed = parsed.replace(tzinfo=UTC)
        return parsed.timestamp()
    except (TypeError, ValueError, IndexError, OverflowError):
        return None


def _delta_seconds(value: str | None) -> int | None:
    if value is None or not _DIGITS.fullmatch(value):
        return None
    digits = value.lstrip("0") or "0"
    # Capped before int(): a hostile thousand-digit value must neither overflow a float
    # nor trip Python's limit on converting long digit strings.
    return _DELTA_MAX if len(digits) > 10 else min(int(digits), _DELTA_MAX)


def _split_list(value: str) -> list[str]:
    """A comma-separated header value's members; commas inside quoted strings stay."""
    parts: list[str] = []
    start, quoted, escaped = 0, False, False
    for i, ch in enumerate(value):
        if escaped:
            escaped = False
        elif quoted:
            if ch == "\\":
                escaped = True
            elif ch == '"':
                quoted = False
        elif ch == '"':
            quoted = True
        elif ch == ",":
            parts.append(value[start:i])
            start = i + 1
    parts.append(value[start:])
    return parts


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] == '"':
        return re.sub(r"\\(.)", r"\1", value[1:-1], flags=re.DOTALL)
    return value


def _cache_control(items: list[tuple[str, str]]) -> dict[str, list[str | None]]:
    """Every directive of every Cache-Control line, by lower-cased name, in order."""
    directives: dict[str, list[str | None]] = {}
    for line in _all(items, "cache-control"):
        for member in _split_list(line):
            name, eq, arg = member.partition("=")
            name = name.strip().lower()
            if name:
                directives.setdefault(name, []).append(_unquote(arg.strip()) if eq else None)
    return directives


def _freshness(
    status: int, items: list[tuple[str, str]], now: float, heuristic_ttl: float
) -> float | None:
    cc = _cache_control(items)
    if "no-store" in cc:
        return None
    if any(m.strip() == "*" for line in _all(items, "vary") for m in _split_list(line)):
        return None  # varies on something outside the request: it never matches
    if status in _NEVER or not 200 <= status < 600 or (status >= 500 and status != 501):
        return None
    expires = _all(items, "expires")
    # RFC 9111 §3: a status not cacheable by default is storable with explicit freshness
    # or an explicit public/private (the latter for a private cache like this one).
    if status not in _CACHEABLE and not (expires or {"max-age", "public", "private"} & cc.keys()):
        return None
    if "no-cache" in cc:
        return 0.0  # stored, but revalidated before every reuse
    if "max-age" in cc:
        ages = [_delta_seconds(arg) for arg in cc["max-age"]]
        return float(min(a if a is not None else 0 for a in ages))
    date = _date(_first(items, "date"))
    origin = now if date is None else date
    if expires:
        # An invalid date, "0" above all, means already expired (RFC 9111 §5.3).
        times = [_date(v) for v in expires]
        return max(0.0, min(t - origin if t is not None else 0.0 for t in times))
    modified = _date(_first(items, "last-modified"))
    if modified is not None:
        # A Last-Modified after Date is the server's clock lying; RFC 9110 §8.8.2.1 reads
        # it as Date, so the heuristic gives nothing and the entry is revalidated.
        return min(heuristic_ttl, 0.1 * max(0.0, origin - modified))
    # No caching headers at all: RFC 9111 §4.2.2 lets a cache choose. A crawl is a
    # snapshot, and a template's script sent without caching headers must not be fetched
    # again for every page, so it is kept for the crawl's TTL.
    return heuristic_ttl


def freshness(status: int, headers: Headers, now: float, heuristic_ttl: float) -> float | None:
    """The freshness lifetime in seconds of a response (0: store, but revalidate before
    reuse), or None when it must not be stored. Never raises on malformed headers."""
    return _freshness(status, _lowered(_pairs(headers)), now, heuristic_ttl)


def _current_age(items: list[tuple[str, str]], now: float) -> float:
    """How old the response already is on arrival (RFC 9111 §4.2.3): the Age a cache on
    the way reports, or the time since its Date, whichever is more."""
    age = _delta_seconds((_first(items, "age") or "").strip()) or 0
    date = _date(_first(items, "date"))
    return float(max(age, 0.0 if date is None else now - date))


def _validator(value: str | None) -> str | None:
    value = (value or "").strip()
    return value if value and not _UNSAFE.search(value) else None


def _opaque(etag: str) -> str:
    return etag[2:] if etag.startswith("W/") else etag


class ResourceCache:
    """Responses by URL, least recently used dropped first once over ``max_bytes``.

    Counters: ``hits`` (fresh lookups), ``misses`` (absent, or stale with no validator),
    ``revalidations`` (entries a 304 refreshed), ``evictions`` (dropped for room),
    ``refused`` (responses not stored). A stale lookup counts as neither hit nor miss: it
    ends in a revalidation or a new ``store``.
    """

    def __init__(self, max_bytes: int, max_entry_bytes: int, heuristic_ttl: float) -> None:
        self.max_bytes = max_bytes
        self.max_entry_bytes = max_entry_bytes
        self.heuristic_ttl = heuristic_ttl
        self._entries: OrderedDict[str, Stored] = OrderedDict()
        self._bytes = 0
        self.hits = 0
        self.misses = 0
        self.revalidations = 0
        self.evictions = 0
        self.refused = 0

    def __len__(self) -> int:
        return len(self._entries)

    def store(
        self, url: str, status: int, headers: Headers, body: bytes, now: float
    ) -> Stored | None:
        """Keep a full response just fetched for ``url``; None when it is not kept (not
        cacheable, body over ``max_entry_bytes``, or never reusable). Either way it
        replaces what was stored for ``url``: it is newer."""
        pairs = _pairs(headers)
        items = _lowered(pairs)
        lifetime = _freshness(status, items, now, self.heuristic_ttl)
        if lifetime is None or len(body) > self.max_entry_bytes:
            self._refuse(url)
            return None
        kept = _storable_fields(pairs)
        kept_items = _lowered(kept)
        stored = Stored(
            url=url,
            status=status,
            headers=kept,
            body=body,
            stored_at=now,
            fresh_until=now + lifetime - _current_age(items, now),
            etag=_validator(_first(kept_items, "etag")),
            last_modified=_last_modified(kept_items),
        )
        if not self._reusable(stored, now) or not self._put(stored):
            self._refuse(url)
            return None
        return stored

    def lookup(self, url: str, now: float) -> tuple[CacheState, Stored | None]:
        """("hit", entry) while fresh; ("stale", entry) when stale but revalidatable (send
        ``conditional_headers``); ("miss", None) otherwise, a useless stale entry dropped."""
        stored = self._entries.get(url)
        if stored is None:
            self.misses += 1
            return "miss", None
        self._entries.move_to_end(url)
        if now < stored.fresh_until:
            self.hits += 1
            return "hit", stored
        if stored.etag is not None or stored.last_modified is not None:
            return "stale", stored
        self._drop(url)
        self.misses += 1
        return "miss", None

    @staticmethod
    def conditional_headers(stored: Stored) -> dict[str, str]:
        """The request headers asking the server whether ``stored`` is still current."""
        out: dict[str, str] = {}
        if stored.etag is not None:
            out["If-None-Match"] = stored.etag
        if stored.last_modified is not None:
            out["If-Modified-Since"] = stored.last_modified
        return out

    def revalidated(self, url: str, headers: Headers, now: float) -> Stored | None:
        """A 304 answered the conditional request for ``url``: the stored entry with its
        headers updated from the 304's (RFC 9111 §4.3.4) and its freshness counted again.
        None when nothing stored matches the 304 (evicted, or the 304 names another
        validator): the caller must fetch unconditionally. When the 304 forbids storing,
        the entry is returned for this one use and dropped."""
        stored = self._entries.get(url)
        if stored is None:
            return None
        updates = [
            (k, v)
            for k, v in _storable_fields(_pairs(headers))
            if k.strip().lower() not in _BODY_FIELDS
        ]
        update_items = _lowered(updates)
        if not same_representation(stored, update_items):
            self._drop(url)
            return None
        names = {k for k, _ in update_items}
        kept = tuple((k, v) for k, v in stored.headers if k.strip().lower() not in names)
        merged = kept + tuple(updates)
        merged_items = _lowered(merged)
        lifetime = _freshness(stored.status, merged_items, now, self.heuristic_ttl)
        self.revalidations += 1
        fresh = replace(
            stored,
            headers=merged,
            stored_at=now,
            # Age from the 304 alone: a Date kept from the old response would make the
            # refreshed entry look as old as the first fetch.
            fresh_until=now + (lifetime or 0.0) - _current_age(update_items, now),
            etag=_validator(_first(merged_items, "etag")),
            last_modified=_last_modified(merged_items),
        )
        if lifetime is None or not self._reusable(fresh, now) or not self._put(fresh):
            self._drop(url)
        return fresh

    # -- internals --------------------------------------------------------------------------
    def _refuse(self, url: str) -> None:
        self.refused += 1
        self._drop(url)

    @staticmethod
    def _reusable(stored: Stored, now: float) -> bool:
        return (
            now < stored.fresh_until or stored.etag is not None or stored.last_modified is not None
        )

    def _put(self, stored: Stored) -> bool:
        """Insert as most recently used and evict for room; False when it can never fit."""
        self._drop(stored.url)
        if stored.size > self.max_bytes:
            return False
        self._entries[stored.url] = stored
        self._bytes += stored.size
        while self._bytes > self.max_bytes:
            # The new entry is last and fits alone, so the loop stops before reaching it.
            _, old = self._entries.popitem(last=False)
            self._bytes -= old.size
            self.evictions += 1
        return True

    def _drop(self, url: str) -> None:
        old = self._entries.pop(url, None)
        if old is not None:
            self._bytes -= old.size

    # Last in the class: within its body the name would shadow the built-in type for
    # annotations and type checkers.
    @property
    def bytes(self) -> int:
        """Total ``Stored.size`` of the entries held."""
        return self._bytes


def _storable_fields(pairs: list[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    lowered = _lowered(pairs)
    listed = {m.strip().lower() for line in _all(lowered, "connection") for m in _split_list(line)}
    return tuple(
        (k, v)
        for (k, v), (name, _) in zip(pairs, lowered, strict=True)
        if name not in _HOP_BY_HOP and name not in listed
    )


def _last_modified(items: list[tuple[str, str]]) -> str | None:
    # An unparsable date is useless as If-Modified-Since: servers must ignore it
    # (RFC 9110 §13.1.3), so revalidating with it would only cost a full response.
    value = _validator(_first(items, "last-modified"))
    return value if value is not None and _date(value) is not None else None


def same_representation(stored: Stored, headers: Headers) -> bool:
    """Whether a 304 speaks of the stored body (RFC 9111 §4.3.4): the same entity tag (a
    strong one compared strongly), else the same Last-Modified; with neither, it answered
    the validators this entry sent."""
    update_items = _lowered(_pairs(headers))
    etag = _validator(_first(update_items, "etag"))
    if etag is not None:
        if stored.etag is None:
            return False
        if etag.startswith("W/"):
            return _opaque(etag) == _opaque(stored.etag)
        return etag == stored.etag
    modified = _date(_first(update_items, "last-modified"))
    if modified is not None and stored.last_modified is not None:
        return modified == _date(stored.last_modified)
    return True
