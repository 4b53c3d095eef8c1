"""When a feed or sitemap is polled next, from how its poll went (pure).

A success (a 200 read as a feed or sitemap, a 304) polls it again an interval later. A
failure (no response: a timeout, a refused connection, a body past its size bound; an
HTTP error; a redirect not followed; a body that is no feed) backs off: the interval
doubled per failure in a row, up to ``most``. ``gone_after`` failures in a row, the last a
404 or 410, park it: asked again only ``park`` later (a page naming it does not bring it
back sooner). A success resets both.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Final

from govsi.items import FeedStatus

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings

__all__ = [
    "GONE_STATUSES",
    "MAX_REDIRECTS",
    "Backoff",
    "FeedPolls",
    "PollPlan",
    "moved_for_good",
    "plan_next_poll",
    "poll_failed",
    "redirect_refusal",
]

# The answers that say a feed is not there any more (RFC 9110 15.5.5, 15.5.11).
GONE_STATUSES: Final = frozenset({404, 410})
# 2**40 intervals is past any cap: the exponent stops growing there.
_MAX_DOUBLINGS = 40


@dataclass(frozen=True)
class Backoff:
    """The back-off's settings, in seconds."""

    most: float  # FEED_BACKOFF_MAX: the longest wait after failures
    gone_after: int  # FEED_GONE_AFTER: 404/410 failures in a row that park it (0: never)
    park: float  # FEED_FORGET_AFTER: how long a parked feed waits


# settings.py's FEED_BACKOFF_MAX, FEED_GONE_AFTER, FEED_FORGET_AFTER, for a FeedPolls built
# without settings (tests).
DEFAULT_BACKOFF = Backoff(24 * 3600.0, 3, 60 * 24 * 3600.0)


@dataclass(frozen=True)
class FeedPolls:
    """How feeds and sitemaps are polled (``govsi.responses.feeding``)."""

    follow: bool  # FEED_FOLLOW: feeds pages declare are read
    feed_interval: float  # FEED_POLL_INTERVAL, seconds
    sitemap_interval: float  # SITEMAP_POLL_INTERVAL, seconds
    # REVISIT is not off: stored feeds and sitemaps are polled again when due.
    repoll: bool = True
    # FEED_BACKOFF_MAX, FEED_GONE_AFTER, FEED_FORGET_AFTER (seconds)
    backoff: Backoff = DEFAULT_BACKOFF

    @classmethod
    def from_settings(cls, s: BaseSettings) -> FeedPolls:
        return cls(
            follow=s.getbool("FEED_FOLLOW"),
            feed_interval=s.getfloat("FEED_POLL_INTERVAL"),
            sitemap_interval=s.getfloat("SITEMAP_POLL_INTERVAL"),
            repoll=str(s.get("REVISIT", "due")).strip().lower() != "off",
            backoff=Backoff(
                most=s.getfloat("FEED_BACKOFF_MAX"),
                gone_after=s.getint("FEED_GONE_AFTER"),
                park=s.getfloat("FEED_FORGET_AFTER"),
            ),
        )


@dataclass(frozen=True)
class PollPlan:
    """A poll's consequences for its row."""

    failures: int  # failed polls in a row, this one counted
    state: FeedStatus
    wait: timedelta  # until its next poll


def poll_failed(status: int | None, entries: int, error: str | None) -> bool:
    """A poll failed: no response (``status`` None), an answer other than 200 and 304, or
    a 200 whose body gave no entry and an error (HTML, garbage, an XML error before any
    entry). A 200 with an error after some entries (a cut document) is a success."""
    if status is None:
        return True
    if status == 304:
        return False
    if status != 200:
        return True
    return entries == 0 and error is not None


def plan_next_poll(
    interval: float, failures_before: int, status: int | None, failed: bool, backoff: Backoff
) -> PollPlan:
    """The row after a poll: its failures in a row, its state and the wait until its next
    poll (``interval``: FEED_POLL_INTERVAL or SITEMAP_POLL_INTERVAL, seconds)."""
    interval = max(0.0, interval)
    if not failed:
        return PollPlan(0, "active", timedelta(seconds=interval))
    failures = max(0, failures_before) + 1
    if status in GONE_STATUSES and 0 < backoff.gone_after <= failures:
        return PollPlan(failures, "gone", timedelta(seconds=max(interval, backoff.park)))
    longest = max(interval, backoff.most)
    wait = min(longest, interval * 2 ** min(failures, _MAX_DOUBLINGS))
    return PollPlan(failures, "active", timedelta(seconds=wait))


# Redirects followed from one poll, as for robots.txt (RFC 9309 2.3.1.2).
MAX_REDIRECTS = 5
# The redirects that move a feed for good (RFC 9110 15.4.2, RFC 9111's 308): its row is
# retired, pointing at the new URL. A temporary one (302, 303, 307) is followed for the
# poll, which is recorded under the URL polled.
PERMANENT: Final = frozenset({301, 308})


def redirect_refusal(visited: list[str], location: str | None, target: str | None) -> str | None:
    """Why a feed's or sitemap's redirect is not followed, or None to follow it.
    ``visited``: the URLs polled so far, first the stored one; ``location``: the Location
    resolved (None: missing or unusable); ``target``: its canonical form when the crawl
    takes it (in scope, not a trap), else None."""
    if location is None:
        return "redirect without a usable Location"
    if target is None:
        return f"redirect out of scope: {location}"[:300]
    if target in visited:
        return f"redirect loop: {target}"[:300]
    if len(visited) > MAX_REDIRECTS:
        return f"more than {MAX_REDIRECTS} redirects"
    return None


def moved_for_good(statuses: list[int]) -> bool:
    """Every redirect of a chain was permanent: the feed lives at its end now."""
    return bool(statuses) and all(status in PERMANENT for status in statuses)
