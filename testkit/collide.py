"""A Scrapy extension for end-to-end tests: a fingerprint collision in the seen-URL set.

``TEST_COLLIDE = "victim,twin"`` (two page URLs, canonical): from the crawl's start, the
seen-URL set takes ``victim`` for ``twin`` (the same 64-bit fingerprint), as a collision
among real URLs would (about three in a million crawls of ten million URLs). Whichever of
the two the crawl meets second is taken for known; crawldb must still get it fetched.
``test/collision_asked`` counts the lookups of the victim's key.
"""

from __future__ import annotations

from typing import Any

from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured

from govsi.frontier import seen
from govsi.requestmeta import KIND_PAGE


class Collide:
    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Collide:
        urls = crawler.settings.getlist("TEST_COLLIDE")
        if len(urls) != 2:
            raise NotConfigured
        victim, twin = (seen.seen_key(KIND_PAGE, url) for url in urls)
        real = seen.fingerprint
        stats = crawler.stats

        def fingerprint(key: str) -> Any:
            if key == victim:
                if stats is not None:
                    stats.inc_value("test/collision_asked")
                return real(twin)
            return real(key)

        seen.fingerprint = fingerprint  # type: ignore[assignment]
        return cls()
