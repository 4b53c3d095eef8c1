"""The search settings as one value, read once (``SearchConfig``)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from scrapy.settings import BaseSettings

DEFAULT_FOLDER = "search-index"


@dataclass(frozen=True)
class Ranking:
    """How results are ordered: ``title_boost`` multiplies a title match's score;
    ``prior`` weighs the link prior, score * (1 + prior * ln(1 + in-links))."""

    title_boost: float = 2.0
    prior: float = 0.1
    # What a query word is matched by besides its lemma (bench/search_quality.py measures
    # each): the ascii fields, the vocabulary of words written with diacritics, the stems
    # (weighed by ``stem_weight`` against a lemma's match).
    ascii: bool = True
    vocabulary: bool = True
    stems: bool = True
    stem_weight: float = 0.5


DEFAULT_RANKING = Ranking()


@dataclass(frozen=True)
class SearchConfig:
    folder: Path  # SEARCH_INDEX, else DEFAULT_FOLDER
    at_crawl_end: bool  # SEARCH_INDEX set: a crawl updates the index as it closes
    ranking: Ranking  # SEARCH_TITLE_BOOST, SEARCH_LINK_PRIOR
    processes: int  # SEARCH_INDEX_PROCESSES, 0 made the CPU count
    text_chars: int  # TEXT_MAX_CHARS: what the index reads of a page's text, at most

    @classmethod
    def from_settings(cls, s: BaseSettings) -> SearchConfig:
        folder = (s.get("SEARCH_INDEX") or "").strip()
        ranking = Ranking(s.getfloat("SEARCH_TITLE_BOOST"), s.getfloat("SEARCH_LINK_PRIOR"))
        processes = s.getint("SEARCH_INDEX_PROCESSES") or os.cpu_count() or 1
        text_chars = max(1, s.getint("TEXT_MAX_CHARS"))
        return cls(
            Path(folder or DEFAULT_FOLDER), bool(folder), ranking, max(1, processes), text_chars
        )
