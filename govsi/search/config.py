"""The search settings as one value, read once (``SearchConfig``)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from scrapy.settings import BaseSettings

from govsi.search.searcher import Ranking

DEFAULT_FOLDER = "search-index"


@dataclass(frozen=True)
class SearchConfig:
    folder: Path  # SEARCH_INDEX, else DEFAULT_FOLDER
    at_crawl_end: bool  # SEARCH_INDEX set: a crawl updates the index as it closes
    ranking: Ranking  # SEARCH_TITLE_BOOST, SEARCH_LINK_PRIOR
    processes: int  # SEARCH_INDEX_PROCESSES, 0 made the CPU count

    @classmethod
    def from_settings(cls, s: BaseSettings) -> SearchConfig:
        folder = (s.get("SEARCH_INDEX") or "").strip()
        ranking = Ranking(s.getfloat("SEARCH_TITLE_BOOST"), s.getfloat("SEARCH_LINK_PRIOR"))
        processes = s.getint("SEARCH_INDEX_PROCESSES") or os.cpu_count() or 1
        return cls(Path(folder or DEFAULT_FOLDER), bool(folder), ranking, max(1, processes))
