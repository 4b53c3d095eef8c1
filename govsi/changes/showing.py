"""A crawled string as the Changes page and its Atom feed show it (pure).

Titles, URLs and texts are hostile: ``shown`` writes their control characters as visible
escapes (``printable``: C0, DEL, C1, bidirectional controls, lone surrogates, the way
``scrapy changes`` shows them on a terminal), drops the two characters XML 1.0 refuses
that ``printable`` leaves (U+FFFE, U+FFFF), and cuts the text to a bound with "…". Markup
is left as text: the page's templates and the feed's XML library escape it.
``link_target`` says whether a URL may be a link at all; ``KIND_LABELS`` name the kinds
of change as the page and the feed say them.
"""

from __future__ import annotations

import re
from typing import Final

from govsi.items import ChangeKind
from govsi.printable import UNPRINTABLE, printable

__all__ = ["KIND_LABELS", "MAX_HREF", "kind_label", "link_target", "shown"]

KIND_LABELS: Final[dict[ChangeKind, str]] = {
    "new": "nova",
    "changed": "spremenjena",
    "gone": "odstranjena",
    "moved": "premaknjena",
}

# A longer URL is shown, not linked: crawldb keeps canonical URLs far shorter.
MAX_HREF = 8000
_NOT_XML = {0xFFFE: None, 0xFFFF: None}
# Characters a URL never holds unescaped (RFC 3986) are refused with the controls.
_LINKABLE = re.compile(f'https?://[^{UNPRINTABLE}\\s\ufffe\uffff<>"`{{}}|\\\\^]+', re.IGNORECASE)


def shown(text: str | None, limit: int, lines: bool = False) -> str:
    """``text`` (None: "") cut to ``limit`` characters ("…" added when cut), its control
    characters escaped (line feeds kept when ``lines``), U+FFFE and U+FFFF dropped: at
    most ``limit`` characters before escaping, each escape at most six."""
    if not text:
        return ""
    cut = text[:limit] + "…" if len(text) > limit else text
    return printable(cut, lines=lines).translate(_NOT_XML)


def link_target(url: str | None) -> str | None:
    """``url`` when it may be a link's target: http or https, no control character,
    whitespace or character URLs escape (``<>"`{}|`` and the backslash and caret), at
    most ``MAX_HREF`` characters; else None (shown as text only)."""
    if url and len(url) <= MAX_HREF and _LINKABLE.fullmatch(url):
        return url
    return None


def kind_label(kind: str) -> str:
    """A change kind's label; a kind crawldb should not hold, shown as it is (bounded)."""
    return next((v for k, v in KIND_LABELS.items() if k == kind), None) or shown(kind, 20)
