"""How text becomes search terms, for Slovenian (pure).

Slovenian inflects heavily (*občina, občine, občini, občino, občinah*) and people type it
without diacritics (*obcina*). Each word is lower-cased and lemmatized with lemmagen3's
Slovenian model, then its diacritics folded (``term``): *občinah* → *obcina*. A word typed
without diacritics cannot be lemmatized that way (lemmagen3 reads *obcine* as another word),
so every indexed word also gets its ``ascii_term``, the lemma of its folded form, which is
exactly what such a query word becomes: *občine* → *obcine* → *obcin*, as does the query
*obcine*. That meets only the same inflected form (lemmagen3's lemmas of unaccented forms
disagree: *obcina* → *obcin*, *obcinah* → *obcina*), so the index also keeps a vocabulary,
each word written with diacritics by the stem of its folded form (``restorations``): the
query word *obcina* stands for the term of *občinah* too. Stop words (function words) are dropped.

``Analysis`` names the variants measured against each other (bench/search_quality.py):
``raw`` tokens (what an analyzer-less engine does), ``folded`` and ``lemmas``.
"""

from __future__ import annotations

import logging
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import pairwise
from typing import Literal

Analysis = Literal["raw", "folded", "lemmas"]

logger = logging.getLogger(__name__)

_WORD = re.compile(r"[^\W_]+")
# Letters NFD does not split into a base and a mark.
_EXTRA = str.maketrans({"đ": "d", "ð": "d", "ø": "o", "ł": "l", "ß": "ss", "æ": "ae", "œ": "oe"})
# Slovenian function words, as they fold (the query's and the text's words fold first).
_STOP = """a ali bi bil bila bile bili bilo biti bo bodo bom bomo bos bosta boste bova ce cez
da do dokler ga gre ima imajo imam imamo imate in iz ja jaz je jih jim jo ju k kadar kaj
kajti kako kakor kar kateri katera katere katerega katerem katerih katerim katero ker ki
kje kjer ko koder kot ku le lahko med mi midva mu na nad naj nam nas ne nek nekaj ni nic
niti no o ob od oz oziroma pa pac po pod pol pred pri s sa se sebe sem si so sta ste sva
ta tak tako tam te tega tem ter tev ti tj tisti to tod tu tudi tukaj v vas ve vendar vi
vsa vse vsi vsak z za zaradi ze zdaj"""
STOP_WORDS = frozenset(_STOP.split())


# Letters a word has at most: a longer run (a hash, encoded data, a hostile page's filler)
# is no word and is left out. lemmagen3 fails on words of more than about 128 letters with
# diacritics (it cuts their UTF-8 inside a character), and every word is an entry in the
# analysis's caches, whatever its length.
MAX_WORD = 64


def words(text: str) -> list[str]:
    """The words of ``text`` (runs of letters and digits, at most ``MAX_WORD`` of them),
    lower-cased."""
    return [w for w in _WORD.findall(text.lower()) if len(w) <= MAX_WORD]


@lru_cache(maxsize=65_536)
def fold(word: str) -> str:
    """``word`` without diacritics: *čšžćđ* → *csz cd*; ASCII is returned as it is."""
    if word.isascii():
        return word
    decomposed = unicodedata.normalize("NFD", word.translate(_EXTRA))
    return "".join(c for c in decomposed if not unicodedata.combining(c))


_lemmatizer: Callable[[str], str] | None = None


def lemma(word: str) -> str:
    """lemmagen3's Slovenian lemma of the lower-cased ``word`` (loaded on first use)."""
    global _lemmatizer
    if _lemmatizer is None:
        import lemmagen3

        _lemmatizer = lemmagen3.Lemmatizer("sl").lemmatize
    return _cached_lemma(word)


@lru_cache(maxsize=262_144)
def _cached_lemma(word: str) -> str:
    assert _lemmatizer is not None
    try:
        return _lemmatizer(word) or word
    except Exception as e:  # lemmagen3's own failure on one word: the word stands for itself
        logger.warning("lemmagen3 failed on a word of %d letters (%r); kept as it is",
                       len(word), e)  # fmt: skip
        return word


def term(word: str, analysis: Analysis = "lemmas") -> str:
    """The indexed term of a lower-cased word (``words``): the word itself (``raw``), its
    folded form (``folded``), or its lemma folded (``lemmas``)."""
    if analysis == "raw":
        return word
    if analysis == "folded" or word.isdigit():
        return fold(word)
    return fold(lemma(word))


def ascii_term(word: str) -> str:
    """The term of ``word`` as typed without diacritics: the lemma of its folded form."""
    folded = fold(word)
    return folded if folded.isdigit() else lemma(folded)


def terms(text: str | list[str], analysis: Analysis = "lemmas") -> list[str]:
    """The terms of ``text`` (or of its ``words``) in order, stop words left out (kept for
    ``raw``)."""
    ws = words(text) if isinstance(text, str) else text
    return [term(w, analysis) for w in ws if analysis == "raw" or fold(w) not in STOP_WORDS]


def ascii_terms(text: str | list[str]) -> list[str]:
    """The ``ascii_term`` of ``text`` (or of its ``words``) in order, stop words left out."""
    ws = words(text) if isinstance(text, str) else text
    return [ascii_term(w) for w in ws if fold(w) not in STOP_WORDS]


# Slovenian inflectional endings, longest first, for ``stem``.
_ENDING_LIST = "ega emu ima imi ema ama ami ih im om em ov ev ah eh a e i o u"
_ENDINGS = sorted(_ENDING_LIST.split(), key=len, reverse=True)
MIN_STEM = 3


@lru_cache(maxsize=262_144)
def stem(folded: str) -> str:
    """A folded word without its inflectional ending (the longest that leaves at least
    ``MIN_STEM`` letters): *obcinah*, *obcina*, *obcine* → *obcin*."""
    for ending in _ENDINGS:
        if folded.endswith(ending) and len(folded) - len(ending) >= MIN_STEM:
            return folded[: -len(ending)]
    return folded


def stems(text: str | list[str]) -> list[str]:
    """The ``stem`` of each folded word of ``text`` (or of its ``words``), stop words left
    out: what meets a word's inflections when lemmagen3 gives them different lemmas."""
    ws = words(text) if isinstance(text, str) else text
    return [stem(fold(w)) for w in ws if fold(w) not in STOP_WORDS]


# Joins the two stems of a pair term (``pairs``); no word holds it.
PAIR_JOIN = "+"


def pairs(stems_: list[str], common: frozenset[str]) -> list[str]:
    """The pair terms of a text's ``stems_``: each two neighbours that are both ``common``,
    joined by ``PAIR_JOIN``. A two-word phrase of common words is found by its pair term,
    not by walking both words' positions in most pages (common grams)."""
    return [f"{a}{PAIR_JOIN}{b}" for a, b in pairwise(stems_) if a in common and b in common]


def common_stems(texts: Iterable[list[str]], share: float, most: int) -> frozenset[str]:
    """The stems found in at least ``share`` of ``texts`` (each text's stems), at most the
    ``most`` most widespread: those whose pairs are worth a term (``pairs``)."""
    seen: Counter[str] = Counter()
    n = 0
    for text in texts:
        seen.update(set(text))
        n += 1
    least = max(1.0, share * n)
    return frozenset(s for s, k in seen.most_common(most) if k >= least)


@dataclass
class Fields:
    """A text's terms for each kind of field (``analyzed``)."""

    terms: list[str] = field(default_factory=list)
    ascii_terms: list[str] = field(default_factory=list)
    stems: list[str] = field(default_factory=list)
    lemma_stems: list[str] = field(default_factory=list)  # the other ``word_keys``
    # (stem, term) of each word written with diacritics: the terms a query word typed
    # without them may stand for, whatever its inflection (the index's vocabulary).
    restorations: set[tuple[str, str]] = field(default_factory=set)


# What ``forms`` gives of a word: term, ascii term, stem, lemma stem ("" when it is the
# stem), restoration (None for a word without diacritics).
Forms = tuple[str, str, str, str, tuple[str, str] | None]


@lru_cache(maxsize=524_288)
def forms(word: str) -> Forms | None:
    """(``term``, ``ascii_term``, ``stem`` of the folded form, the lemma's stem when it is
    another ``word_keys``, else "", the ``restorations`` pair of a word written with
    diacritics, else None) of a lower-cased word; None for a stop word. Cached: a
    language's frequent words are few."""
    folded = fold(word)
    if folded in STOP_WORDS:
        return None
    if word.isdigit():
        return folded, folded, folded, "", None
    term_, stem_ = fold(lemma(word)), stem(folded)
    lemma_stem = stem(term_)
    restoration = None if word.isascii() else (stem_, term_)
    return term_, lemma(folded), stem_, "" if lemma_stem == stem_ else lemma_stem, restoration


def word_keys(word: str) -> tuple[str, ...]:
    """A lower-cased word's keys (none for a stop word): its stem, and its lemma's stem
    when that differs (``forms``). A query word and a page's word that share a stem or a
    lemma (what the stem and lemma fields match) share a key, found in one field's
    postings."""
    found = forms(word)
    if found is None:
        return ()
    return (found[2], found[3]) if found[3] else (found[2],)


def analyzed(ws: list[str]) -> Fields:
    """``terms``, ``ascii_terms``, ``stems``, ``lemma_stems`` and ``restorations`` of the
    words ``ws`` (analysis ``lemmas``) in one pass: what the index writes of a text."""
    found = [f for f in map(forms, ws) if f is not None]
    return Fields(
        [f[0] for f in found],
        [f[1] for f in found],
        [f[2] for f in found],
        [f[3] for f in found if f[3]],
        {f[4] for f in found if f[4] is not None},
    )


# How many times a title's keys are written into the stem field (``stem_field``): the
# title's weight against the body's in a query of several words.
TITLE_KEYS = 4
# Between the stem field's parts: no phrase runs from one part into the next.
GAP = "|"


def stem_field(body: Fields, title: Fields) -> list[str]:
    """The body's stem field: the body's stems, where phrases are matched; then, each part
    after a ``GAP``, the lemma stems that are not the word's own stem, and ``TITLE_KEYS``
    times the title's keys. Every ``word_keys`` of the page is in it, so a query of several
    words asks one field for each word (one term, or two), never a union of fields."""
    title_keys = [GAP, *title.stems, *title.lemma_stems]
    return [*body.stems, GAP, *body.lemma_stems, *(title_keys * TITLE_KEYS)]
