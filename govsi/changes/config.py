"""The changes' settings as one value, read once (``ChangesConfig``)."""

from __future__ import annotations

from dataclasses import dataclass

from scrapy.settings import BaseSettings

__all__ = ["ChangesConfig"]


@dataclass(frozen=True, slots=True)
class ChangesConfig:
    diff_max_chars: int = 200_000  # CHANGES_DIFF_MAX_CHARS: a change's diff, each side
    diff_timeout: float = 1.0  # CHANGES_DIFF_TIMEOUT: its search, seconds
    excerpt_max_chars: int = 20_000  # CHANGES_EXCERPT_DIFF_CHARS: a listed change's sides
    excerpt_timeout: float = 0.2  # CHANGES_EXCERPT_DIFF_TIMEOUT: its diff's search
    scan_max: int = 5_000  # CHANGES_SCAN_MAX: changes a search-word filter reads at most
    match_max_chars: int = 50_000  # CHANGES_MATCH_MAX_CHARS: a text's part matched
    excerpt_budget: float = 1.0  # CHANGES_EXCERPT_BUDGET: a list's excerpts' diffs in all

    @classmethod
    def from_settings(cls, s: BaseSettings) -> ChangesConfig:
        return cls(
            max(1, s.getint("CHANGES_DIFF_MAX_CHARS")),
            max(0.0, s.getfloat("CHANGES_DIFF_TIMEOUT")),
            max(1, s.getint("CHANGES_EXCERPT_DIFF_CHARS")),
            max(0.0, s.getfloat("CHANGES_EXCERPT_DIFF_TIMEOUT")),
            max(1, s.getint("CHANGES_SCAN_MAX")),
            max(1, s.getint("CHANGES_MATCH_MAX_CHARS")),
            max(0.0, s.getfloat("CHANGES_EXCERPT_BUDGET")),
        )


DEFAULT_CONFIG = ChangesConfig()
