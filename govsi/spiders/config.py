"""What the govsi spider itself reads from settings, as plain values, read once in
``GovsiSpider.from_crawler``. Its parts read their own (``govsi.responses.parts``); the
crawl's scope and depth are theirs too (``Admission.scope``)."""

from __future__ import annotations

from dataclasses import dataclass

from scrapy.settings import BaseSettings

__all__ = ["SpiderConfig"]


@dataclass(frozen=True)
class SpiderConfig:
    seed_urls: tuple[str, ...]  # SEED_URLS (the spider's ``seeds`` argument wins)

    @classmethod
    def from_settings(cls, s: BaseSettings) -> SpiderConfig:
        return cls(seed_urls=tuple(s.getlist("SEED_URLS")))
