"""The language of a text, among those the crawl meets: Slovenian, English, and others
only when the page says so (pure)."""

from __future__ import annotations

import re

# Frequent function words, each frequent in one language and rare in the other.
_SL_WORDS = (
    "in je za na se da so ki v z s o po pri od do iz ali tudi kot bo bi ter ni ne pa še že "
    "bodo lahko oziroma jih kar med brez glede tega ta to te smo ste sem"
)
_EN_WORDS = (
    "the and of to is for on that with by are this be from as at or which an not have has "
    "will can was were it its"
)
_SL, _EN = frozenset(_SL_WORDS.split()), frozenset(_EN_WORDS.split())
_EN_ONLY = _EN - _SL
_WORD = re.compile(r"[^\W\d_]+")
_SAMPLE = 20_000  # characters looked at: plenty for a decision, bounded cost
_TAG = re.compile(r"^[a-zA-Z]{2,3}")


def declared_language(value: str | None) -> str | None:
    """The primary subtag of a language attribute (``sl-SI`` → ``sl``), lower-cased;
    None for a missing or malformed one."""
    if not value:
        return None
    m = _TAG.match(value.strip())
    return m.group(0).lower() if m else None


def guess_language(text: str, declared: str | None = None) -> str | None:
    """``sl`` or ``en`` from the text's function words; the ``declared`` language
    (``<html lang>``, a document's metadata) when the text does not decide; None when
    neither says."""
    words = _WORD.findall(text[:_SAMPLE].lower())
    # Counted in C; a word of both lists ("to") counts as Slovenian.
    sl = sum(map(_SL.__contains__, words))
    en = sum(map(_EN_ONLY.__contains__, words))
    if sl + en >= 5 and max(sl, en) >= 2 * min(sl, en):
        return "sl" if sl > en else "en"
    return declared_language(declared)
