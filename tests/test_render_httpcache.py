"""The crawl's cache of rendered pages' sub-resources (govsi.render.httpcache): RFC 9111
freshness for a private cache, validators, and a bound in bytes."""

from __future__ import annotations

import pytest

from govsi.render.httpcache import ResourceCache, freshness

NOW = 1_800_000_000.0
DATE = "Fri, 15 Jan 2027 08:00:00 GMT"  # = NOW
DAY = 86400.0


@pytest.mark.parametrize(
    ("status", "headers", "lifetime"),
    [
        (200, {"Cache-Control": "max-age=600"}, 600),
        (200, {"Cache-Control": "public, max-age=600, s-maxage=60"}, 600),  # private cache
        (200, {"Cache-Control": 'max-age="60"'}, 60),
        (200, {"cache-control": "MAX-AGE=60"}, 60),
        (200, {"Cache-Control": "no-store"}, None),
        (200, {"Cache-Control": "max-age=600, no-store"}, None),
        (200, {"Cache-Control": "no-cache"}, 0),  # stored, revalidated before each use
        (200, {"Cache-Control": "max-age=0"}, 0),
        (200, {"Cache-Control": "max-age=-5"}, 0),
        # Malformed directives are ignored, never fatal.
        (200, {"Cache-Control": "max-age=abc"}, DAY),
        (200, {"Cache-Control": ",,;=, max-age"}, DAY),
        # Expires against Date; an invalid Expires means already stale.
        (200, {"Date": DATE, "Expires": "Fri, 15 Jan 2027 09:00:00 GMT"}, 3600),
        (200, {"Date": DATE, "Expires": "Thu, 14 Jan 2027 09:00:00 GMT"}, 0),
        (200, {"Expires": "0"}, 0),
        (200, {"Cache-Control": "max-age=60", "Expires": "Fri, 15 Jan 2027 09:00:00 GMT"}, 60),
        # Heuristic: 10 % of the time since Last-Modified, capped; else the crawl's TTL.
        (200, {"Date": DATE, "Last-Modified": "Fri, 15 Jan 2027 07:00:00 GMT"}, 360),
        (200, {"Date": DATE, "Last-Modified": "Mon, 01 Jan 2024 00:00:00 GMT"}, DAY),
        (200, {}, DAY),
        (404, {}, DAY),  # cacheable by default
        (301, {}, DAY),
        # Not cacheable by default: stored only with explicit freshness.
        (302, {}, None),
        (500, {}, None),
        (302, {"Cache-Control": "max-age=60"}, 60),
        (200, {"Vary": "*"}, None),
    ],
)  # fmt: skip
def test_freshness(status: int, headers: dict[str, str], lifetime: float | None) -> None:
    got = freshness(status, headers, NOW, DAY)
    assert got == (None if lifetime is None else pytest.approx(lifetime))


def test_fresh_answers_are_served_from_the_cache() -> None:
    cache = ResourceCache(max_bytes=10_000, max_entry_bytes=1_000, heuristic_ttl=DAY)
    assert cache.lookup("https://a.gov.si/app.js", NOW) == ("miss", None)
    cache.store("https://a.gov.si/app.js", 200, {"Cache-Control": "max-age=60"}, b"go()", NOW)
    state, stored = cache.lookup("https://a.gov.si/app.js", NOW + 59)
    assert state == "hit" and stored is not None and stored.body == b"go()"
    # Stale and without a validator: gone, fetched again.
    assert cache.lookup("https://a.gov.si/app.js", NOW + 61) == ("miss", None)
    assert len(cache) == 0
    assert (cache.hits, cache.misses) == (1, 2)


def test_a_stale_answer_with_a_validator_is_revalidated() -> None:
    cache = ResourceCache(max_bytes=10_000, max_entry_bytes=1_000, heuristic_ttl=DAY)
    headers = {"Cache-Control": "no-cache", "ETag": '"v1"', "Last-Modified": DATE}
    cache.store("https://a.gov.si/menu", 200, headers, b"[]", NOW)
    state, stored = cache.lookup("https://a.gov.si/menu", NOW)
    assert state == "stale" and stored is not None
    assert cache.conditional_headers(stored) == {
        "If-None-Match": '"v1"',
        "If-Modified-Since": DATE,
    }
    # A 304 makes it fresh for its new lifetime; the body stays.
    fresh = cache.revalidated("https://a.gov.si/menu", {"Cache-Control": "max-age=30"}, NOW)
    assert fresh is not None and fresh.body == b"[]" and fresh.etag == '"v1"'
    assert cache.lookup("https://a.gov.si/menu", NOW + 10)[0] == "hit"
    assert cache.revalidations == 1
    assert cache.revalidated("https://a.gov.si/other", {}, NOW) is None


def test_what_must_not_be_stored_is_not() -> None:
    cache = ResourceCache(max_bytes=10_000, max_entry_bytes=100, heuristic_ttl=DAY)
    assert cache.store("https://a.gov.si/a", 200, {"Cache-Control": "no-store"}, b"x", NOW) is None
    assert cache.store("https://a.gov.si/b", 500, {}, b"x", NOW) is None
    assert cache.store("https://a.gov.si/c", 200, {}, b"x" * 101, NOW) is None  # too large
    assert len(cache) == 0 and cache.refused == 3


def test_the_cache_keeps_to_its_bytes_dropping_the_least_recently_used() -> None:
    cache = ResourceCache(max_bytes=1_000, max_entry_bytes=1_000, heuristic_ttl=DAY)
    for name in ("a", "b", "c"):
        cache.store(f"https://a.gov.si/{name}", 200, {}, b"x" * 300, NOW)
    cache.lookup("https://a.gov.si/a", NOW)  # a is used again: b is now the oldest
    cache.store("https://a.gov.si/d", 200, {}, b"x" * 300, NOW)
    assert cache.bytes <= 1_000
    assert cache.lookup("https://a.gov.si/b", NOW)[0] == "miss"
    assert {cache.lookup(f"https://a.gov.si/{n}", NOW)[0] for n in "acd"} == {"hit"}
    assert cache.evictions == 1
    # Storing a URL again replaces it, and its bytes are counted once.
    cache.store("https://a.gov.si/d", 200, {}, b"y" * 10, NOW)
    assert cache.lookup("https://a.gov.si/d", NOW)[1].body == b"y" * 10  # type: ignore[union-attr]
