"""How a part of the crawl counts what it does in the crawl's stats: ``Count``, the
crawler's ``inc_value`` as a callback (looked up when counting: the crawler's stats are made
after the spider and its parts)."""

from __future__ import annotations

from typing import Protocol

__all__ = ["Count"]


class Count(Protocol):
    """Adds ``count`` (1 unless given) to the crawl's stat ``key`` (``inc_value``)."""

    def __call__(self, key: str, count: int = 1, /) -> None: ...
