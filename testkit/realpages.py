"""The corpus of real gov.si pages in ``tests/data/realpages`` (see its README): pages of
e-prostor.gov.si, e-uprava.gov.si, evem.gov.si and podatki.gov.si as a crawler saved them
in spring 2019, each with the URL it was served at, and the expected main text of a
sample of them, written by hand.

The corpus is split once and for all by a hash of the URL: ``tuning`` pages may be looked
at while an extractor is written or tuned, ``heldout`` pages (about 30 %) only to measure
it. ``part_of(url)`` is the rule; the stored ``part`` of every page agrees with it.
"""

from __future__ import annotations

import functools
import hashlib
import json
import lzma
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

DIR = Path(__file__).resolve().parents[1] / "tests" / "data" / "realpages"
PAGES = DIR / "pages.jsonl.xz"
EXPECTED = DIR / "expected"

Part = Literal["tuning", "heldout"]
SITES = ("e-prostor.gov.si", "e-uprava.gov.si", "evem.gov.si", "podatki.gov.si")


@dataclass(frozen=True)
class RealPage:
    url: str
    # The site the page was crawled as (its host may be www.<site>).
    site: str
    part: Part
    # The page's bytes exactly as stored in the source (see ``source``); all are UTF-8.
    body: bytes
    # Where in the source repository the page is (README: repository and commit).
    source: str
    # How the URL was recovered: "og:url", "canonical", "share-link", "pager", "home",
    # "inbound-anchor" (README, "URLs").
    url_evidence: str
    sha1: str
    # Unknown for this corpus (the source kept no headers or times): None.
    fetched: str | None = None
    content_type: str | None = None
    charset: str = "utf-8"

    @property
    def html(self) -> str:
        return self.body.decode(self.charset)

    @property
    def key(self) -> str:
        return page_key(self.url)


def page_key(url: str) -> str:
    """The short name of a page: its expected text is ``expected/<key>.txt``."""
    return hashlib.sha256(url.encode("utf-8")).hexdigest()[:12]


def part_of(url: str) -> Part:
    """The fixed split: about 30 % of the URLs are held out."""
    bucket = int(hashlib.sha256(url.encode("utf-8")).hexdigest()[:8], 16) % 10
    return "heldout" if bucket < 3 else "tuning"


@functools.cache
def _load() -> tuple[RealPage, ...]:
    pages = []
    with lzma.open(PAGES, "rt", encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            charset = r["charset"] or "utf-8"
            pages.append(
                RealPage(
                    url=r["url"],
                    site=r["site"],
                    part=r["part"],
                    body=r["html"].encode(charset),
                    source=r["source"],
                    url_evidence=r["url_evidence"],
                    sha1=r["sha1"],
                    fetched=r["fetched"],
                    content_type=r["content_type"],
                    charset=charset,
                )
            )
    return tuple(pages)


def pages(part: Part | None = None, site: str | None = None) -> Iterator[RealPage]:
    """The corpus's pages, in a fixed order, optionally one part's or one site's only."""
    for p in _load():
        if (part is None or p.part == part) and (site is None or p.site == site):
            yield p


def page(url: str) -> RealPage:
    for p in _load():
        if p.url == url:
            return p
    raise KeyError(url)


def expected_texts() -> dict[str, str]:
    """Page key -> the main text a reader sees on that page (UTF-8 text, one block a
    line: headings, paragraphs, list items and table rows each on a line of its own)."""
    return {f.stem: f.read_text(encoding="utf-8") for f in sorted(EXPECTED.glob("*.txt"))}


def with_expected(part: Part | None = None) -> Iterator[tuple[RealPage, str]]:
    """The pages that have an expected text, with it."""
    texts = expected_texts()
    for p in pages(part):
        if p.key in texts:
            yield p, texts[p.key]
