"""The crawl's cache of rendered pages' sub-resources (govsi.render.httpcache): RFC 9111
freshness for a private cache, validators, and a bound in bytes."""

from __future__ import annotations

import random

import pytest

from govsi.render.httpcache import ResourceCache, Stored, freshness

NOW = 1_800_000_000.0
DATE = "Fri, 15 Jan 2027 08:00:00 GMT"  # = NOW
HOUR_LATER = "Fri, 15 Jan 2027 09:00:00 GMT"
HOUR_EARLIER = "Fri, 15 Jan 2027 07:00:00 GMT"
DAY = 86400.0
JS = "https://a.gov.si/app.js"

CC = "Cache-Control"


@pytest.mark.parametrize(
    ("status", "headers", "lifetime"),
    [
        # max-age; s-maxage is for shared caches and means nothing here.
        (200, {CC: "max-age=600"}, 600),
        (200, {CC: "public, max-age=600, s-maxage=60"}, 600),
        (200, {CC: "s-maxage=60"}, DAY),
        (302, {CC: "s-maxage=60"}, None),
        (200, {CC: 'max-age="60"'}, 60),
        (200, {"cache-control": "MAX-AGE = 60"}, 60),
        (200, [(CC, "public"), ("CACHE-CONTROL", "max-age=60")], 60),
        # no-store wins over everything, wherever it is; no-cache means "revalidate".
        (200, {CC: "no-store"}, None),
        (200, {CC: "max-age=600, no-store"}, None),
        (200, [(CC, "max-age=600"), (CC, "NO-STORE")], None),
        (200, {CC: "no-cache"}, 0),
        (200, {CC: 'no-cache="Set-Cookie, X-Foo", max-age=600'}, 0),
        (200, {CC: "max-age=0"}, 0),
        # Invalid freshness is stale (RFC 9111 §4.2.1), never fresher.
        (200, {CC: "max-age=-5"}, 0),
        (200, {CC: "max-age=abc"}, 0),
        (200, {CC: "max-age=1.5"}, 0),
        (200, {CC: "max-age"}, 0),
        (200, {CC: "max-age="}, 0),
        (200, {CC: "max-age=\u0666\u0660"}, 0),  # Arabic-Indic digits are not DIGIT
        (200, {CC: 'max-age="6,0"'}, 0),  # the comma stays inside the quotes
        (200, {CC: "max-age=" + "9" * 5000}, 2**31),  # capped (RFC 9111 §1.2.2)
        (200, {CC: "max-age=0000000000000060"}, 60),
        # Fragments that are no directive at all are ignored.
        (200, {CC: ',,;=, =60, "max-age=5", foo=bar'}, DAY),
        # Conflicting duplicates: the most restrictive.
        (200, {CC: "max-age=60, max-age=600"}, 60),
        (200, [(CC, "max-age=600"), (CC, "max-age=60")], 60),
        (200, {CC: "max-age=600, max-age=abc"}, 0),
        # Expires against Date, or against now without one; invalid means expired.
        (200, {"Date": DATE, "Expires": HOUR_LATER}, 3600),
        (200, {"Expires": HOUR_LATER}, 3600),
        (200, {"Date": "yesterday", "Expires": HOUR_LATER}, 3600),
        (200, {"Date": HOUR_EARLIER, "Expires": HOUR_LATER}, 7200),
        (200, {"Date": DATE, "Expires": HOUR_EARLIER}, 0),
        (200, {"Expires": "0"}, 0),
        (200, {"Expires": "Fri, 15 Jan 2027 09:00:00 -0000"}, 3600),  # zone unknown: GMT
        (200, [("Expires", HOUR_LATER), ("Expires", "Fri, 15 Jan 2027 08:01:00 GMT")], 60),
        (200, [("Expires", HOUR_LATER), ("Expires", "soon")], 0),
        (200, {CC: "max-age=60", "Expires": HOUR_LATER}, 60),
        (200, {CC: "max-age=60", "Expires": "0"}, 60),
        # Heuristic: 10 % of the time since Last-Modified, capped; else the crawl's TTL.
        (200, {"Date": DATE, "Last-Modified": HOUR_EARLIER}, 360),
        (200, {"Last-Modified": HOUR_EARLIER}, 360),
        (200, {"Date": DATE, "Last-Modified": "Mon, 01 Jan 2024 00:00:00 GMT"}, DAY),
        (200, {"Date": DATE, "Last-Modified": HOUR_LATER}, 0),  # after Date: read as Date
        (200, {"Last-Modified": "last week"}, DAY),
        (200, {}, DAY),
        # Cacheable by default (RFC 9110 §15.1).
        (203, {}, DAY),
        (204, {}, DAY),
        (300, {}, DAY),
        (301, {}, DAY),
        (308, {}, DAY),
        (404, {}, DAY),
        (405, {}, DAY),
        (410, {}, DAY),
        (414, {}, DAY),
        (501, {}, DAY),
        # Not cacheable by default: stored only with explicit freshness, public or private.
        (302, {}, None),
        (303, {}, None),
        (307, {}, None),
        (403, {}, None),
        (302, {CC: "no-cache"}, None),
        (302, {CC: "max-age=60"}, 60),
        (302, {"Date": DATE, "Expires": HOUR_LATER}, 3600),
        (302, {CC: "public"}, DAY),
        (403, {CC: "private"}, DAY),
        # Server errors are never stored, whatever they say (a choice: see the module).
        (500, {}, None),
        (500, {CC: "max-age=60"}, None),
        (503, {CC: "public, max-age=60"}, None),
        (501, {CC: "max-age=60"}, 60),
        # Never a response the cache can answer with.
        (206, {CC: "max-age=60"}, None),
        (304, {CC: "max-age=60"}, None),
        (101, {CC: "max-age=60"}, None),
        (999, {CC: "max-age=60"}, None),
        # Vary: * never matches a later request; other Vary always do here.
        (200, {"Vary": "*"}, None),
        (200, {"Vary": "Accept-Encoding, *", CC: "max-age=60"}, None),
        (200, {"Vary": "Accept-Encoding", CC: "max-age=60"}, 60),
    ],
)  # fmt: skip
def test_freshness(
    status: int, headers: dict[str, str] | list[tuple[str, str]], lifetime: float | None
) -> None:
    got = freshness(status, headers, NOW, DAY)
    assert got == (None if lifetime is None else pytest.approx(lifetime))


def test_freshness_never_raises_on_hostile_headers() -> None:
    rng = random.Random(9111)
    alphabet = 'max-ge=,;" \\\t0123456789-WGMTFri:/*\x00\r\n\u0666\udcff'
    names = ["Cache-Control", "Expires", "Date", "Last-Modified", "Vary", "Age", "ETag"]
    for _ in range(3000):
        headers = [
            (rng.choice(names), "".join(rng.choices(alphabet, k=rng.randint(0, 40))))
            for _ in range(rng.randint(0, 5))
        ]
        got = freshness(rng.choice([200, 302, 500]), headers, NOW, DAY)
        assert got is None or 0 <= got <= 2**31
        cache = ResourceCache(max_bytes=10_000, max_entry_bytes=1_000, heuristic_ttl=DAY)
        stored = cache.store(JS, 200, headers, b"x", NOW)
        if stored is not None:
            for value in ResourceCache.conditional_headers(stored).values():
                assert "\r" not in value and "\n" not in value and "\x00" not in value


def new_cache(max_bytes: int = 10_000, max_entry_bytes: int = 1_000) -> ResourceCache:
    return ResourceCache(max_bytes=max_bytes, max_entry_bytes=max_entry_bytes, heuristic_ttl=DAY)


def test_fresh_answers_are_served_from_the_cache() -> None:
    cache = new_cache()
    assert cache.lookup(JS, NOW) == ("miss", None)
    stored = cache.store(JS, 200, {CC: "max-age=60"}, b"go()", NOW)
    assert stored is not None and stored.fresh_until == NOW + 60
    assert cache.lookup(JS, NOW + 59) == ("hit", stored)
    # Stale and without a validator: dropped, to be fetched again.
    assert cache.lookup(JS, NOW + 60) == ("miss", None)
    assert len(cache) == 0 and cache.bytes == 0
    assert (cache.hits, cache.misses, cache.refused) == (1, 2, 0)


@pytest.mark.parametrize(
    "headers",
    [
        {CC: "max-age=600", "Age": "500"},  # a cache on the way held it 500 s already
        {CC: "max-age=600", "Date": "Fri, 15 Jan 2027 07:51:40 GMT"},  # sent 500 s ago
        {CC: "max-age=600", "Age": "500", "Date": "Fri, 15 Jan 2027 07:59:00 GMT"},
    ],
)
def test_a_response_already_aged_on_arrival_is_fresh_for_less(headers: dict[str, str]) -> None:
    cache = new_cache()
    cache.store(JS, 200, {**headers, "ETag": '"1"'}, b"x", NOW)
    assert cache.lookup(JS, NOW + 99)[0] == "hit"
    assert cache.lookup(JS, NOW + 101)[0] == "stale"


def test_a_stale_answer_with_a_validator_is_revalidated() -> None:
    cache = new_cache()
    headers = {
        CC: "no-cache",
        "ETag": '"v1"',
        "Last-Modified": HOUR_EARLIER,
        "Content-Type": "application/json",
        "Content-Length": "2",
        "X-Served-By": "old",
    }
    cache.store("https://a.gov.si/menu", 200, headers, b"[]", NOW)
    state, stored = cache.lookup("https://a.gov.si/menu", NOW)
    assert state == "stale" and stored is not None
    assert cache.conditional_headers(stored) == {
        "If-None-Match": '"v1"',
        "If-Modified-Since": HOUR_EARLIER,
    }
    assert (cache.hits, cache.misses) == (0, 0)  # settled by the revalidation
    # A 304 makes it fresh for its new lifetime; the body and what describes it stay.
    answer = {
        CC: "max-age=30",
        "ETag": '"v1"',
        "x-served-by": "new",
        "Content-Type": "text/html",
        "Content-Length": "0",
    }
    fresh = cache.revalidated("https://a.gov.si/menu", answer, NOW + 5)
    assert fresh is not None and fresh.body == b"[]" and fresh.status == 200
    assert (fresh.stored_at, fresh.fresh_until, fresh.etag) == (NOW + 5, NOW + 35, '"v1"')
    assert sorted(fresh.headers) == sorted(
        [
            ("ETag", '"v1"'),
            ("Last-Modified", HOUR_EARLIER),
            ("Content-Type", "application/json"),
            ("Content-Length", "2"),
            (CC, "max-age=30"),
            ("x-served-by", "new"),
        ]
    )
    assert cache.lookup("https://a.gov.si/menu", NOW + 34) == ("hit", fresh)
    assert cache.lookup("https://a.gov.si/menu", NOW + 36)[0] == "stale"
    assert cache.revalidations == 1 and cache.bytes == fresh.size
    assert cache.revalidated("https://a.gov.si/other", {}, NOW) is None
    assert cache.revalidations == 1


def test_a_304_without_date_is_not_aged_by_the_old_date() -> None:
    cache = new_cache()
    cache.store(JS, 200, {"Date": DATE, CC: "max-age=60", "ETag": '"1"'}, b"x", NOW)
    fresh = cache.revalidated(JS, {CC: "max-age=60"}, NOW + 3600)
    assert fresh is not None and fresh.fresh_until == NOW + 3660


@pytest.mark.parametrize(
    ("stored_etag", "answer", "matches"),
    [
        ('"v1"', {"ETag": '"v1"'}, True),
        ('"v1"', {"ETag": '"v2"'}, False),
        ('W/"v1"', {"ETag": 'W/"v1"'}, True),
        ('"v1"', {"ETag": 'W/"v1"'}, True),  # weak comparison for a weak validator
        ('W/"v1"', {"ETag": '"v1"'}, False),  # a strong one must be the same strong one
        (None, {"ETag": '"v1"'}, False),
        (None, {"Last-Modified": HOUR_EARLIER}, True),
        (None, {"Last-Modified": DATE}, False),
        ('"v1"', {}, True),  # no validator: it answered the one we sent
    ],
)
def test_a_304_refreshes_only_the_representation_it_names(
    stored_etag: str | None, answer: dict[str, str], matches: bool
) -> None:
    cache = new_cache()
    headers = {CC: "no-cache", "Last-Modified": HOUR_EARLIER}
    if stored_etag is not None:
        headers["ETag"] = stored_etag
    cache.store(JS, 200, headers, b"x", NOW)
    fresh = cache.revalidated(JS, {**answer, CC: "max-age=60"}, NOW)
    assert (fresh is not None) is matches
    # Otherwise it is dropped: the caller fetches it again without conditions.
    assert cache.lookup(JS, NOW)[0] == ("hit" if matches else "miss")


def test_a_304_that_forbids_storing_answers_once_and_drops_the_entry() -> None:
    cache = new_cache()
    cache.store(JS, 200, {CC: "no-cache", "ETag": '"1"'}, b"x", NOW)
    fresh = cache.revalidated(JS, {CC: "no-store"}, NOW)
    assert fresh is not None and fresh.body == b"x"
    assert len(cache) == 0 and cache.bytes == 0 and cache.revalidations == 1


def test_what_must_not_or_need_not_be_stored_is_not() -> None:
    cache = new_cache(max_entry_bytes=100)
    assert cache.store("https://a.gov.si/a", 200, {CC: "no-store"}, b"x", NOW) is None
    assert cache.store("https://a.gov.si/b", 500, {CC: "max-age=60"}, b"x", NOW) is None
    assert cache.store("https://a.gov.si/c", 200, {}, b"x" * 101, NOW) is None  # too large
    assert cache.store("https://a.gov.si/d", 200, {"Vary": "*"}, b"x", NOW) is None
    # Stale at once and nothing to revalidate with: it could never be used.
    assert cache.store("https://a.gov.si/e", 200, {CC: "no-cache"}, b"x", NOW) is None
    assert cache.store("https://a.gov.si/f", 200, {CC: "max-age=5", "Age": "9"}, b"x", NOW) is None
    assert len(cache) == 0 and cache.bytes == 0 and cache.refused == 6
    assert cache.store("https://a.gov.si/g", 200, {}, b"x" * 100, NOW) is not None


def test_a_newer_response_replaces_the_stored_one_even_when_it_is_not_kept() -> None:
    cache = new_cache()
    cache.store(JS, 200, {CC: "max-age=0", "ETag": '"1"'}, b"old", NOW)
    assert cache.store(JS, 200, {CC: "no-store"}, b"new", NOW + 1) is None
    assert cache.lookup(JS, NOW + 1) == ("miss", None)
    assert cache.bytes == 0


def test_connection_fields_are_not_stored_and_validators_are_safe_to_send() -> None:
    cache = new_cache()
    headers = [
        ("Connection", "close, X-Hop"),
        ("X-Hop", "1"),
        ("Keep-Alive", "timeout=5"),
        ("Transfer-Encoding", "chunked"),
        ("Content-Type", "text/javascript"),
        ("ETag", '"a"\r\nX-Injected: 1'),
        ("Last-Modified", "not a date"),
    ]
    stored = cache.store(JS, 200, headers, b"go()", NOW)
    assert stored is not None
    assert [k for k, _ in stored.headers] == ["Content-Type", "ETag", "Last-Modified"]
    assert stored.etag is None and stored.last_modified is None
    assert cache.conditional_headers(stored) == {}


def test_size_counts_the_body_and_the_headers() -> None:
    stored = Stored(JS, 200, (("ETag", '"1"'),), b"12345", NOW, NOW, '"1"', None)
    assert stored.size == 5 + len("ETag") + len('"1"')


def test_the_cache_keeps_to_its_bytes_dropping_the_least_recently_used() -> None:
    cache = new_cache(max_bytes=1_000)
    for name in "abc":
        cache.store(f"https://a.gov.si/{name}", 200, {}, b"x" * 300, NOW)
    assert len(cache) == 3 and cache.bytes == 900
    cache.lookup("https://a.gov.si/a", NOW)  # a is used again: b is now the oldest
    cache.store("https://a.gov.si/d", 200, {}, b"x" * 300, NOW)
    assert cache.bytes == 900 and cache.evictions == 1
    assert cache.lookup("https://a.gov.si/b", NOW) == ("miss", None)
    # Then c, the oldest left, goes for an entry that needs two slots' room.
    cache.store("https://a.gov.si/e", 200, {}, b"x" * 350, NOW)
    assert cache.evictions == 2
    assert [cache.lookup(f"https://a.gov.si/{n}", NOW)[0] for n in "acde"] == [
        "hit",
        "miss",
        "hit",
        "hit",
    ]
    # Storing a URL again replaces it, and its bytes are counted once.
    replaced = cache.store("https://a.gov.si/d", 200, {}, b"y" * 10, NOW)
    assert cache.lookup("https://a.gov.si/d", NOW) == ("hit", replaced)
    assert cache.bytes == 300 + 10 + 350 and len(cache) == 3


def test_an_entry_that_could_never_fit_evicts_nothing() -> None:
    cache = new_cache(max_bytes=500, max_entry_bytes=1_000)
    cache.store("https://a.gov.si/a", 200, {}, b"x" * 300, NOW)
    assert cache.store("https://a.gov.si/b", 200, {}, b"x" * 600, NOW) is None
    assert cache.lookup("https://a.gov.si/a", NOW)[0] == "hit"
    assert (cache.evictions, cache.refused) == (0, 1)
