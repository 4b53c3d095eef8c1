"""Search terms for Slovenian (govsi.search.analysis): inflected forms meet in one term,
words typed without diacritics meet the words as written, stop words drop out."""

from __future__ import annotations

import pytest

from govsi.search.analysis import (
    GAP,
    MAX_WORD,
    TITLE_KEYS,
    analyzed,
    ascii_term,
    ascii_terms,
    common_stems,
    fold,
    forms,
    lemma,
    pairs,
    stem,
    stem_field,
    term,
    terms,
    word_keys,
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
    assert analyzed(words("Občinah je prebivališče in Ljubljana")).restorations == {
        ("obcin", "obcina"), ("prebivalisc", "prebivalisce")
    }  # fmt: skip


@pytest.mark.parametrize(
    ("stems_", "common", "expected"),
    [
        (["uredb", "obcin", "vlad"], {"uredb", "obcin", "vlad"}, ["uredb+obcin", "obcin+vlad"]),
        (["uredb", "xyz", "obcin"], {"uredb", "obcin"}, []),  # neighbours only
        (["uredb", "obcin", "uredb"], {"uredb", "obcin"}, ["uredb+obcin", "obcin+uredb"]),
        (["obcin", "obcin"], {"obcin"}, ["obcin+obcin"]),
        (["obcin"], {"obcin"}, []),
        ([], {"obcin"}, []),
        (["uredb", "obcin"], set(), []),
    ],
)
def test_pairs_join_neighbouring_common_stems(
    stems_: list[str], common: set[str], expected: list[str]
) -> None:
    assert pairs(stems_, frozenset(common)) == expected


def test_common_stems_are_in_a_share_of_the_texts_at_most_so_many() -> None:
    texts = [["a", "b", "a"], ["a", "c"], ["a", "b"], ["d"]]  # a in 3, b in 2, c and d in 1
    assert common_stems(texts, 0.5, 10) == {"a", "b"}  # a text counts each stem once
    assert common_stems(texts, 0.75, 10) == {"a"}
    assert common_stems(texts, 0.5, 1) == {"a"}
    assert common_stems(texts, 0.0, 10) == {"a", "b", "c", "d"}  # at least once
    assert common_stems([], 0.5, 10) == frozenset()


@pytest.mark.parametrize(
    ("word", "keys"),
    [
        ("občinah", ("obcin",)),  # the stem is the lemma's stem: one key
        ("obcina", ("obcin",)),
        ("postopkom", ("postopk", "postopek")),  # the lemma's stem is another
        ("ljudje", ("ljudj", "clovek")),  # a lemma no ending meets
        ("psa", ("psa", "pes")),
        ("2024", ("2024",)),
    ],
)
def test_a_words_keys_are_its_stem_and_its_lemmas_stem(word: str, keys: tuple[str, ...]) -> None:
    found = forms(word)
    assert found is not None and word_keys(word) == keys
    assert (found[2], found[3]) == (*keys, "")[:2]


@pytest.mark.parametrize(
    ("a", "b", "meet"),
    [
        ("postopkom", "postopek", True),  # one lemma
        ("ljudje", "človek", True),
        ("psa", "pes", True),
        ("občinah", "obcina", True),  # one stem, no diacritics
        ("občinskih", "občinah", False),  # another word
        ("pes", "uredba", False),
    ],
)
def test_words_of_one_stem_or_one_lemma_share_a_key(a: str, b: str, meet: bool) -> None:
    assert bool({*word_keys(a)} & {*word_keys(b)}) == meet


def test_the_stem_field_keeps_the_bodys_stems_in_order_then_the_other_keys() -> None:
    body, title = analyzed(words("Postopkom o občinah")), analyzed(words("Ljudje"))
    assert stem_field(body, title) == [
        "postopk", "obcin", GAP, "postopek", *[GAP, "ljudj", "clovek"] * TITLE_KEYS
    ]  # fmt: skip
    assert GAP not in words(GAP)  # no word is the gap


def test_a_run_of_letters_longer_than_a_word_is_left_out() -> None:
    longest = "č" * MAX_WORD
    assert words(f"Uredba {longest} o {longest}x občinah") == ["uredba", longest, "o", "občinah"]


def test_a_word_lemmagen3_fails_on_stands_for_itself(caplog: pytest.LogCaptureFixture) -> None:
    # Such words no longer come from ``words``; a caller's own still gets an answer.
    hostile = "ab" + "č" * 130 + "x"
    assert lemma(hostile) == hostile
    assert "lemmagen3 failed on a word of 133 letters" in caplog.text
