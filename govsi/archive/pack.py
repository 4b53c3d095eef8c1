"""Packing an archive for replay: a CDXJ index of the WARC files (cdxj-indexer) and a
WACZ package (py-wacz) that ReplayWeb.page opens, with a ``pages.jsonl`` of the crawl's
HTML pages and their titles. Only closed files are packed (a crawl still writing one
leaves it ``.open``); the index is written beside them as ``index.cdxj``.
"""

from __future__ import annotations

import html
import json
import re
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

__all__ = ["PageEntry", "pack", "pages_jsonl", "title_of", "warc_files"]

INDEX_NAME = "index.cdxj"
# A title is looked for in the head: the first 64 K characters, at most 300 of it kept.
_TITLE_SCAN = 64 * 1024
_TITLE_MAX = 300
# Found in three linear steps (the first <title, its >, the first </title> after it), not
# one pattern: ``<title\b[^>]*>(.*?)</title\s*>`` tried every <title of a page that never
# closes one to the end of the head: quadratic in the head (bench/README.md).
_OPEN = re.compile(r"<title\b", re.IGNORECASE)
_CLOSE = re.compile(r"</title\s*>", re.IGNORECASE)
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class PageEntry:
    url: str
    title: str | None


def title_of(document: str | None) -> str | None:
    """The page's ``<title>``, unescaped, spaces collapsed; None when it has none (pure,
    bounded: only the document's start is read, in time linear in it)."""
    if not document:
        return None
    head = document[:_TITLE_SCAN]
    opened = _OPEN.search(head)
    # The first <title is the one: if it has no > or no </title> after it, no later one does.
    starts = head.find(">", opened.end()) + 1 if opened else 0
    closed = _CLOSE.search(head, starts) if starts else None
    if closed is None:
        return None
    text = _SPACE.sub(" ", html.unescape(head[starts : closed.start()])).strip()
    return text[:_TITLE_MAX] or None


def pages_jsonl(pages: Iterable[PageEntry]) -> Iterator[str]:
    """The lines of a WACZ ``pages.jsonl`` (json-pages-1.0): a header, then a page each.
    No ``ts``: py-wacz would then match a page only to a record of that very second, and
    crawldb's fetch time may be a second off the record's WARC-Date; without it, py-wacz
    takes the time of the page's record."""
    yield json.dumps({"format": "json-pages-1.0", "id": "pages", "title": "All Pages"})
    for page in pages:
        entry: dict[str, str] = {"id": uuid.uuid5(uuid.NAMESPACE_URL, page.url).hex,
                                 "url": page.url}  # fmt: skip
        if page.title:
            entry["title"] = page.title
        yield json.dumps(entry, ensure_ascii=False)


def warc_files(directory: str | Path) -> list[Path]:
    """The closed WARC files in ``directory``, in the order they were written."""
    return sorted(Path(directory).glob("*.warc.gz"))


def pack(
    directory: str | Path, output: str | Path, pages: Iterable[PageEntry], title: str = ""
) -> tuple[Path, Path]:
    """Index ``directory``'s WARC files (``index.cdxj`` beside them) and package them with
    ``pages`` as the WACZ ``output``; returns the index and the package."""
    # Imported when packing: py-wacz and cdxj-indexer are heavy, and only this needs them.
    from cdxj_indexer.main import write_cdx_index
    from wacz.main import main as wacz_main

    files = warc_files(directory)
    if not files:
        raise FileNotFoundError(f"no closed WARC files (*.warc.gz) in {directory}")
    index = Path(directory) / INDEX_NAME
    write_cdx_index(str(index), [str(f) for f in files], {"sort": True})
    output = Path(output)
    output.parent.mkdir(parents=True, exist_ok=True)
    listing = output.with_suffix(".pages.jsonl")
    with open(listing, "w", encoding="utf-8") as f:
        for line in pages_jsonl(pages):
            f.write(line + "\n")
    try:
        args = ["create", "-o", str(output), "-p", str(listing)]
        if title:
            args += ["--title", title]
        status = wacz_main([*args, *map(str, files)])
    finally:
        listing.unlink(missing_ok=True)
    if status not in (0, None):
        raise RuntimeError(f"py-wacz could not build {output} (status {status})")
    return index, output
