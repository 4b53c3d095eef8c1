"""The crawl's scope as one value (pure): hosts at or under ``ALLOWED_DOMAIN_SUFFIXES``, URLs
of at most ``MAX_URL_LENGTH`` characters, pages at most ``DEPTH_LIMIT`` hops from a seed,
and the name robots.txt and X-Robots-Tag address the crawler by (``ROBOTSTXT_USER_AGENT``),
whose rules bound it further. Read by every component that needs one of them (spider,
scheduler, dupefilter, renderer), always here, so that they cannot disagree."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Protocol

from govsi.web.urls import canonical_and_host, host_in_scope, in_scope, url_too_long

__all__ = ["Scope"]


class _Settings(Protocol):
    """The part of Scrapy's settings the scope is read from."""

    def getlist(self, name: str) -> list[Any]: ...

    def getint(self, name: str) -> int: ...

    def get(self, name: str) -> Any: ...


@dataclass(frozen=True, slots=True)
class Scope:
    suffixes: tuple[str, ...]  # ALLOWED_DOMAIN_SUFFIXES
    max_url_length: int = 0  # MAX_URL_LENGTH (0: no limit)
    depth_limit: int = 0  # DEPTH_LIMIT (0: no limit)
    robots_token: str = ""  # ROBOTSTXT_USER_AGENT (matched without regard to case)

    @classmethod
    def from_settings(cls, settings: _Settings) -> Scope:
        return cls(
            suffixes=tuple(settings.getlist("ALLOWED_DOMAIN_SUFFIXES")),
            max_url_length=settings.getint("MAX_URL_LENGTH"),
            depth_limit=settings.getint("DEPTH_LIMIT"),
            robots_token=settings.get("ROBOTSTXT_USER_AGENT"),
        )

    def admits(self, url: str) -> bool:
        """Whether the absolute URL ``url`` is on a host in scope and not too long (it is
        not canonicalized here)."""
        return in_scope(url, self.suffixes) and not url_too_long(url, self.max_url_length)

    def canonical(self, url: str | None) -> tuple[str | None, bool]:
        """(The canonical form of the absolute URL ``url`` when it is in scope and not too
        long, else None; whether it was left out for its length alone)."""
        parts = _parts(url) if url else None
        if parts is None:
            return None, False
        canonical, host, named = parts
        if not named or not host_in_scope(host, self.suffixes):
            return None, False
        if url_too_long(canonical, self.max_url_length):
            return None, True
        return canonical, False

    @staticmethod
    def canonical_picture(src: str) -> str | None:
        """The canonical form of a picture's absolute URL, on any host (a page's record
        keeps every picture it shows), or None when it has none."""
        parts = _parts(src)
        return parts[0] if parts is not None else None


def _parse(url: str) -> tuple[str, str, bool] | None:
    try:
        return canonical_and_host(url)
    except ValueError:
        return None


# A site's template repeats its links and pictures on every page of the host, so the parses
# of the most recent URLs are remembered: at most _MEMO_URLS of at most _MEMO_URL_CHARS (each
# with its canonical form, which escaping can make three times as long): 8 MB at the most.
_MEMO_URLS = 4096
_MEMO_URL_CHARS = 512
_remembered = lru_cache(maxsize=_MEMO_URLS)(_parse)


def _parts(url: str) -> tuple[str, str, bool] | None:
    """``canonical_and_host(url)``, or None for a URL without a canonical form."""
    return _parse(url) if len(url) > _MEMO_URL_CHARS else _remembered(url)
