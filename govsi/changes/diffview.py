"""A word diff as the diff page shows it: inline (added words in ``<ins>``, removed ones
in ``<del>``) or side by side (the version before with its removals, the version after
with its additions), as HTML (pure).

Every run is escaped (``markupsafe``) after its control characters are made visible
(``showing.shown``). Long unchanged runs are folded to ``CONTEXT`` characters either side
of a change, at a word's edge, with a note of how much was left out: a one-word change in
a long law reads at once.
"""

from __future__ import annotations

from markupsafe import Markup

from govsi.changes.diff import WordDiff
from govsi.changes.showing import shown

__all__ = ["CONTEXT", "inline", "side_by_side"]

# Unchanged characters shown before and after each change.
CONTEXT = 300
# A fold must leave out at least this much, or the run is shown whole.
_MIN_FOLD = 200


def _text(text: str) -> Markup:
    return Markup("{}").format(shown(text, len(text), lines=True))


def _skipped(chars: int) -> Markup:
    return Markup('<span class="skip">[… {} znakov brez sprememb …]</span>').format(
        f"{chars:,}".replace(",", " ")
    )


def _head(text: str) -> str:
    """At most ``CONTEXT`` characters of ``text``'s start, ended at a word's edge."""
    head = text[:CONTEXT]
    edge = max(head.rfind(" "), head.rfind("\n"))
    return head[: edge + 1] if edge > CONTEXT // 2 else head


def _tail(text: str) -> str:
    """At most ``CONTEXT`` characters of ``text``'s end, begun at a word's edge."""
    tail = text[-CONTEXT:] if len(text) > CONTEXT else text
    edge = min((i for i in (tail.find(" "), tail.find("\n")) if i >= 0), default=-1)
    return tail[edge + 1 :] if 0 <= edge < CONTEXT // 2 else tail


def _unchanged(text: str, first: bool, last: bool) -> Markup:
    """An unchanged run: whole when short; else its start (unless it opens the text),
    a note, its end (unless it closes the text)."""
    head = "" if first else _head(text)
    tail = "" if last else _tail(text)
    if first and last:  # no change at all: the text's start
        head = _head(text)
    left_out = len(text) - len(head) - len(tail)
    if left_out < _MIN_FOLD:
        return _text(text)
    return _text(head) + _skipped(left_out) + _text(tail)


def inline(diff: WordDiff) -> Markup:
    """The diff as one text: unchanged runs (folded), ``<ins>`` and ``<del>`` runs."""
    out = Markup("")
    last = len(diff.ops) - 1
    for n, (op, text) in enumerate(diff.ops):
        if op == "equal":
            out += _unchanged(text, n == 0, n == last)
        else:
            out += Markup("<{0}>{1}</{0}>").format("ins" if op == "insert" else "del",
                                                   _text(text))  # fmt: skip
    return out


def side_by_side(diff: WordDiff) -> tuple[Markup, Markup]:
    """The version before (unchanged and ``<del>`` runs) and after (unchanged and
    ``<ins>`` runs), unchanged runs folded alike on both sides."""
    before, after = Markup(""), Markup("")
    last = len(diff.ops) - 1
    for n, (op, text) in enumerate(diff.ops):
        if op == "equal":
            same = _unchanged(text, n == 0, n == last)
            before, after = before + same, after + same
        elif op == "delete":
            before += Markup("<del>{}</del>").format(_text(text))
        else:
            after += Markup("<ins>{}</ins>").format(_text(text))
    return before, after
