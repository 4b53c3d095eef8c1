"""A small crawldb and its search index with hostile input in it, for the search page's
tests: pages whose titles and texts carry markup and script, more results than one page
holds, two hosts and two types."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import Engine

from govsi.items import FetchedPage, PageText
from govsi.search.config import SearchConfig
from govsi.search.index import SearchIndex
from govsi.search.searcher import Ranking
from govsi.search.update import update
from govsi.store.writer import CrawlWriter
from testkit.crawldb import T

HOSTILE_TITLE = (
    "<script>document.title='pwned'</script><img src=x onerror=\"document.title='img'\">"
)
HOSTILE_HTML = (
    "<html><head><title>Kopija</title><script>document.title='copy-ran'</script></head>"
    "<body><p>Uredba o občinah</p><img src=x onerror=\"document.title='copy-img'\"></body></html>"
)
PAGES = 14  # one more page of results than PER_PAGE holds


def build(engine: Engine, folder: Path) -> SearchConfig:
    """crawldb ``engine`` filled with the pages, ``folder`` indexed; the config to serve."""
    writer = CrawlWriter(engine)
    for n in range(PAGES):
        host = "www.gov.si" if n % 2 else "evem.gov.si"
        title = HOSTILE_TITLE if n == 0 else f"Uredba o občinah {n}"
        body = f"Vlada je sprejela uredbo o občinah številka {n}. <b>ni oznaka</b> & več."
        kind = "PDF" if n % 3 == 0 else "HTML"
        page_type = "BINARY" if kind == "PDF" else "HTML"
        writer.add(FetchedPage(
            f"https://{host}/stran-{n}", 1, page_type, T, 200,
            html_content=HOSTILE_HTML if page_type == "HTML" else None,
            data_type="PDF" if kind == "PDF" else None, content_hash=f"k{n}",
            text=PageText(kind, "ok", body, None, title, "sl"),  # type: ignore[arg-type]
        ))  # fmt: skip
    assert writer.flush()
    index = SearchIndex.open_for_update(folder)
    try:
        update(engine, index)
    finally:
        index.close()
    return SearchConfig(folder, False, Ranking(), 1, 1_000_000)
