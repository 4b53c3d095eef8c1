"""Search words matched against a change's text the Slovenian way, as the search page
matches them (pure): a query word meets a text's word when they share a key
(``search.analysis.word_keys``: the stem of the folded word, or of its lemma), so
inflected forms and words typed without diacritics match; stop words are left out; every
query word is required."""

from __future__ import annotations

import re
from functools import lru_cache
from itertools import chain

from govsi.search.analysis import MAX_WORD, word_keys, words

__all__ = ["Words", "matches", "query_words"]

# Each query word's keys: a text matches when it has one of each.
Words = tuple[frozenset[str], ...]
# analysis.words' pattern, applied here to find each distinct word once: analysis.words
# keeps every occurrence, and the scan's time went there (bench/README.md, "changes filter").
_WORD = re.compile(r"[^\W_]+")
# word_keys cached as a C call: the scan asks it for every distinct word of every text.
_keys = lru_cache(maxsize=262_144)(word_keys)


def query_words(query: str) -> Words:
    """The keys of each word of ``query`` that is not a stop word (duplicates once)."""
    keys = (frozenset(word_keys(w)) for w in dict.fromkeys(words(query)))
    return tuple(k for k in keys if k)


def matches(wanted: Words, *texts: str) -> bool:
    """Whether ``texts`` together hold every word of ``wanted`` (True when none is)."""
    if not wanted:
        return True
    distinct: set[str] = set()
    for text in texts:
        distinct.update(_WORD.findall(text.lower()))
    # Every key of every distinct word at once, in C loops: a check per word and query
    # word was the scan's main cost (bench/README.md, "changes filter").
    keys = set(chain.from_iterable(map(_keys, (w for w in distinct if len(w) <= MAX_WORD))))
    return all(not w.isdisjoint(keys) for w in wanted)
