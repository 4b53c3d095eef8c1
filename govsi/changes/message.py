"""One notification's text: a saved filter's new changes as a title and a plain-text body
(pure).

The title names the filter and counts its changes; the body lists the newest of them, one
block each: the kind and time of the change, the page's title, its URL, the words added
(``+``) and removed (``-``); then how many more there are and, when scrapy serve's address
is known, links to the filter's Changes page and Atom feed. Every crawled string is
hostile: each is put on one line (whitespace runs as one space, so no title forges a line
of its own), its control characters written as visible escapes (``showing.shown``) and cut
to a bound; the body stays within ``max_chars`` (entries that would pass it are counted
in "more", never cut in the middle). Plain text, not Markdown or HTML: Apprise escapes it
for a service that shows HTML, and nothing a server sent becomes markup or a link target
it did not spell as an http(s) URL.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final
from urllib.parse import quote, urlencode

from govsi.changes.atom import canonical_params
from govsi.changes.query import ChangeEntry
from govsi.changes.showing import shown

__all__ = [
    "BODY_MAX_CHARS",
    "Message",
    "build_message",
    "changes_links",
    "entry_text",
    "one_line",
]

# Bounds of one entry's parts (characters before escaping): a title as long as a
# headline, a URL as long as crawldb keeps (MAX_URL_LENGTH), the diff's excerpts.
TITLE_CHARS: Final = 200
URL_CHARS: Final = 2000
EXCERPT_CHARS: Final = 300
NAME_CHARS: Final = 100
# A whole body: chat services take a few thousand characters (Apprise splits or cuts a
# longer one per service), e-mail more; the entries make it long, not one hostile string.
BODY_MAX_CHARS: Final = 16_000

KIND_NAMES: Final = {"new": "NEW", "changed": "CHANGED", "gone": "GONE", "moved": "MOVED"}


@dataclass(frozen=True, slots=True)
class Message:
    title: str
    body: str


def one_line(text: str | None, limit: int) -> str:
    """``text`` (None: "") on one line: whitespace runs (line feeds, tabs, U+2028 among
    them) as one space, ends stripped, cut to ``limit`` characters with "…", control
    characters written as visible escapes (``showing.shown``)."""
    return shown(" ".join((text or "").split()), limit)


def entry_text(entry: ChangeEntry) -> str:
    """One change as a block of lines: kind, time and title; URL; words added, removed."""
    kind = KIND_NAMES.get(entry.kind, one_line(entry.kind, 10).upper())
    title = one_line(entry.title, TITLE_CHARS) or "(no title)"
    lines = [f"{kind} · {entry.time:%Y-%m-%d %H:%M} UTC · {title}", one_line(entry.url, URL_CHARS)]
    if entry.added:
        lines.append("+ " + one_line(entry.added, EXCERPT_CHARS))
    if entry.removed:
        lines.append("- " + one_line(entry.removed, EXCERPT_CHARS))
    return "\n".join(lines)


def changes_links(base: str, page: Mapping[str, str], feed: Mapping[str, str]) -> tuple[str, str]:
    """The Changes page's URL for the filter ``page`` and the Atom feed's for ``feed``
    under scrapy serve's address ``base`` ("" when ``base`` is "")."""
    base = base.strip().rstrip("/")
    if not base:
        return "", ""

    def url(path: str, params: Mapping[str, str]) -> str:
        query = urlencode(canonical_params(params), quote_via=quote, safe=",")
        return f"{base}/{path}" + (f"?{query}" if query else "")

    return url("changes", page), url("changes.atom", feed)


def _count(total: int, complete: bool) -> str:
    noun = "change" if total == 1 and complete else "changes"
    return f"{total}{'' if complete else '+'} {noun}"


def build_message(
    name: str,
    entries: Sequence[ChangeEntry],
    total: int,
    *,
    complete: bool = True,
    page_link: str = "",
    feed_link: str = "",
    max_chars: int = BODY_MAX_CHARS,
) -> Message:
    """The message for the saved filter ``name``: ``total`` new changes (``complete``
    False: at least that many), of which ``entries`` are the newest, newest first. The
    body lists as many of ``entries`` as fit in ``max_chars``, then how many more there
    are, then the links given."""
    label = one_line(name, NAME_CHARS)
    count = _count(max(total, len(entries)), complete)
    title = f"govsi: {count} for {label!r}"
    head = f"{count} on gov.si for {label!r}, newest first:"
    tail = []
    if page_link:
        tail.append(f"All of them: {one_line(page_link, URL_CHARS)}")
    if feed_link:
        tail.append(f"Feed: {one_line(feed_link, URL_CHARS)}")
    # Room kept for the "more" line and the links, whatever fits before them.
    reserve = len("\n\n… and 1000000000 more") + sum(len(t) + 1 for t in tail) + 2
    blocks = [head]
    size = len(head)
    shown_entries = 0
    for entry in entries:
        block = entry_text(entry)
        if size + 2 + len(block) + reserve > max_chars:
            break
        blocks.append(block)
        size += 2 + len(block)
        shown_entries += 1
    more = max(total, len(entries)) - shown_entries
    if more > 0:
        blocks.append(f"… and {more}{'' if complete else '+'} more")
    if tail:
        blocks.append("\n".join(tail))
    body = "\n\n".join(blocks)
    return Message(title, body[:max_chars])
