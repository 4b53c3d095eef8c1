"""A page's signature and main text cost bounded memory, whatever the page, and ordinary
pages keep the signatures they had before the bounds (stored ones still compare)."""

from __future__ import annotations

import random
import re
import tracemalloc
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from govsi.dedup import signature as sig
from govsi.dedup.signature import exact_key, make_minhash, shingle_hashes, signature_of_text
from govsi.text.maintext import main_text, normalized, whole_text

_WORDS = [
    "vlada",
    "je",
    "sprejela",
    "uredbo",
    "o",
    "javnih",
    "naročilih",
    "za",
    "občine",
    "in",
    "ministrstva",
]


def _unbounded_signature(text: str) -> Any:
    """The signature before the bounds: every shingle hash, repeats included, at once."""
    hashes = shingle_hashes(text)
    if len(hashes) == 0:
        return None
    minhash = make_minhash(sig.DEFAULT_NUM_PERM)
    minhash.update_batch(hashes.tolist())
    return minhash


def _prose(words: int, seed: int = 1) -> str:
    rng = random.Random(seed)
    return " ".join(rng.choice(_WORDS) + str(rng.randrange(9999)) for _ in range(words))


def _peak(run: Callable[[], object]) -> int:
    """Peak bytes Python and numpy allocated while ``run`` ran."""
    tracemalloc.start()
    try:
        run()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize(
    "text",
    [
        "kratko",
        "a b c",
        " ".join(_WORDS),
        " ".join(_WORDS * 40),  # repeats
        _prose(3000),
        _prose(sig.MAX_SHINGLES - 10),  # just under the cap on shingles
        _prose(2 * sig.SHINGLE_CHUNK + 7),  # several batches
    ],
    ids=["one-word", "short", "sentence", "repeats", "page", "near-cap", "batches"],
)
def test_pages_under_the_bounds_keep_their_signature(text: str) -> None:
    assert len(text) <= sig.MAX_TEXT_CHARS
    new, old = signature_of_text(text), _unbounded_signature(text)
    assert new is not None and old is not None
    assert np.array_equal(new.hashvalues, old.hashvalues)


def test_a_text_past_the_bound_is_signed_by_its_beginning() -> None:
    head = _prose(20_000)
    text = head + " " * (sig.MAX_TEXT_CHARS - len(head)) + _prose(5000, seed=2)
    signed, alone = signature_of_text(text), signature_of_text(head)
    assert signed is not None and alone is not None
    assert np.array_equal(signed.hashvalues, alone.hashvalues)


def test_at_most_max_shingles_and_the_same_ones_for_equal_pages() -> None:
    hashes = shingle_hashes(_prose(3 * sig.MAX_SHINGLES))
    kept = sig.bounded_hashes(hashes)
    assert len(kept) == sig.MAX_SHINGLES
    assert np.array_equal(kept, np.sort(np.unique(hashes))[: sig.MAX_SHINGLES])
    # A near copy (another beginning) keeps nearly the same sample: a bottom-k sketch.
    other = sig.bounded_hashes(shingle_hashes("uvod " * 100 + _prose(3 * sig.MAX_SHINGLES)))
    assert len(np.intersect1d(kept, other)) > 0.99 * sig.MAX_SHINGLES


@pytest.mark.parametrize("word", ["a", "ab"])
def test_a_huge_one_word_text_is_signed_in_bounded_memory(word: str) -> None:
    # 4 MB: without the bounds a (2 M x 128) array of uint64, 2 GB (32 MB: 16 GB). With
    # them about 40 MB, for the MAX_TEXT_CHARS shingled, whatever the text's length.
    text = (word + " ") * (4 * 2**20 // (len(word) + 1))
    assert _peak(lambda: signature_of_text(text)) < 64 * 2**20


def test_main_text_of_a_huge_page_takes_memory_linear_in_its_size() -> None:
    # 1 MB of two-letter words: 350 000 words, as a list of strings 21 MB.
    words = 2**20 // 3
    html = "<html><body><main><p>" + "ab " * words + "</p></main></body></html>"
    assert _peak(lambda: exact_key(html)) < 5 * len(html)
    assert _peak(lambda: whole_text(html)) < 5 * len(html)
    assert main_text(html) == "ab " * (words - 1) + "ab"


_CHARS = [chr(c) for c in (0x41, 0x5A, 0x61, 0x7A, 0x30, 0x39, 0x5F, 0x2D, 0x2E, 0x20, 0x20,
                           0x09, 0x0A, 0xA0, 0x10D, 0x160, 0x17E, 0xDF, 0x130, 0x3A3, 0x3C3,
                           0x2028, 0x1F600, 0x3000, 0x4E2D)]  # fmt: skip


def test_normalized_text_is_the_words_joined_by_spaces() -> None:
    # What main_text always returned: the \w+ runs of the lower-cased text, in any pieces.
    rng = random.Random(7)
    for _ in range(3000):
        text = "".join(rng.choice(_CHARS) for _ in range(rng.randrange(40)))
        expected = " ".join(re.findall(r"\w+", text.lower()))
        for chunk in (1, 2, 5, 1 << 16):
            assert normalized(text, chunk) == expected, (text, chunk)
