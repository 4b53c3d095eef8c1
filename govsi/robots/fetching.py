"""Fetching each host's robots.txt: the Scrapy requests and what their outcome means.

The scheduler sends a host's robots.txt as the host's first request (so it counts against
the host's delay like any other) and keeps the host's pages waiting until the outcome is
known. This module builds those requests and turns responses and failures into
``RobotsOutcome``s (RFC 9309 §2.3.1, via ``govsi.robots.rules.rules_for_response``): up to five
redirects are followed, 4xx means no rules, 5xx and unreachable mean "not now".
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from scrapy import Request
from scrapy.http import Response
from twisted.python.failure import Failure

from govsi.items import RobotsFile
from govsi.requestmeta import KIND_ROBOTS, META_HOST, META_KIND, META_REDIRECTS
from govsi.robots.rules import RobotsRules, rules_for_response
from govsi.store.schema import utcnow
from govsi.web.urls import canonicalize, resolve

logger = logging.getLogger(__name__)

MAX_REDIRECTS = 5  # RFC 9309 §2.3.1.2


@dataclass
class RobotsOutcome:
    host: str
    rules: RobotsRules
    # Why the rules are "disallow all for now" (5xx, unreachable); None when they are final.
    error: str | None = None


def stored_outcome(host: str, status: int, content: str | None, robots_url: str) -> RobotsOutcome:
    """The outcome another worker of the crawl had, read back from crawldb: the same rules
    as if this worker had fetched robots.txt itself (only final outcomes are stored)."""
    body = (content or "").encode("utf-8")
    return RobotsOutcome(host, rules_for_response(status, body, robots_url))


def robots_url_for(url: str) -> str:
    """Where the robots.txt governing ``url`` lives (same scheme, host and port)."""
    robots = resolve(url, "/robots.txt")
    if robots is None:
        raise ValueError(f"no robots.txt location for {url!r}")
    return canonicalize(robots)


def _canonical(url: str | None) -> str | None:
    try:
        return canonicalize(url) if url else None
    except ValueError:
        return None


class RobotsFetcher:
    """Builds robots.txt requests; reports each host's outcome to ``on_outcome``."""

    def __init__(
        self,
        on_outcome: Callable[[RobotsOutcome], None],
        in_scope: Callable[[str], bool] = lambda url: True,
    ) -> None:
        self.on_outcome = on_outcome
        self.in_scope = in_scope

    def request(self, host: str, robots_url: str, redirects: int = 0) -> Request:
        return Request(
            robots_url,
            callback=self._response,
            errback=self._failure,
            dont_filter=True,
            meta={
                META_KIND: KIND_ROBOTS,
                META_HOST: host,
                META_REDIRECTS: redirects,
                # Our own retry policy (the scheduler's) applies, with the host's delay.
                "dont_retry": True,
                "dont_obey_robotstxt": True,
            },
        )

    def _response(self, response: Response) -> Iterator[Any]:
        host: str = response.meta[META_HOST]
        redirects: int = response.meta[META_REDIRECTS]
        status = response.status
        location = response.headers.get("Location")
        if 300 <= status < 400 and location:
            target = _canonical(resolve(response.url, location.decode("latin-1")))
            if target and not self.in_scope(target):
                # Never fetched (nor stored as the site's robots_content): read as
                # unavailable, as RFC 9309 reads a redirect chain too long to follow.
                logger.warning("robots.txt of %s redirects out of scope (%s): read as "
                               "unavailable, no rules", host, target)  # fmt: skip
            elif target and redirects < MAX_REDIRECTS:
                yield self.request(host, target, redirects + 1)
                return
            else:
                # Too many redirects, or nowhere to go: as if there were no robots.txt (the
                # RFC says a crawler "MAY" treat it as unavailable, which means allow all).
                logger.warning("robots.txt of %s: redirect not followed (%s)", host, target)
        rules = rules_for_response(status, response.body, response.url)
        if status >= 500 or status == 429:
            # 429 "too many requests" is a 4xx, but it says "not now", not "no rules":
            # read as allow-all it would crawl a host that just asked us to slow down.
            rules = RobotsRules.disallow_all()
            self.on_outcome(RobotsOutcome(host, rules, error=f"HTTP {status}"))
            return
        # Stored as the parser reads it (UTF-8), whatever Content-Type it was served with;
        # PostgreSQL text cannot hold NUL.
        content = None
        if 200 <= status < 300:
            content = response.body.decode("utf-8", "replace").replace("\x00", "")
        yield RobotsFile(host=host, content=content, status=status, fetched_at=utcnow())
        self.on_outcome(RobotsOutcome(host, rules))

    def _failure(self, failure: Failure) -> None:
        request = failure.request  # type: ignore[attr-defined]
        host: str = request.meta[META_HOST]
        reason = f"{type(failure.value).__name__}: {failure.getErrorMessage()}"[:300]
        logger.warning("robots.txt of %s unreachable: %s", host, reason)
        self.on_outcome(RobotsOutcome(host, rules_for_response(None, b"", request.url), reason))
