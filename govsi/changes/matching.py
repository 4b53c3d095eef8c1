"""Search words matched against a change's text the Slovenian way, as the search page
matches them (pure): a query word meets a text's word when they share a key
(``search.analysis.word_keys``: the stem of the folded word, or of its lemma), so
inflected forms and words typed without diacritics match; stop words are left out; every
query word is required."""

from __future__ import annotations

from govsi.search.analysis import word_keys, words

__all__ = ["Words", "matches", "query_words"]

# Each query word's keys: a text matches when it has one of each.
Words = tuple[frozenset[str], ...]


def query_words(query: str) -> Words:
    """The keys of each word of ``query`` that is not a stop word (duplicates once)."""
    keys = (frozenset(word_keys(w)) for w in dict.fromkeys(words(query)))
    return tuple(k for k in keys if k)


def matches(wanted: Words, *texts: str) -> bool:
    """Whether ``texts`` together hold every word of ``wanted`` (True when none is)."""
    if not wanted:
        return True
    missing = list(wanted)
    for text in texts:
        for word in set(words(text)):
            keys = word_keys(word)
            missing = [w for w in missing if w.isdisjoint(keys)]
            if not missing:
                return True
    return False
