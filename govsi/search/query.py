"""A search box's query, parsed (pure): words, "quoted phrases", and filters
``host:`` (exactly that host), ``site:`` (that domain and those below it), ``type:`` (pdf,
html, docx, ...), ``after:`` and ``before:`` (dates, ``YYYY-MM-DD``, ``YYYY-MM`` or ``YYYY``;
one past the dates the index can hold is taken as its nearest, ``within_index``). Anything
else is a word; a filter with a bad value is a word too, so nothing typed is lost."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta

_TOKEN = re.compile(r'"([^"]*)"?|(\S+)')
_FILTER = re.compile(r"(host|site|type|after|before):(.+)", re.IGNORECASE)
_DATE = re.compile(r"(\d{4})(?:-(\d{1,2}))?(?:-(\d{1,2}))?")
KINDS = ("HTML", "PDF", "DOC", "DOCX", "PPT", "PPTX")
# Dates a filter can name, inside Tantivy's (1677-09-21 to 2262-04-11, UTC): every date the
# index holds lies far within (``govsi.text.dates``), so ``after:0001`` means every dated
# page and ``before:9999`` too, as typed.
FIRST_DATE = datetime(1678, 1, 1)
LAST_DATE = datetime(2262, 1, 1)


@dataclass
class ParsedQuery:
    """``units``: each a word or a phrase, as lists of the words typed; the filters."""

    units: list[list[str]] = field(default_factory=list)
    hosts: list[str] = field(default_factory=list)
    sites: list[str] = field(default_factory=list)
    kinds: list[str] = field(default_factory=list)
    after: datetime | None = None
    before: datetime | None = None

    @property
    def empty(self) -> bool:
        return not self.units and not (self.hosts or self.sites or self.kinds or self.after
                                       or self.before)  # fmt: skip


def _date(value: str, end: bool) -> datetime | None:
    """``YYYY[-MM[-DD]]`` as the first moment of that period (its last for ``end``)."""
    m = _DATE.fullmatch(value)
    if m is None:
        return None
    year, month, day = int(m.group(1)), int(m.group(2) or 0), int(m.group(3) or 0)
    if m.group(2) and not 1 <= month <= 12:
        return None
    try:
        if not end:
            return datetime(year, month or 1, day or 1)
        if day:
            return datetime(year, month, day, 23, 59, 59)
        if month:
            return datetime(year + month // 12, month % 12 + 1, 1) - timedelta(seconds=1)
        return datetime(year, 12, 31, 23, 59, 59)
    except ValueError:
        return None


def within_index(when: datetime | None) -> datetime | None:
    """``when`` (naive UTC) moved to the nearest date the index can be asked about."""
    return None if when is None else min(max(when, FIRST_DATE), LAST_DATE)


def parse(query: str) -> ParsedQuery:
    """``query`` as typed into the search box (see the module's docstring)."""
    parsed = ParsedQuery()
    for phrase, token in _TOKEN.findall(query[:2_000]):
        if phrase or (not token):
            words = phrase.split()
            if words:
                parsed.units.append(words)
            continue
        m = _FILTER.fullmatch(token)
        if m is not None and _apply(parsed, m.group(1).lower(), m.group(2)):
            continue
        parsed.units.append([token])
    return parsed


def _apply(parsed: ParsedQuery, name: str, value: str) -> bool:
    if name == "host":
        parsed.hosts.append(value.lower())
    elif name == "site":
        parsed.sites.append(value.lower().lstrip("."))
    elif name == "type":
        kind = value.upper()
        if kind not in KINDS:
            return False
        parsed.kinds.append(kind)
    else:
        when = within_index(_date(value, end=name == "before"))
        if when is None:
            return False
        if name == "after":
            parsed.after = when
        else:
            parsed.before = when
    return True
