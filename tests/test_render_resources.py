"""Sub-resources of rendered pages (govsi.render.resources): fetched as crawl requests
under the scheduler's policy, cached for the crawl, shared, redirects followed in scope."""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

from scrapy import Request
from scrapy.http import Response

from govsi.render.httpcache import ResourceCache
from govsi.render.resources import PageRequests, ResourceFetcher
from govsi.render.routes import Reply
from govsi.requestmeta import KIND_RESOURCE, META_KIND
from govsi.web.urls import in_scope

A = "https://a.gov.si"


class FakeCrawl:
    """Stands in for the engine and the web: answers each scheduled request at once."""

    def __init__(self, answers: dict[str, Any]) -> None:
        self.answers = answers
        self.sent: list[Request] = []
        self.counts: Counter[str] = Counter()

    def schedule(self, request: Request) -> None:
        self.sent.append(request)
        answer = self.answers.get(request.url, (404, {}, b""))
        status, headers, body = answer(request) if callable(answer) else answer
        response = Response(request.url, status=status, headers=headers, body=body,
                            request=request)  # fmt: skip
        # As the engine would, later, on the reactor: the caller awaits meanwhile.
        asyncio.get_running_loop().call_soon(request.callback, response)

    def fetcher(self, policy: object = None) -> ResourceFetcher:
        f = ResourceFetcher(
            ResourceCache(max_bytes=10_000, max_entry_bytes=1_000, heuristic_ttl=3600),
            self.schedule,
            lambda url: in_scope(url, ["gov.si"]),
            self.count,
        )
        f.policy = policy or (lambda url: None)  # type: ignore[assignment]
        return f

    def count(self, what: str) -> None:
        self.counts[what] += 1


def run(coro: object) -> object:
    return asyncio.run(coro)  # type: ignore[arg-type]


def test_a_template_script_is_fetched_once_for_every_page() -> None:
    crawl = FakeCrawl({f"{A}/app.js": (200, {"Content-Type": "text/javascript"}, b"go()")})
    fetcher = crawl.fetcher()

    async def pages() -> list[Reply | None]:
        first = await fetcher.fetch(f"{A}/app.js", {}, referer=f"{A}/")
        return [first] + [await fetcher.fetch(f"{A}/app.js", {}) for _ in range(5)]

    replies = run(pages())
    assert all(r is not None and r.body == b"go()" for r in replies)  # type: ignore[union-attr]
    assert len(crawl.sent) == 1
    request = crawl.sent[0]
    assert request.meta[META_KIND] == KIND_RESOURCE and request.dont_filter
    assert request.headers.get("Referer") == f"{A}/".encode()
    assert fetcher.requests == 1


def test_renders_asking_at_once_share_one_request() -> None:
    crawl = FakeCrawl({f"{A}/api": (200, {"Cache-Control": "no-store"}, b"{}")})
    fetcher = crawl.fetcher()

    async def together() -> list[Reply | None]:
        return list(await asyncio.gather(*[fetcher.fetch(f"{A}/api", {}) for _ in range(4)]))

    assert all(r is not None for r in run(together()))  # type: ignore[union-attr]
    assert len(crawl.sent) == 1
    # Not stored (no-store): a later render asks the server again.
    run(fetcher.fetch(f"{A}/api", {}))
    assert len(crawl.sent) == 2


def test_redirects_are_followed_in_scope_only() -> None:
    crawl = FakeCrawl({
        f"{A}/old.js": (302, {"Location": "/new.js"}, b""),
        f"{A}/new.js": (200, {}, b"new"),
        f"{A}/leak": (302, {"Location": "http://127.0.0.1:8080/admin"}, b""),
        f"{A}/meta": (301, {"Location": "http://169.254.169.254/latest"}, b""),
        f"{A}/loop": (302, {"Location": "/loop"}, b""),
    })  # fmt: skip
    fetcher = crawl.fetcher()
    reply = run(fetcher.fetch(f"{A}/old.js", {}))
    assert reply is not None and reply.status == 200 and reply.body == b"new"  # type: ignore[union-attr]
    assert run(fetcher.fetch(f"{A}/leak", {})) is None
    assert run(fetcher.fetch(f"{A}/meta", {})) is None
    assert run(fetcher.fetch(f"{A}/loop", {})) is None
    sent = Counter(r.url for r in crawl.sent)
    assert "http://127.0.0.1:8080/admin" not in sent and "http://169.254.169.254/latest" not in sent
    assert crawl.counts["refused/redirect_out_of_scope"] == 2
    assert crawl.counts["refused/too_many_redirects"] == 1


def test_what_the_policy_refuses_is_never_sent() -> None:
    crawl = FakeCrawl({f"{A}/private/x.js": (200, {}, b"x")})
    fetcher = crawl.fetcher(policy=lambda url: "robots" if "/private/" in url else None)
    assert run(fetcher.fetch(f"{A}/private/x.js", {})) is None
    assert crawl.sent == []
    assert crawl.counts["refused/robots"] == 1


def test_a_stale_answer_is_revalidated_and_a_304_serves_the_cached_body() -> None:
    crawl = FakeCrawl({f"{A}/menu": (200, {"Cache-Control": "max-age=0", "ETag": '"v1"'}, b"m")})
    fetcher = crawl.fetcher()
    assert run(fetcher.fetch(f"{A}/menu", {})).body == b"m"  # type: ignore[union-attr]
    crawl.answers[f"{A}/menu"] = (304, {"ETag": '"v1"'}, b"")
    again = run(fetcher.fetch(f"{A}/menu", {}))
    assert again is not None and again.status == 200 and again.body == b"m"  # type: ignore[union-attr]
    assert crawl.sent[1].headers.get("If-None-Match") == b'"v1"'
    assert crawl.counts["revalidated"] == 1


def test_a_304_naming_another_version_is_not_trusted_and_the_body_is_fetched_again() -> None:
    crawl = FakeCrawl({f"{A}/menu": (200, {"Cache-Control": "max-age=0", "ETag": '"v1"'}, b"m1")})
    fetcher = crawl.fetcher()
    assert run(fetcher.fetch(f"{A}/menu", {})).body == b"m1"  # type: ignore[union-attr]

    def server(request: Request) -> tuple[int, dict[str, str], bytes]:
        if request.headers.get("If-None-Match"):
            return 304, {"ETag": '"v2"'}, b""
        return 200, {"ETag": '"v2"'}, b"m2"

    crawl.answers[f"{A}/menu"] = server
    again = run(fetcher.fetch(f"{A}/menu", {}))
    assert again is not None and again.body == b"m2"  # type: ignore[union-attr]
    assert [r.headers.get("If-None-Match") for r in crawl.sent] == [None, b'"v1"', None]
    assert crawl.counts["revalidation_mismatch"] == 1 and crawl.counts["revalidated"] == 0


class QueuedCrawl(FakeCrawl):
    """Stands in for the frontier: holds every scheduled request until it is sent or
    cancelled, as the scheduler's cancel_resources does."""

    def schedule(self, request: Request) -> None:
        self.sent.append(request)

    def cancel(self, requests: Any) -> list[Request]:
        ids = {id(r) for r in requests}
        taken = [r for r in self.sent if id(r) in ids]
        self.sent = [r for r in self.sent if id(r) not in ids]
        return taken

    def answer(self, request: Request) -> None:
        self.sent.remove(request)
        request.callback(Response(request.url, status=200, body=b"ok", request=request))

    def fetcher(self, policy: object = None) -> ResourceFetcher:
        f = super().fetcher(policy)
        f.cancel = self.cancel
        return f


def test_a_render_sends_at_most_its_cap_and_the_rest_is_refused_unchecked() -> None:
    async def scenario() -> None:
        crawl = QueuedCrawl({})
        checked: list[str] = []
        fetcher = crawl.fetcher(policy=lambda url: checked.append(url))
        page = PageRequests(f"{A}/", limit=100)
        asks = [fetcher.fetch(f"{A}/api/{i}?q={'x' * 100}", {}, page=page) for i in range(2000)]
        tasks = [asyncio.ensure_future(a) for a in asks]
        await asyncio.sleep(0)
        # A hundred went to the queue, the other 1 900 were refused before any check.
        assert len(crawl.sent) == 100 and len(checked) == 100
        assert crawl.counts["refused/too_many_requests"] == 1900
        # The render ends: what it still has queued leaves the queue and its routes end.
        crawl.answer(crawl.sent[0])
        await asyncio.sleep(0)
        assert fetcher.end(page) == 99
        assert crawl.sent == [] and crawl.counts["cancelled"] == 99
        replies = await asyncio.gather(*tasks)
        assert sum(r is not None for r in replies) == 1
        # Over: nothing more, not even a cached URL.
        assert await fetcher.fetch(f"{A}/api/0?q={'x' * 100}", {}, page=page) is None
        assert crawl.counts["refused/render_over"] == 1

    asyncio.run(scenario())


def test_a_request_another_render_waits_for_stays_queued() -> None:
    async def scenario() -> None:
        crawl = QueuedCrawl({})
        fetcher = crawl.fetcher()
        one, two = PageRequests(f"{A}/1", limit=10), PageRequests(f"{A}/2", limit=10)
        a = asyncio.ensure_future(fetcher.fetch(f"{A}/app.js", {}, page=one))
        b = asyncio.ensure_future(fetcher.fetch(f"{A}/app.js", {}, page=two))
        only = asyncio.ensure_future(fetcher.fetch(f"{A}/own.js", {}, page=one))
        await asyncio.sleep(0)
        assert len(crawl.sent) == 2
        assert fetcher.end(one) == 1  # own.js; app.js is still the other render's
        assert [r.url for r in crawl.sent] == [f"{A}/app.js"]
        assert await only is None  # the ended render's route for it ends
        crawl.answer(crawl.sent[0])
        for reply in await asyncio.gather(a, b):
            assert reply is not None and reply.body == b"ok"

    asyncio.run(scenario())


def test_a_url_past_the_limit_is_refused_before_the_policy_sees_it() -> None:
    crawl = FakeCrawl({})
    checked: list[str] = []
    fetcher = crawl.fetcher(policy=lambda url: checked.append(url))
    page = PageRequests(f"{A}/", limit=10)
    assert run(fetcher.fetch(f"{A}/{'a' * 400_000}", {}, page=page)) is None
    assert checked == [] and crawl.sent == [] and page.made == 0
    assert crawl.counts["refused/url_too_long"] == 1
