"""Search terms for Slovenian (govsi.search.analysis): inflected forms meet in one term,
words typed without diacritics meet the words as written, stop words drop out."""

from __future__ import annotations

import pytest

from govsi.search.analysis import (
    ascii_term,
    ascii_terms,
    fold,
    restorations,
    stem,
    term,
    terms,
    words,
)


@pytest.mark.parametrize(
    "forms",
    [
        ["občina", "občine", "občini", "občino", "občinah", "Občine", "OBČINAH"],
        ["uredba", "uredbe", "uredbi", "uredbo"],
        ["ministrstvo", "ministrstva", "ministrstvu"],
        ["javen", "javna", "javnih", "javnem"],
        ["potrdilo", "potrdilu"],
        ["vlada", "vlade", "vladi", "vlado"],
    ],
)
def test_inflected_forms_meet_in_one_term(forms: list[str]) -> None:
    assert len({term(w) for w in words(" ".join(forms))}) == 1


@pytest.mark.parametrize(
    "written", ["občine", "prebivališču", "davčne", "naročila", "Šolo", "žaba", "čebela"]
)
def test_a_word_typed_without_diacritics_meets_the_word_as_written(written: str) -> None:
    (word,) = words(written)
    typed = fold(word)
    assert typed.isascii() and typed != word
    # The query's ASCII word, analyzed as a query word is, is the text word's ascii_term.
    assert ascii_term(typed) == ascii_term(word)


@pytest.mark.parametrize(
    ("word", "folded"),
    [("čšž", "csz"), ("ČŠŽ".lower(), "csz"), ("ćđ", "cd"), ("öüé", "oue"), ("abc", "abc"),
     ("2025", "2025")],
)  # fmt: skip
def test_fold(word: str, folded: str) -> None:
    assert fold(word) == folded


def test_stop_words_and_punctuation_drop_out_numbers_stay() -> None:
    text = "Potrdilo o stalnem prebivališču, in to za leto 2025!"
    assert terms(text) == ["potrdilo", "stalen", "prebivalisce", "leto", "2025"]
    assert ascii_terms(text)[-2:] == ["leto", "2025"] and "o" not in ascii_terms(text)


def test_the_variants_measured_against_each_other() -> None:
    text = "Občine in ministrstva"
    assert terms(text, "raw") == ["občine", "in", "ministrstva"]
    assert terms(text, "folded") == ["obcine", "ministrstva"]
    assert terms(text, "lemmas") == ["obcina", "ministrstvo"]


@pytest.mark.parametrize(
    ("words_", "stemmed"),
    [(["obcina", "obcine", "obcinah", "obcini", "obcino"], "obcin"),
     (["javnega", "javnemu", "javnih", "javna"], "javn"),
     (["ob", "in"], None)],
)  # fmt: skip
def test_a_stem_joins_a_words_inflections_typed_without_diacritics(
    words_: list[str], stemmed: str | None
) -> None:
    got = {stem(w) for w in words_}
    assert got == ({stemmed} if stemmed else set(words_))


def test_restorations_key_each_written_word_by_its_stem() -> None:
    assert restorations(words("Občinah je prebivališče")) == {
        ("obcin", "obcina"), ("prebivalisc", "prebivalisce")
    }  # fmt: skip
