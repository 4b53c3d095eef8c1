"""crawldb as a command that only reads it opens it (``database.reading_engine``)."""

from __future__ import annotations

from collections.abc import Callable

from scrapy.commands import ScrapyCommand
from sqlalchemy import Engine

from govsi.store import database

__all__ = ["read_crawldb"]


def read_crawldb(command: ScrapyCommand, url: str, say: Callable[[str], object]) -> Engine | None:
    """crawldb at ``url``, read-only; None when there is none to read (``say`` is told
    why, and ``command`` exits with status 1)."""
    try:
        return database.reading_engine(url)
    except database.NoCrawldb as e:
        say(str(e))
        command.exitcode = 1
        return None
