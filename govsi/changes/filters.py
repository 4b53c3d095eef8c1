"""Which changes a reader asks for (``ChangeFilter``), from a form's or a URL's parameters
and back; ``parse_since``: "7d" or an ISO time (pure)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import cast

from govsi.items import CHANGE_KINDS, ChangeKind

__all__ = ["DOC_TYPES", "MAX_QUERY_CHARS", "ChangeFilter", "parse_since"]

# A change's page type as a filter names it: an HTML page, or a document's type.
DOC_TYPES = ("html", "pdf", "doc", "docx", "ppt", "pptx")
MAX_QUERY_CHARS = 500
_MAX_HOSTS = 100
_AGO = re.compile(r"(\d{1,6})([mhdw])")
_UNITS = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def parse_since(text: str, now: datetime) -> datetime:
    """The naive UTC time ``text`` names: a duration before ``now`` ("30m", "12h", "7d",
    "2w") or an ISO date or time (with an offset: converted to UTC; without: UTC).
    ValueError with a message a user can act on otherwise."""
    spelt = text.strip()
    ago = _AGO.fullmatch(spelt.lower())
    if ago is not None:
        try:
            return now - timedelta(**{_UNITS[ago[2]]: int(ago[1])})
        except OverflowError:
            raise ValueError(f"{spelt!r} reaches too far back") from None
    try:
        when = datetime.fromisoformat(spelt)
    except ValueError:
        raise ValueError(
            f"{spelt[:40]!r} is no time: say a duration (30m, 12h, 7d, 2w) or an ISO date "
            "or time (2026-11-20, 2026-11-20T08:00)"
        ) from None
    return when.astimezone(UTC).replace(tzinfo=None) if when.tzinfo else when


def _list(value: str) -> list[str]:
    return [v for v in (p.strip().lower() for p in value.split(",")) if v]


@dataclass(frozen=True, slots=True)
class ChangeFilter:
    """The changes asked for: every condition given must hold (an empty one holds)."""

    since: datetime | None = None  # naive UTC, inclusive
    until: datetime | None = None  # exclusive
    hosts: tuple[str, ...] = ()  # exact host names (site.domain)
    kinds: tuple[ChangeKind, ...] = ()  # empty: all
    types: tuple[str, ...] = ()  # html, pdf, doc, docx, ppt, pptx
    query: str = ""  # search words, matched the Slovenian way (lemmas, no diacritics needed)

    @classmethod
    def from_params(cls, params: Mapping[str, str], now: datetime) -> ChangeFilter:
        """The filter of the parameters ``q``, ``since``, ``until`` (``parse_since``),
        ``host``, ``kind``, ``type`` (comma-separated lists); others are ignored.
        ValueError with a clear message on a bad value."""
        since = params.get("since", "").strip()
        until = params.get("until", "").strip()
        hosts = _list(params.get("host", ""))
        if len(hosts) > _MAX_HOSTS:
            raise ValueError(f"at most {_MAX_HOSTS} hosts")
        kinds = _list(params.get("kind", ""))
        for kind in kinds:
            if kind not in CHANGE_KINDS:
                raise ValueError(f"no change kind {kind[:40]!r}: say {', '.join(CHANGE_KINDS)}")
        types = _list(params.get("type", ""))
        for type_ in types:
            if type_ not in DOC_TYPES:
                raise ValueError(f"no page type {type_[:40]!r}: say {', '.join(DOC_TYPES)}")
        query = " ".join(params.get("q", "").split())
        if len(query) > MAX_QUERY_CHARS:
            raise ValueError(f"the search words are longer than {MAX_QUERY_CHARS} characters")
        flt = cls(
            parse_since(since, now) if since else None,
            parse_since(until, now) if until else None,
            tuple(dict.fromkeys(hosts)),
            tuple(dict.fromkeys(cast(list[ChangeKind], kinds))),
            tuple(dict.fromkeys(types)),
            query,
        )
        if flt.since is not None and flt.until is not None and flt.until <= flt.since:
            raise ValueError("until must be later than since")
        return flt

    def to_params(self) -> dict[str, str]:
        """The parameters ``from_params`` reads back into this filter (empty ones left
        out; times as naive ISO UTC)."""
        params = {
            "q": self.query,
            "since": _iso(self.since),
            "until": _iso(self.until),
            "host": ",".join(self.hosts),
            "kind": ",".join(self.kinds),
            "type": ",".join(self.types),
        }
        return {k: v for k, v in params.items() if v}


def _iso(when: datetime | None) -> str:
    return "" if when is None else when.isoformat()
