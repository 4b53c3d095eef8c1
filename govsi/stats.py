"""How a part of the crawl counts what it does in the crawl's stats: ``Count``, the
crawler's ``inc_value`` as a callback (looked up when counting: the crawler's stats are made
after the spider and its parts); ``counter``, one made here, so that a part counting calls
down into this module, never back up into the spider that built it."""

from __future__ import annotations

from typing import Any, Protocol

__all__ = ["Count", "counter"]


class Count(Protocol):
    """Adds ``count`` (1 unless given) to the crawl's stat ``key`` (``inc_value``)."""

    def __call__(self, key: str, count: int = 1, /) -> None: ...


def counter(component: Any) -> Count:
    """``Count`` on the stats of the crawler ``component`` (a Scrapy spider or extension) is
    bound to, both looked up at each count: the crawler's stats are made after the spider,
    and a test may bind the spider to another crawler."""

    def count(key: str, count: int = 1, /) -> None:
        component.crawler.stats.inc_value(key, count)

    return count
