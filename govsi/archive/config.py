"""The archive's settings, read once (WARC_*)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the archive's process reads this module and must not import Scrapy
    from scrapy.settings import BaseSettings

__all__ = ["ArchiveConfig"]


@dataclass(frozen=True)
class ArchiveConfig:
    directory: str  # WARC_DIR
    prefix: str  # WARC_PREFIX
    max_size: int  # WARC_MAX_SIZE, bytes (0: never rotate)
    gzip_level: int  # WARC_GZIP_LEVEL
    operator: str  # WARC_OPERATOR
    revisit_digests: int  # WARC_REVISIT_DIGESTS
    user_agent: str
    obey_robots: bool
    queue_max_bytes: int = 0  # WARC_QUEUE_MAX_BYTES (0: no limit)

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> ArchiveConfig | None:
        """The archive's configuration; None when WARC_DIR is not set (no archive)."""
        directory = (settings.get("WARC_DIR") or "").strip()
        if not directory:
            return None
        level = settings.getint("WARC_GZIP_LEVEL", 2)
        if not 0 <= level <= 3:
            raise ValueError(f"WARC_GZIP_LEVEL must be 0-3 (ISA-L's levels), not {level}")
        return cls(
            directory=directory,
            prefix=(settings.get("WARC_PREFIX") or "govsi").strip() or "govsi",
            max_size=max(0, settings.getint("WARC_MAX_SIZE")),
            gzip_level=level,
            operator=settings.get("WARC_OPERATOR") or "",
            revisit_digests=max(0, settings.getint("WARC_REVISIT_DIGESTS")),
            user_agent=settings.get("USER_AGENT") or "",
            obey_robots=settings.getbool("ROBOTSTXT_OBEY"),
            queue_max_bytes=max(0, settings.getint("WARC_QUEUE_MAX_BYTES")),
        )
