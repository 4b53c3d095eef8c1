"""Whether a failed request was refused by robots.txt before it was sent (not fetched)
rather than a fetch error (whose reason is ``govsi.net.failures``')."""

from __future__ import annotations

from scrapy.exceptions import IgnoreRequest
from twisted.python.failure import Failure

__all__ = ["forbidden_by_robots"]


def forbidden_by_robots(failure: Failure) -> bool:
    """Whether a request was refused before it was sent, by robots.txt.

    Scrapy raises a plain IgnoreRequest for that, and also for responses it gave up on
    after they arrived (a decompression bomb), which are fetch errors, not refusals.
    """
    return isinstance(failure.value, IgnoreRequest) and "robots.txt" in str(failure.value)
