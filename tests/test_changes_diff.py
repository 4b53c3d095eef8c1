"""The word-level diff of two texts (``govsi.changes.diff``): tables of what is added,
removed and kept (whole words; punctuation and whitespace apart; empty sides; Slovenian
letters), both sides given back by the runs; the bounds on hostile inputs (a size cut
flagged, a deadline flagged and still a correct diff, the output within the cut); the
excerpts: first words in order, runs apart marked, printable, within their bound."""

from __future__ import annotations

import random

import pytest

from govsi.changes.diff import MAX_CHARS, WordDiff, excerpt, word_diff
from govsi.printable import UNPRINTABLE

Ops = tuple[tuple[str, str], ...]


@pytest.mark.parametrize(
    ("before", "after", "ops"),
    [
        ("", "", ()),
        ("same text", "same text", (("equal", "same text"),)),
        ("", "Nova stran.", (("insert", "Nova stran."),)),
        ("Stara stran.", "", (("delete", "Stara stran."),)),
        ("Vlada je sprejela uredbo.", "Vlada je včeraj sprejela uredbo.",
         (("equal", "Vlada je "), ("insert", "včeraj "), ("equal", "sprejela uredbo."))),
        ("Rok je 15. 3. 2026.", "Rok je 30. 4. 2026.",
         (("equal", "Rok je "), ("delete", "15. 3"), ("insert", "30. 4"),
          ("equal", ". 2026."))),
        # punctuation is no part of the word: the word is kept, only "za okolje" added
        ("Novice ministrstva.", "Novice ministrstva za okolje.",
         (("equal", "Novice ministrstva"), ("insert", " za okolje"), ("equal", "."))),
        # a whole word changes, never part of one
        ("občina", "občine", (("delete", "občina"), ("insert", "občine"))),
        # changes on either side of a kept space are one change
        ("Vlada sprejela zakon", "Ministrstvo objavilo zakon",
         (("delete", "Vlada sprejela"), ("insert", "Ministrstvo objavilo"),
          ("equal", " zakon"))),
        ("a  b", "a b", (("equal", "a"), ("delete", "  "), ("insert", " "), ("equal", "b"))),
        ("Šola\nžaba", "Šola\nčaplja", (("equal", "Šola\n"), ("delete", "žaba"),
                                          ("insert", "čaplja"))),
    ],
)  # fmt: skip
def test_word_diff(before: str, after: str, ops: Ops) -> None:
    d = word_diff(before, after)
    assert d == WordDiff(ops)  # type: ignore[arg-type]
    assert sides(d) == (before, after)


def sides(d: WordDiff) -> tuple[str, str]:
    return ("".join(t for op, t in d.ops if op != "insert"),
            "".join(t for op, t in d.ops if op != "delete"))  # fmt: skip


def test_real_sized_texts_give_both_sides_back() -> None:
    rng = random.Random(52)
    vocabulary = ["uredba", "vlade", "o", "javnih", "naročilih", "občina", "župan", "razpis",
                  "rok", "2026", ".", ",", "(", ")"]  # fmt: skip
    for _ in range(20):
        before = " ".join(rng.choice(vocabulary) for _ in range(rng.randint(0, 400)))
        words = before.split()
        for _ in range(rng.randint(0, 10)):
            words.insert(rng.randint(0, len(words)), rng.choice(vocabulary))
            if words and rng.random() < 0.5:
                words.pop(rng.randrange(len(words)))
        after = "\n".join(words)
        d = word_diff(before, after, timeout=0)
        assert sides(d) == (before, after) and not d.timed_out
        assert all(t for _, t in d.ops)  # no empty runs
        assert all(a[0] != b[0] for a, b in zip(d.ops, d.ops[1:], strict=False))


N = 200_000


def _noise(rng: random.Random) -> str:
    return bytes(rng.randrange(256) for _ in range(N)).decode("latin-1")


RNG = random.Random(7)
ADVERSARIAL = {
    "repeated words, two alphabets": ("a b " * (N // 4), "b c " * (N // 4)),
    "random words of ten": (" ".join(RNG.choice("abcdefghij") for _ in range(N // 2)),
                            " ".join(RNG.choice("abcdefghij") for _ in range(N // 2))),
    "binary-looking": (_noise(RNG), _noise(RNG)),
    "control characters": ("\x00\x1b[2J " * (N // 6), "\x1b]52;c;AAAA\x07 " * (N // 14)),
}  # fmt: skip


@pytest.mark.parametrize("name", ADVERSARIAL)
def test_a_hard_diff_stops_at_its_deadline_and_is_still_correct(name: str) -> None:
    before, after = ADVERSARIAL[name]
    d = word_diff(before, after, timeout=0.05)
    assert d.timed_out and not d.truncated
    assert sides(d) == (before, after)


def test_an_easy_diff_is_not_flagged() -> None:
    d = word_diff("in je " * (N // 6), "je in " * (N // 6), timeout=30)
    assert not d.timed_out and not d.truncated
    assert sum(len(t) for op, t in d.ops if op != "equal") <= 6


@pytest.mark.parametrize(
    ("before", "after"),
    [("beseda " * 100_000, "druga " * 100_000), ("x" * 700_000, "y"), ("", "z" * 10_000_000)],
)
def test_inputs_are_cut_to_the_size_bound(before: str, after: str) -> None:
    d = word_diff(before, after, max_chars=1_000)
    assert d.truncated
    assert sides(d) == (before[:1_000], after[:1_000])
    big = word_diff(before, after, max_chars=10**9, timeout=0.5)
    assert big.truncated == (max(len(before), len(after)) > MAX_CHARS)
    assert all(len(side) <= MAX_CHARS for side in sides(big))


def test_one_giant_word() -> None:
    d = word_diff("x" * N, "x" * (N - 1) + "y")
    assert d.ops == (("delete", "x" * N), ("insert", "x" * (N - 1) + "y"))
    assert not d.timed_out and not d.truncated


DIFF = WordDiff((
    ("equal", "Vlada je "), ("insert", "včeraj \n\t"), ("equal", "sprejela "),
    ("insert", "novo"), ("equal", " uredbo"), ("delete", " o javnih  naročilih"),
))  # fmt: skip


@pytest.mark.parametrize(
    ("op", "max_chars", "expected"),
    [
        ("insert", 200, "včeraj … novo"),
        ("delete", 200, "o javnih naročilih"),
        ("equal", 200, "Vlada je … sprejela … uredbo"),
        ("delete", 8, "o javni…"),
        ("delete", 1, "…"),
        ("delete", 0, ""),
        ("insert", 13, "včeraj … novo"),
        ("insert", 12, "včeraj … no…"),
    ],
)
def test_excerpt(op: str, max_chars: int, expected: str) -> None:
    assert excerpt(DIFF, op, max_chars) == expected  # type: ignore[arg-type]


def test_excerpt_of_nothing() -> None:
    assert excerpt(WordDiff(()), "insert") == ""
    assert excerpt(word_diff("a b", "a b"), "delete") == ""
    assert excerpt(word_diff("a b", "a b  \n"), "insert") == ""  # whitespace only


@pytest.mark.parametrize(
    "hostile",
    ["\x1b]52;c;QUJD\x07", "\x1b[2J\x1b[H", "\u202eevil", "\x9b31m", "\ud800", "\x00\x7f"],
)  # fmt: skip
def test_excerpts_escape_control_characters(hostile: str) -> None:
    d = word_diff("kept ", f"kept {hostile} added")
    assert hostile in sides(d)[1]  # the diff stays raw
    shown = excerpt(d, "insert") + excerpt(word_diff(f"{hostile} x", "x"), "delete")
    assert not any(c in shown for c in _unprintable())
    assert "\\x" in shown or "\\u" in shown


def test_excerpts_make_line_breaks_spaces() -> None:
    d = word_diff("", "a\rb\x85c\u2028d\ne\x0bf")
    assert excerpt(d, "insert") == "a b c d e f"


def _unprintable() -> set[str]:
    import re

    pattern = re.compile(f"[{UNPRINTABLE}\n]")
    return {chr(c) for c in range(0x10000) if pattern.match(chr(c))}


def test_an_excerpt_of_a_huge_diff_is_bounded() -> None:
    d = word_diff("", "\x1b" * N + " " + "ž" * N, timeout=1)
    assert len(excerpt(d, "insert", 200)) == 200
