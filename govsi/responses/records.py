"""The spider's records of images and of failed requests: an image downloaded, kept on a
304, or whose revisit failed (the stored picture stays); a page or image whose request
failed: refused by robots.txt (a page stays in the frontier), else an error with its
reason. ``header``: a response header as text (``govsi.responses.revisits``'s)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from typing import Any

from scrapy.http import Response
from twisted.python.failure import Failure

from govsi.items import FetchedImage, FetchedPage, Revisit, outcome_stat
from govsi.net.failures import forbidden_by_robots
from govsi.requestmeta import META_REVISIT, META_URL
from govsi.responses.revisits import conditional, header, kept_image, visit
from govsi.revisit.change import answer, bytes_key
from govsi.stats import Count
from govsi.store.schema import utcnow

__all__ = ["Records", "header"]

logger = logging.getLogger("govsi.spiders.govsi")  # the spider's lines, as before the split


class Records:
    """Makes the records of images and of failed requests; ``count`` takes the stats,
    ``failure_reason`` says what went wrong (the spider's, which knows the address guard)."""

    def __init__(self, count: Count, failure_reason: Callable[[Failure], str]) -> None:
        self.count = count
        self.failure_reason = failure_reason

    def page_failed(self, failure: Failure) -> Iterator[Any]:
        request = failure.request  # type: ignore[attr-defined]
        url: str = request.meta[META_URL]
        depth: int = request.meta["depth"]
        # On a revisit the stored copy stays; the record carries the reason (the store).
        stored: Revisit | None = request.meta.get(META_REVISIT)
        if forbidden_by_robots(failure):
            # Not fetched: it stays in the frontier, with the reason.
            yield FetchedPage(
                url=url,
                depth=depth,
                page_type="FRONTIER",
                accessed_time=None,
                fetch_error=str(failure.value) or "ignored",
                revisit=stored,
            )
            return
        error = self.failure_reason(failure)
        logger.warning("fetching %s failed: %s", url, error)
        self.count(outcome_stat("error"))
        yield FetchedPage(
            url=url, depth=depth, page_type="ERROR", accessed_time=utcnow(), fetch_error=error,
            revisit=stored,
        )  # fmt: skip

    def image(self, response: Response) -> Iterator[Any]:
        self.count("govsi/images")
        url: str = response.meta[META_URL]
        stored: Revisit | None = response.meta.get(META_REVISIT)
        now = utcnow()
        seen = answer(response.status, conditional=conditional(response.request), stored=stored)
        if seen.kind == "not_modified" and stored is not None:
            yield kept_image(url, response, stored, now)
            return
        if seen.kind != "fetched":
            logger.info("image %s: %s", url, seen.reason)
            self.count("govsi/images/revisit_failed")
            if stored is None:
                yield FetchedImage(url=url, accessed_time=now)  # a first visit: failed
            return  # a revisit: the stored picture stays
        ok = 200 <= response.status < 300
        # An error page served for an image URL is not the image.
        data = response.body if ok and "download_stopped" not in response.flags else None
        yield FetchedImage(
            url,
            content_type=header(response, "Content-Type"),
            data=data,
            content_hash=bytes_key(data) if data is not None else None,
            **visit(response, stored, now),
        )

    def image_failed(self, failure: Failure) -> Iterator[Any]:
        if forbidden_by_robots(failure):
            return
        request = failure.request  # type: ignore[attr-defined]
        logger.warning("fetching image %s failed: %s", request.url, failure.getErrorMessage())
        if request.meta.get(META_REVISIT) is not None:
            self.count("govsi/images/revisit_failed")
            return  # the stored picture stays
        yield FetchedImage(url=request.meta[META_URL], accessed_time=utcnow())
