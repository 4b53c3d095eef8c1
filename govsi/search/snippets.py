"""A result's snippet: the stretch of its text where the query's words are densest, those
words marked (pure). Matching goes through the same analysis as the index, so *občinah*
is marked for the query *obcina*."""

from __future__ import annotations

import re
from collections.abc import Callable

from govsi.search.analysis import Analysis, ascii_term, fold, forms, stem, term

_WORD = re.compile(r"[^\W_]+")
_SPACES = re.compile(r"\s+")
# Characters of text looked at: a snippet of a 1 MB document costs no more than this.
SCAN = 200_000
# Characters of a title shown (crawldb's titles are as long as a page made them).
TITLE = 300

# (text, marked) pieces in order.
Pieces = list[tuple[str, bool]]


def snippet(
    text: str,
    wanted: frozenset[str],
    wanted_ascii: frozenset[str] = frozenset(),
    width: int = 240,
    analysis: Analysis = "lemmas",
    wanted_stems: frozenset[str] = frozenset(),
) -> Pieces:
    """About ``width`` characters of ``text`` around the densest run of words whose term is
    in ``wanted`` (or ``ascii_term`` in ``wanted_ascii``, or folded ``stem`` in
    ``wanted_stems``: what the query matched by), cut at word boundaries, with
    "…" where text was left out; the matching words marked. The start of the text when
    nothing matches."""
    body = text[:SCAN]
    matches = _matches(body, wanted, wanted_ascii, analysis, wanted_stems)
    start = _densest(matches, width) if matches else 0
    if start <= width // 4:
        start = 0  # the text's start is near: show it
    if start:
        cut = body.find(" ", max(0, start - width // 4), start)  # some words before it
        start = cut + 1 if cut >= 0 else start
    end = min(len(body), start + width)
    if end < len(body):
        cut = body.rfind(" ", start, end)
        end = cut if cut > start else end
    pieces: Pieces = [("…", False)] if start > 0 else []
    pieces += _marked(body, matches, start, end)
    if end < len(text):
        pieces.append(("…", False))
    return _collapse(pieces)


def highlight(
    text: str,
    wanted: frozenset[str],
    wanted_ascii: frozenset[str] = frozenset(),
    analysis: Analysis = "lemmas",
    wanted_stems: frozenset[str] = frozenset(),
) -> Pieces:
    """A short ``text`` (a title) whole, the words ``snippet`` would mark marked; cut
    with "…" past ``TITLE`` characters."""
    body = text[:TITLE]
    matches = _matches(body, wanted, wanted_ascii, analysis, wanted_stems)
    tail: Pieces = [("…", False)] if len(text) > TITLE else []
    return _collapse(_marked(body, matches, 0, len(body)) + tail)


def _matches(
    body: str, wanted: frozenset[str], wanted_ascii: frozenset[str], analysis: Analysis,
    wanted_stems: frozenset[str],
) -> list[tuple[int, int]]:  # fmt: skip
    """The spans of ``body``'s words the query matched."""
    # Each distinct word is analysed once: a text repeats its words.
    marked = {
        w for w in set(_WORD.findall(body))
        if _wanted(w, wanted, wanted_ascii, analysis, wanted_stems)
    }  # fmt: skip
    return [m.span() for m in _WORD.finditer(body) if m.group(0) in marked] if marked else []


def _marked(body: str, matches: list[tuple[int, int]], start: int, end: int) -> Pieces:
    """``body[start:end]`` in pieces, the ``matches`` within it marked."""
    pieces: Pieces = []
    at = start
    for s, e in matches:
        if s < start or e > end:
            continue
        if s > at:
            pieces.append((body[at:s], False))
        pieces.append((body[s:e], True))
        at = e
    if at < end:
        pieces.append((body[at:end], False))
    return pieces


def _wanted(word: str, wanted: frozenset[str], wanted_ascii: frozenset[str],
            analysis: Analysis, wanted_stems: frozenset[str]) -> bool:  # fmt: skip
    lowered = word.lower()
    if analysis == "lemmas":  # one cached look-up of the word's three terms
        found = forms(lowered)
        return found is not None and (
            found[0] in wanted or found[1] in wanted_ascii or found[2] in wanted_stems
        )
    return (
        term(lowered, analysis) in wanted
        or (bool(wanted_ascii) and ascii_term(lowered) in wanted_ascii)
        or (bool(wanted_stems) and stem(fold(lowered)) in wanted_stems)
    )


def _densest(spans: list[tuple[int, int]], width: int) -> int:
    """The start of the first span of the ``width``-character window holding most spans."""
    best, best_start, j = 0, spans[0][0], 0
    for i, (s, _) in enumerate(spans):
        while spans[j][0] < s - width:
            j += 1
        if i - j + 1 > best:
            best, best_start = i - j + 1, spans[j][0]
    return best_start


def _collapse(pieces: Pieces) -> Pieces:
    """Whitespace runs as one space (text from PDFs is full of line breaks)."""
    return [(text if marked else _SPACES.sub(" ", text), marked) for text, marked in pieces]


def render(pieces: Pieces, mark: Callable[[str], str], plain: Callable[[str], str]) -> str:
    """The snippet as one string: ``mark`` for the marked words, ``plain`` for the rest
    (an HTML page escapes both)."""
    return "".join(mark(t) if m else plain(t) for t, m in pieces)
