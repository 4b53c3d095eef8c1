"""Why a request failed, as a record's fetch_error and the log say it: refused by robots.txt
before it was sent (not fetched), the address guard's reason for a refused connection,
DOWNLOAD_MAXSIZE named for a body Scrapy cancelled, else the error and its message."""

from __future__ import annotations

from scrapy.exceptions import CannotResolveHostError, DownloadCancelledError, IgnoreRequest
from twisted.internet.error import DNSLookupError
from twisted.python.failure import Failure

from govsi.net.guard import AddressGuard, AddressRefused
from govsi.web.urls import host_of

__all__ = ["failure_reason", "forbidden_by_robots"]


def forbidden_by_robots(failure: Failure) -> bool:
    """Whether a request was refused before it was sent, by robots.txt.

    Scrapy raises a plain IgnoreRequest for that, and also for responses it gave up on
    after they arrived (a decompression bomb), which are fetch errors, not refusals.
    """
    return isinstance(failure.value, IgnoreRequest) and "robots.txt" in str(failure.value)


def failure_reason(failure: Failure, guard: AddressGuard | None, max_size: int) -> str:
    """What went wrong, in at most 1000 characters. ``guard``: the crawl's address guard,
    whose reason a refused connection gets; ``max_size``: DOWNLOAD_MAXSIZE, named when
    Scrapy cancelled a body that outgrew it."""
    message = failure.getErrorMessage()
    error = failure.value
    if isinstance(error, AddressRefused):
        return message[:1000]  # the guard's reason (govsi.middlewares)
    host = host_of(failure.request.url) if hasattr(failure, "request") else ""
    refusal = isinstance(error, DNSLookupError | CannotResolveHostError)
    if refusal and guard is not None and guard.reason(host):
        # Connect time refused what the host's name resolved to (DNS rebinding, or an
        # address that changed after the scheduler looked).
        return str(guard.reason(host))
    if isinstance(error, DownloadCancelledError) and not message:
        # Scrapy cancels a body that outgrows DOWNLOAD_MAXSIZE without a message.
        message = f"response larger than DOWNLOAD_MAXSIZE ({max_size} bytes)"
    return f"{type(error).__name__}: {message}"[:1000]
