"""A word-level diff of two versions of a page's main text, bounded (pure).

``word_diff`` cuts each input to ``max_chars`` (``truncated``) and gives the search
``timeout`` seconds; past it the part still unsolved is reported as removed and added
whole (``timed_out``): coarser, never wrong. Words are runs of non-space characters with
the whitespace after them, so joining the runs of one side gives that side back.

Google's diff-match-patch (Myers' O(ND) bisection with a deadline) over words mapped to
one character each (its lines-to-chars trick on words): difflib's SequenceMatcher has no
deadline and goes quadratic on repeated words (bench/README.md "Changes").
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Literal

from diff_match_patch import diff_match_patch

from govsi.printable import printable

__all__ = ["DiffOp", "WordDiff", "excerpt", "word_diff"]

DiffOp = Literal["equal", "insert", "delete"]
_OPS: dict[int, DiffOp] = {
    diff_match_patch.DIFF_EQUAL: "equal",
    diff_match_patch.DIFF_INSERT: "insert",
    diff_match_patch.DIFF_DELETE: "delete",
}
# A word with the whitespace after it; whitespace at the very start is a token of its own.
_TOKEN = re.compile(r"\S+\s*|\s+")
_WORD = re.compile(r"\S+")
# Token codes skip the surrogates (U+D800-U+DFFF), which some str operations refuse.
_SURROGATES = range(0xD800, 0xE000)


@dataclass(frozen=True, slots=True)
class WordDiff:
    """The runs of a diff in order: each whole words with their whitespace, kept
    (``equal``), added (``insert``) or removed (``delete``). The raw texts: a renderer
    escapes what it shows."""

    ops: tuple[tuple[DiffOp, str], ...]
    truncated: bool = False  # an input was cut to the size bound
    timed_out: bool = False  # the time bound stopped the search: a coarser diff


def _code(n: int) -> str:
    return chr(n + len(_SURROGATES) if n >= _SURROGATES.start else n)


def _encode(tokens: list[str], codes: dict[str, str], table: list[str]) -> str:
    out = []
    for token in tokens:
        code = codes.get(token)
        if code is None:
            code = codes[token] = _code(len(table))
            table.append(token)
        out.append(code)
    return "".join(out)


def word_diff(
    before: str, after: str, *, max_chars: int = 200_000, timeout: float = 1.0
) -> WordDiff:
    """The word-level diff of ``before`` into ``after``, each cut to ``max_chars`` first,
    the search stopped after ``timeout`` seconds (0: no limit)."""
    truncated = len(before) > max_chars or len(after) > max_chars
    before, after = before[:max_chars], after[:max_chars]
    codes: dict[str, str] = {}
    table: list[str] = []
    # At most max_chars tokens a side, 2 * 200 000 by default: far below the ~1.1 million
    # code points available.
    left = _encode(_TOKEN.findall(before), codes, table)
    right = _encode(_TOKEN.findall(after), codes, table)
    dmp = diff_match_patch()
    dmp.Diff_Timeout = timeout
    deadline = time.time() + timeout if timeout > 0 else None
    found = dmp.diff_main(left, right, checklines=False, deadline=deadline)
    timed_out = deadline is not None and time.time() >= deadline
    ops = tuple(
        (_OPS[op], "".join(table[_index(c)] for c in text)) for op, text in found if text
    )
    return WordDiff(ops, truncated, timed_out)


def _index(code: str) -> int:
    n = ord(code)
    return n - len(_SURROGATES) if n >= _SURROGATES.stop else n


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
