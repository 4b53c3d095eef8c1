"""Should the cache of rendered pages' sub-resources (``govsi.render.httpcache``) be a
maintained library? Runs RFC 9111 cases, as a private cache, against govsi's and against
each candidate's decision logic used the way govsi would use it: in memory, one entry per
URL, the clock the caller's. Candidates: hishel's RFC 9111 state machine
(``hishel.IdleClient``/``CacheMiss``/``NeedRevalidation``, ``shared=False``), Scrapy's
``RFC2616Policy`` (with what Scrapy's ``HttpCacheMiddleware`` adds: a Date where none
came, the 304's headers over the stored ones) and CacheControl's ``CacheController``
(its default status codes, no heuristic, a ``DictCache``).

Each case stores one response, then asks for its URL ``after`` seconds later: ``hit``
(served from the cache), ``revalidate`` (a conditional request) or ``fetch`` (a full
request). Cases with a 304 answer the conditional request and ask once more. A case is
``must`` (RFC 9111 forbids any other answer: reusing what is stale or never storable),
``reuse`` (RFC 9111 allows reuse and the crawl needs it: else a request per rendered
page) or ``choice`` (where RFC 9111 leaves the choice to the cache: govsi's, see
docs/rendering.md). Then: hostile headers (a raise, or a line break in a conditional
request's header), microseconds per store and per fresh lookup, and memory per entry.

    PYTHONPATH=. python -m bench.http_cache                 # ~40 s
    pip install --target /tmp/httpcache_libs hishel cachecontrol   # the candidates
    PYTHONPATH=. python -m bench.http_cache --libs /tmp/httpcache_libs

A candidate that cannot be imported is left out.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import io
import random
import sys
import time
import tracemalloc
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from email.utils import formatdate
from types import SimpleNamespace
from typing import Any, Literal, Protocol

from bench.lib.results import RESULTS, write_run
from govsi.render.httpcache import ResourceCache

Outcome = Literal["hit", "revalidate", "fetch"]
Pairs = tuple[tuple[str, str], ...]

URL = "https://a.gov.si/static/app.js"
NOW = 1_800_000_000.0
DAY = 86400.0
TTL = DAY  # RENDER_CACHE_TTL
MAX_BYTES = 64 * 1024 * 1024  # RENDER_CACHE_MAX_BYTES
MAX_ENTRY = 10 * 1024 * 1024


def http_date(at: float) -> str:
    return formatdate(at, usegmt=True)


CC = "Cache-Control"
DATE = ("Date", http_date(NOW))
ETAG = ("ETag", '"v1"')


@dataclass(frozen=True)
class Case:
    name: str
    kind: Literal["must", "reuse", "choice"]
    status: int
    headers: Pairs
    after: float
    expect: Outcome
    # A 304 answering the conditional request made ``after`` seconds on, then one more ask.
    answer: Pairs | None = None
    then: float = 0.0
    expect_then: Outcome = "hit"


def case(name: str, kind: Any, status: int, headers: Sequence[tuple[str, str]], after: float,
         expect: Outcome, **more: Any) -> Case:  # fmt: skip
    return Case(name, kind, status, tuple(headers), after, expect, **more)


CASES = [
    case("max-age, fresh", "reuse", 200, [DATE, (CC, "max-age=600")], 300, "hit"),
    case("max-age, stale, no validator", "must", 200, [DATE, (CC, "max-age=600")], 700, "fetch"),
    case("max-age, stale, ETag", "must", 200, [DATE, (CC, "max-age=600"), ETAG], 700, "revalidate"),
    case("max-age, no Date, stale", "must", 200, [(CC, "max-age=600")], 700, "fetch"),
    case("s-maxage ignored (private cache)", "reuse", 200,
         [DATE, (CC, "max-age=600, s-maxage=60")], 300, "hit"),
    case("Age counts (Age 500, max-age 600)", "must", 200,
         [DATE, ("Age", "500"), (CC, "max-age=600")], 200, "fetch"),
    case("Date an hour old counts", "must", 200,
         [("Date", http_date(NOW - 3600)), (CC, "max-age=600")], 1, "fetch"),
    case("Expires - Date, fresh", "reuse", 200,
         [DATE, ("Expires", http_date(NOW + 3600))], 1800, "hit"),
    case("Expires - Date, stale", "must", 200,
         [DATE, ("Expires", http_date(NOW + 3600))], 4000, "fetch"),
    case("Expires: 0 is expired, ETag", "must", 200, [DATE, ("Expires", "0"), ETAG], 1,
         "revalidate"),
    case("max-age over Expires", "must", 200,
         [DATE, (CC, "max-age=60"), ("Expires", http_date(NOW + 3600))], 120, "fetch"),
    case("no-store", "must", 200, [DATE, (CC, "no-store")], 1, "fetch"),
    case("no-store on a second line", "must", 200,
         [DATE, (CC, "no-store"), (CC, "max-age=600")], 1, "fetch"),
    case("no-cache, ETag", "must", 200, [DATE, (CC, "no-cache, max-age=600"), ETAG], 1,
         "revalidate"),
    case("no-cache, no validator", "must", 200, [DATE, (CC, "no-cache, max-age=600")], 1,
         "fetch"),
    case("Cache-Control over two lines", "reuse", 200,
         [DATE, (CC, "max-age=600"), (CC, "public")], 300, "hit"),
    case("must-revalidate, stale, ETag", "must", 200,
         [DATE, (CC, "max-age=60, must-revalidate"), ETAG], 120, "revalidate"),
    case("private (a private cache stores it)", "reuse", 200,
         [DATE, (CC, "private, max-age=600")], 300, "hit"),
    case("Vary: *", "must", 200, [DATE, (CC, "max-age=600"), ("Vary", "*")], 1, "fetch"),
    case("Vary: Accept-Encoding, same request", "reuse", 200,
         [DATE, (CC, "max-age=600"), ("Vary", "Accept-Encoding")], 300, "hit"),
    case("206 never stored", "must", 206, [DATE, (CC, "max-age=600")], 1, "fetch"),
    case("302 without freshness", "must", 302, [DATE], 1, "fetch"),
    case("302 with max-age", "reuse", 302, [DATE, (CC, "max-age=600")], 300, "hit"),
    case("404 with max-age", "reuse", 404, [DATE, (CC, "max-age=600")], 300, "hit"),
    case("301, nothing else (heuristic)", "choice", 301, [DATE], 3600, "hit"),
    case("Last-Modified 10 days ago, 1 h on", "reuse", 200,
         [DATE, ("Last-Modified", http_date(NOW - 10 * DAY))], 3600, "hit"),
    case("Last-Modified 10 days ago, 2 days on", "must", 200,
         [DATE, ("Last-Modified", http_date(NOW - 10 * DAY))], 2 * DAY, "revalidate"),
    case("Last-Modified after Date", "choice", 200,
         [DATE, ("Last-Modified", http_date(NOW + 3600))], 60, "revalidate"),
    case("no caching headers at all, 1 h on", "choice", 200, [DATE], 3600, "hit"),
    case("5xx with max-age not stored", "choice", 503, [DATE, (CC, "max-age=600")], 1,
         "fetch"),
    case("max-age=abc is stale", "must", 200, [DATE, (CC, "max-age=abc"), ETAG], 1,
         "revalidate"),
    case("two max-age: the smaller", "choice", 200, [DATE, (CC, "max-age=60, max-age=600")],
         120, "fetch"),
    case("ETag with a line break never sent", "must", 200,
         [DATE, (CC, "max-age=60"), ("ETag", '"a"\r\nX-Injected: 1')], 120, "fetch"),
    case("304 freshens (with Date)", "reuse", 200, [DATE, (CC, "max-age=60"), ETAG], 120,
         "revalidate", answer=(("Date", http_date(NOW + 120)), ETAG, (CC, "max-age=60")),
         then=150, expect_then="hit"),
    case("304 without Date freshens", "choice", 200, [DATE, (CC, "max-age=60"), ETAG], 120,
         "revalidate", answer=(ETAG, (CC, "max-age=60")), then=150, expect_then="hit"),
    case("304 naming another ETag", "must", 200, [DATE, (CC, "max-age=60"), ETAG], 120,
         "revalidate", answer=(("Date", http_date(NOW + 120)), ("ETag", '"v2"')), then=121,
         expect_then="fetch"),
    case("304 with no-store drops the entry", "must", 200, [DATE, (CC, "max-age=60"), ETAG],
         120, "revalidate", answer=(("Date", http_date(NOW + 120)), ETAG, (CC, "no-store")),
         then=121, expect_then="revalidate"),
]  # fmt: skip

# What a 304 with no-store leaves is the old stale entry at most: revalidate or fetch both
# keep the rule (never reuse it unvalidated); hit breaks it.
_EITHER = {"304 with no-store drops the entry": {"revalidate", "fetch"}}


class Cache(Protocol):
    def store(self, status: int, headers: Pairs, body: bytes, now: float) -> None: ...
    def lookup(self, now: float) -> tuple[Outcome, dict[str, str]]: ...
    def answer_304(self, headers: Pairs, now: float) -> None: ...


@contextlib.contextmanager
def clock(modules: Sequence[tuple[Any, str, Any]], now: float) -> Iterator[None]:
    """The libraries read the time themselves: their module's name for it, set to ``now``."""
    saved = [(m, name, getattr(m, name)) for m, name, _ in modules]
    for m, name, kind in modules:
        setattr(m, name, SimpleNamespace(time=lambda: now) if kind == "module" else lambda: now)
    try:
        yield
    finally:
        for m, name, old in saved:
            setattr(m, name, old)


def grouped(headers: Pairs) -> dict[str, list[str]]:
    """Header lines by name, repeated ones kept apart (as Scrapy's downloader gives them)."""
    out: dict[str, list[str]] = {}
    for k, v in headers:
        out.setdefault(k.lower(), []).append(v)
    return out


class Ours:
    name = "govsi"

    def __init__(self, url: str = URL) -> None:
        self.url = url
        self.cache = ResourceCache(MAX_BYTES, MAX_ENTRY, TTL)

    def store(self, status: int, headers: Pairs, body: bytes, now: float) -> None:
        self.cache.store(self.url, status, headers, body, now)

    def lookup(self, now: float) -> tuple[Outcome, dict[str, str]]:
        state, stored = self.cache.lookup(self.url, now)
        if state == "hit":
            return "hit", {}
        if state == "stale" and stored is not None:
            return "revalidate", ResourceCache.conditional_headers(stored)
        return "fetch", {}

    def answer_304(self, headers: Pairs, now: float) -> None:
        self.cache.revalidated(self.url, headers, now)


class Hishel:
    name = "hishel"

    def __init__(self, url: str = URL) -> None:
        import hishel
        from hishel._core import _spec

        self.h = hishel
        self.spec = [(_spec, "time", "module")]
        self.url = url
        self.options = hishel.CacheOptions(shared=False)
        self.request = hishel.Request("GET", url, hishel.Headers({}))
        self.entries: list[Any] = []
        self.pending: Any = None

    def store(self, status: int, headers: Pairs, body: bytes, now: float) -> None:
        h = self.h
        with clock(self.spec, now):
            state = h.CacheMiss(request=self.request, options=self.options).next(
                h.Response(status, h.Headers(grouped(headers)))
            )
            while isinstance(state, h.InvalidateEntries):
                state = state.next()
        # Newer than what was kept, whatever it says.
        self.entries = [h.Entry(uuid.uuid4(), self.request, state.response)] if isinstance(
            state, h.StoreAndUse) else []  # fmt: skip

    def lookup(self, now: float) -> tuple[Outcome, dict[str, str]]:
        h = self.h
        with clock(self.spec, now):
            state = h.IdleClient(options=self.options).next(self.request, self.entries)
        if isinstance(state, h.FromCache):
            return "hit", {}
        if isinstance(state, h.NeedRevalidation):
            conditional = {
                k: v for k, v in state.request.headers.items() if k.lower().startswith("if-")
            }
            if conditional:
                self.pending = state
                return "revalidate", conditional
        return "fetch", {}

    def answer_304(self, headers: Pairs, now: float) -> None:
        h = self.h
        with clock(self.spec, now):
            state = self.pending.next(h.Response(304, h.Headers(grouped(headers))))
            while True:
                if isinstance(state, h.InvalidateEntries):
                    gone = set(state.entry_ids)
                    self.entries = [e for e in self.entries if e.id not in gone]
                elif isinstance(state, h.NeedToBeUpdated):
                    fresh = {e.id: e for e in state.updating_entries}
                    self.entries = [fresh.get(e.id, e) for e in self.entries]
                elif isinstance(state, h.StoreAndUse):
                    self.entries = [h.Entry(uuid.uuid4(), self.request, state.response)]
                else:
                    break
                state = state.next()


class ScrapyPolicy:
    name = "scrapy RFC2616Policy"

    def __init__(self, url: str = URL) -> None:
        from scrapy import Request
        from scrapy.extensions import httpcache
        from scrapy.http import Response
        from scrapy.settings import Settings

        self.Request, self.Response = Request, Response
        self.spec = [(httpcache, "time", "function")]
        self.policy = httpcache.RFC2616Policy(Settings())
        self.url = url
        self.cached: Any = None
        self.request: Any = None

    def _response(self, status: int, headers: Pairs, body: bytes, now: float) -> Any:
        response = self.Response(self.url, status=status, headers=grouped(headers), body=body)
        # What HttpCacheMiddleware.process_response adds before the policy sees it.
        if b"Date" not in response.headers:
            response.headers[b"Date"] = http_date(now)
        return response

    def store(self, status: int, headers: Pairs, body: bytes, now: float) -> None:
        response = self._response(status, headers, body, now)
        request = self.Request(self.url)
        with clock(self.spec, now):
            keep = self.policy.should_cache_request(request) and self.policy.should_cache_response(
                response, request)  # fmt: skip
        self.cached = response if keep else None

    def lookup(self, now: float) -> tuple[Outcome, dict[str, str]]:
        if self.cached is None:
            return "fetch", {}
        self.request = self.Request(self.url)
        with clock(self.spec, now):
            if self.policy.is_cached_response_fresh(self.cached, self.request):
                return "hit", {}
        conditional = {
            k.decode(): v.decode()
            for k, v in self.request.headers.items()
            for v in v[-1:]
            if k.startswith(b"If-")
        }
        return ("revalidate" if conditional else "fetch"), conditional

    def answer_304(self, headers: Pairs, now: float) -> None:
        response = self._response(304, headers, b"", now)
        with clock(self.spec, now):
            valid = self.policy.is_cached_response_valid(self.cached, response, self.request)
        if not valid:
            self.store(304, headers, b"", now)
            return
        # HttpCacheMiddleware._freshen_cached_response, then stored again (a new object,
        # as its storages give back: the policy memoizes Cache-Control per object).
        merged = self.cached.headers.copy()
        merged.update(response.headers)
        fresh = self.cached.replace(headers=merged)
        with clock(self.spec, now):
            keep = self.policy.should_cache_response(fresh, self.request)
        self.cached = fresh if keep else None


class CacheControlController:
    name = "cachecontrol"

    def __init__(self, url: str = URL) -> None:
        import requests
        from cachecontrol import controller
        from cachecontrol.cache import DictCache
        from urllib3 import HTTPResponse

        self.HTTPResponse = HTTPResponse
        self.spec = [(controller, "time", "module")]
        self.controller = controller.CacheController(DictCache())
        self.url = url
        self.prepared = requests.Request("GET", url).prepare()
        self.requests = requests

    def _response(self, status: int, headers: Pairs, body: bytes) -> Any:
        from urllib3 import HTTPHeaderDict

        fields = HTTPHeaderDict()
        for k, v in headers:
            fields.add(k, v)
        return self.HTTPResponse(body=io.BytesIO(body), headers=fields, status=status,
                                 preload_content=False, decode_content=False)  # fmt: skip

    def store(self, status: int, headers: Pairs, body: bytes, now: float) -> None:
        with clock(self.spec, now):
            self.controller.cache_response(self.prepared, self._response(status, headers, body),
                                           body)  # fmt: skip

    def lookup(self, now: float) -> tuple[Outcome, dict[str, str]]:
        with clock(self.spec, now):
            if self.controller.cached_request(self.prepared):
                return "hit", {}
            conditional = self.controller.conditional_headers(self.prepared)
        return ("revalidate" if conditional else "fetch"), dict(conditional)

    def answer_304(self, headers: Pairs, now: float) -> None:
        with clock(self.spec, now):
            self.controller.update_cached_response(self.prepared,
                                                   self._response(304, headers, b""))  # fmt: skip


CANDIDATES: list[Callable[..., Cache]] = [Ours, Hishel, ScrapyPolicy, CacheControlController]


def available(libs: str | None) -> list[Callable[..., Cache]]:
    if libs:
        sys.path.append(libs)
    out = []
    for make in CANDIDATES:
        try:
            make()
        except ImportError as e:
            print(f"left out {make.__name__}: {e}", flush=True)
        else:
            out.append(make)
    return out


def run_case(make: Callable[..., Cache], c: Case) -> str:
    """What the cache did: the outcome (two, '→'-joined, for a 304 case), or the error."""
    cache = make()
    try:
        cache.store(c.status, c.headers, b"go()", NOW)
        first, conditional = cache.lookup(NOW + c.after)
        if any("\r" in v or "\n" in v for v in conditional.values()):
            return "line break sent"
        if c.answer is None or first != "revalidate":
            return first
        cache.answer_304(c.answer, NOW + c.after)
        then, _ = cache.lookup(NOW + c.then)
        return f"{first}→{then}"
    except Exception as e:
        return f"raised {type(e).__name__}"


def expected(c: Case) -> set[str]:
    if c.answer is None:
        return {c.expect}
    return {f"{c.expect}→{then}" for then in _EITHER.get(c.name, {c.expect_then})}


def hostile(make: Callable[..., Cache], rounds: int) -> dict[str, int]:
    """Random broken headers (tests/test_render_httpcache's alphabet): raises, and line
    breaks or NULs in a conditional request's headers."""
    rng = random.Random(9111)
    alphabet = 'max-ge=,;" \\\t0123456789-WGMTFri:/*\x00\r\n\u0666'
    names = ["Cache-Control", "Expires", "Date", "Last-Modified", "Vary", "Age", "ETag"]
    raised = unsafe = 0
    for _ in range(rounds):
        headers = tuple(
            (rng.choice(names), "".join(rng.choices(alphabet, k=rng.randint(0, 40))))
            for _ in range(rng.randint(0, 5))
        )
        cache = make()
        try:
            cache.store(rng.choice([200, 302, 500]), headers, b"x", NOW)
            _, conditional = cache.lookup(NOW + rng.choice([1, 600, 2 * DAY]))
        except Exception:
            raised += 1
            continue
        unsafe += any(ch in v for v in conditional.values() for ch in "\r\n\x00")
    return {"raised": raised, "unsafe": unsafe}


TYPICAL: Pairs = (
    ("Date", http_date(NOW)),
    ("Content-Type", "application/javascript"),
    ("Content-Length", "1024"),
    ("Cache-Control", "public, max-age=31536000"),
    ("ETag", '"5f1c-1a2b3c"'),
    ("Last-Modified", http_date(NOW - 30 * DAY)),
    ("Vary", "Accept-Encoding"),
    ("Server", "nginx"),
)


def per_call(fn: Callable[[], object], seconds: float) -> float:
    """Microseconds per call, the best of three runs of about ``seconds`` / 3 each."""
    n, start = 0, time.perf_counter()
    while time.perf_counter() - start < 0.05:
        fn()
        n += 1
    batch = max(1, int(n * seconds / 3 / 0.05))
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        for _ in range(batch):
            fn()
        best = min(best, (time.perf_counter() - start) / batch)
    return best * 1e6


def costs(make: Callable[..., Cache], seconds: float, entries: int) -> dict[str, float]:
    body = b"x" * 1024
    cache = make()
    store_us = per_call(lambda: cache.store(200, TYPICAL, body, NOW), seconds)
    cache.store(200, TYPICAL, body, NOW)
    assert cache.lookup(NOW + 60)[0] == "hit", make
    lookup_us = per_call(lambda: cache.lookup(NOW + 60), seconds)
    # Memory: ``entries`` URLs stored, one body object shared by all (its bytes counted
    # only where the library copies it).
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    kept = [make(f"https://a.gov.si/static/{i}.js") for i in range(entries)]
    for c in kept:
        c.store(200, TYPICAL, body, NOW)
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    # The adapters themselves (one per URL here) are not the library's cost: one empty
    # adapter's size taken off each.
    tracemalloc.start()
    base0 = tracemalloc.get_traced_memory()[0]
    empty = [make(f"https://a.gov.si/static/{i}.js") for i in range(entries)]
    base = tracemalloc.get_traced_memory()[0] - base0
    tracemalloc.stop()
    del kept, empty
    return {
        "store_us": store_us,
        "lookup_us": lookup_us,
        "bytes_per_entry": (after - before - base) / entries,
    }


_RANK = {"fetch": 0, "revalidate": 1, "hit": 2}


def verdict(c: Case, got: str) -> str:
    """'' when as expected; '✗' when an RFC 9111 rule is broken (reused what it may not,
    raised, sent a line break); '~' when stricter than needed (a request or a body more);
    '≠' when more lenient than govsi's choice, where RFC 9111 leaves it."""
    want = expected(c)
    if got in want:
        return ""
    if got.startswith(("raised", "line break")):
        return "✗"
    parts, best = got.split("→"), max(want, key=lambda w: sum(_RANK[p] for p in w.split("→")))
    looser = any(_RANK[g] > _RANK[w] for g, w in zip(parts, best.split("→"), strict=False))
    if not looser:
        return "~"
    return "✗" if c.kind == "must" else "≠"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--libs", help="a folder the candidates were installed into")
    parser.add_argument("--hostile", type=int, default=500, help="random header sets")
    parser.add_argument("--seconds", type=float, default=0.5, help="per timing")
    parser.add_argument("--entries", type=int, default=2000, help="for memory per entry")
    args = parser.parse_args()
    makes = available(args.libs)
    names = [m.name for m in makes]  # type: ignore[attr-defined]
    width = max(len(c.name) for c in CASES)
    print(f"{'case':{width}}  kind    {'expected':20} " + "  ".join(f"{n:22}" for n in names))
    marks = {n: {"✗": 0, "~": 0, "≠": 0} for n in names}
    rows = []
    for c in CASES:
        got = [run_case(m, c) for m in makes]
        cells = []
        for n, g in zip(names, got, strict=True):
            mark = verdict(c, g)
            if mark:
                marks[n][mark] += 1
            cells.append(f"{(mark + ' ' + g) if mark else g:22}")
        print(f"{c.name:{width}}  {c.kind:6}  {'|'.join(sorted(expected(c))):20} "
              + "  ".join(cells))  # fmt: skip
        rows.append({"case": c.name, "kind": c.kind, "expected": sorted(expected(c)),
                     **dict(zip(names, got, strict=True))})  # fmt: skip
    print()
    print(f"{'of ' + str(len(CASES)) + ' cases':{width}}  " + "  ".join(f"{n:22}" for n in names))
    summary = []
    for m, n in zip(makes, names, strict=True):
        summary.append({"name": n, "broken": marks[n]["✗"], "stricter": marks[n]["~"],
                        "lenient": marks[n]["≠"], **hostile(m, args.hostile),
                        **costs(m, args.seconds, args.entries)})  # fmt: skip
    for label, key, fmt in [
        ("✗ RFC 9111 rule broken", "broken", "{:<22}"),
        ("~ stricter (a request more)", "stricter", "{:<22}"),
        ("≠ more lenient than govsi's choice", "lenient", "{:<22}"),
        (f"hostile headers: raised (of {args.hostile})", "raised", "{:<22}"),
        ("hostile headers: line break sent", "unsafe", "{:<22}"),
        ("µs per store", "store_us", "{:<22.1f}"),
        ("µs per fresh lookup", "lookup_us", "{:<22.1f}"),
        ("bytes per entry", "bytes_per_entry", "{:<22.0f}"),
    ]:
        print(f"{label:{width}}  " + "  ".join(fmt.format(s[key]) for s in summary))
    versions = {}
    for dist in ("hishel", "scrapy", "cachecontrol"):
        with contextlib.suppress(Exception):
            from importlib.metadata import version

            versions[dist] = version(dist)
    print("versions:", versions)
    write_run(RESULTS / "http_cache.json", args,
              [{"cases": rows, "summary": summary, "versions": versions}])  # fmt: skip


if __name__ == "__main__":
    main()
