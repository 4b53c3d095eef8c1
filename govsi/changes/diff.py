"""A word-level diff of two versions of a page's main text, bounded (pure).

``word_diff`` cuts each input to ``max_chars`` (``truncated``) and gives the search
``timeout`` seconds; past it the part still unsolved is reported as removed and added
whole (``timed_out``): coarser, never wrong. Its units are words, single other characters
(punctuation) and runs of whitespace (``tokens``); changes with no word kept between them
make one run; joining the runs of one side gives that side back.

Google's diff-match-patch (Myers' O(ND) bisection with a deadline: the fewest words
changed) over the units mapped to one character each (its lines-to-chars trick): difflib's
SequenceMatcher has no deadline, goes quadratic on hostile texts and marks more words
changed on real ones (bench/README.md, "Which word-level diff").
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import chain
from typing import Literal

from diff_match_patch import diff_match_patch

from govsi.printable import printable

__all__ = ["MAX_CHARS", "DiffOp", "WordDiff", "excerpt", "tokens", "word_diff"]

DiffOp = Literal["equal", "insert", "delete"]
_OPS: dict[int, DiffOp] = {
    diff_match_patch.DIFF_EQUAL: "equal",
    diff_match_patch.DIFF_INSERT: "insert",
    diff_match_patch.DIFF_DELETE: "delete",
}
# The diff's units: a word, one other character (punctuation is no part of a word: "2027."
# and "2027" share the word), a run of whitespace.
_TOKEN = re.compile(r"\w+|[^\w\s]|\s+")
# Tokens a side may have at most must stay within the code points (1 112 064): both sides
# together have at most 2 * MAX_CHARS.
MAX_CHARS = 500_000
_HAS_WORD = re.compile(r"\w")
_WORD = re.compile(r"\S+")


class _Bounded(diff_match_patch):  # type: ignore[misc]
    """diff-match-patch without its half-match speed-up, which runs before the deadline is
    looked at and is quadratic in repeated words (bench/README.md)."""

    def diff_halfMatch(self, text1: str, text2: str) -> None:
        return None


@dataclass(frozen=True, slots=True)
class WordDiff:
    """The runs of a diff in order: each whole words with their whitespace, kept
    (``equal``), added (``insert``) or removed (``delete``). The raw texts: a renderer
    escapes what it shows."""

    ops: tuple[tuple[DiffOp, str], ...]
    truncated: bool = False  # an input was cut to the size bound
    timed_out: bool = False  # the time bound stopped the search: a coarser diff


def _codes(units: Iterable[str]) -> dict[str, str]:
    """A character for each distinct token (the surrogates skipped), in map() and join()
    at C speed: a Python loop per token took most of the time budget (bench/README.md)."""
    points = chain(range(0xD800), range(0xE000, 0x110000))
    return dict(zip(dict.fromkeys(units), map(chr, points), strict=False))


def tokens(text: str) -> list[str]:
    """The diff's units of ``text``: words, single other characters, runs of whitespace."""
    return _TOKEN.findall(text)


def word_diff(
    before: str, after: str, *, max_chars: int = 200_000, timeout: float = 1.0
) -> WordDiff:
    """The word-level diff of ``before`` into ``after``, each cut to ``max_chars`` (at
    most ``MAX_CHARS``) first, the search stopped after ``timeout`` seconds (0: no
    limit). Joining the runs but the inserted gives ``before`` (as cut) back, joining
    those but the deleted ``after``."""
    max_chars = min(max_chars, MAX_CHARS)
    truncated = len(before) > max_chars or len(after) > max_chars
    before, after = before[:max_chars], after[:max_chars]
    # The deadline counts from here: the tokens' coding (linear) is part of the time.
    deadline = time.time() + timeout if timeout > 0 else None
    sides = tokens(before), tokens(after)
    codes = _codes(chain(*sides))
    left, right = ("".join(map(codes.__getitem__, side)) for side in sides)
    dmp = _Bounded()
    dmp.Diff_Timeout = timeout
    found = dmp.diff_main(left, right, checklines=False, deadline=deadline)
    timed_out = deadline is not None and time.time() >= deadline
    back = {code: token for token, code in codes.items()}
    runs = [(_OPS[op], "".join(map(back.__getitem__, text))) for op, text in found if text]
    return WordDiff(_joined(runs), truncated, timed_out)


def _joined(runs: list[tuple[DiffOp, str]]) -> tuple[tuple[DiffOp, str], ...]:
    """``runs`` with what is kept between two changes but no word (whitespace,
    punctuation) made part of both, and each stretch of changes as one removed and one
    added run: "Vlada sprejela" replaced, not "Vlada" and "sprejela" either side of a kept
    space; "15. 3" by "30. 4", not "15" by "30" and "3" by "4"."""
    out: list[tuple[DiffOp, str]] = []
    removed: list[str] = []
    added: list[str] = []
    for i, (op, text) in enumerate(runs):
        between = 0 < i < len(runs) - 1 and _HAS_WORD.search(text) is None
        if op == "equal" and not (between and removed + added):
            out += [("delete", "".join(removed))] if removed else []
            out += [("insert", "".join(added))] if added else []
            removed, added = [], []
            out.append((op, text))
            continue
        if op != "insert":
            removed.append(text)
        if op != "delete":
            added.append(text)
    out += [("delete", "".join(removed))] if removed else []
    out += [("insert", "".join(added))] if added else []
    return tuple(out)


def excerpt(diff: WordDiff, op: DiffOp, max_chars: int = 200) -> str:
    """The first words ``diff`` has under ``op``, in order, single spaces between them and
    " … " between runs apart, control characters escaped (``printable``), at most
    ``max_chars`` characters (cut with "…"); "" when there are none."""
    out = ""
    for kind, text in diff.ops:
        if kind != op:
            continue
        gap = " … "
        for word in _WORD.finditer(text):
            out += (gap if out else "") + printable(word.group())
            gap = " "
            if len(out) > max_chars:
                return out[: max_chars - 1] + "…" if max_chars > 0 else ""
    return out
