"""A page of search results as the command line and the search page show them: each hit
with its snippet (read from crawldb), as text for a terminal or as JSON."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Engine

from govsi.printable import printable
from govsi.search import source
from govsi.search.config import SearchConfig
from govsi.search.index import SearchIndex
from govsi.search.searcher import Hit, Results, Searcher
from govsi.search.snippets import Pieces, highlight, render, snippet


@dataclass
class SearchPage:
    query: str
    results: Results
    snippets: dict[int, Pieces]
    page: int
    per_page: int
    titles: dict[int, Pieces] = field(default_factory=dict)  # each hit's, words marked


def search_page(
    engine: Engine, config: SearchConfig, query: str, page: int = 1, per_page: int = 10
) -> SearchPage:
    """Results ``page`` (from 1) of ``query`` over ``config``'s index, with snippets."""
    index = SearchIndex.open(config.folder)
    try:
        results = Searcher(index, config.ranking).search(query, (page - 1) * per_page, per_page)
    finally:
        index.close()
    bodies = source.texts(engine, [h.page_id for h in results.hits])
    wanted, ascii_, stems_ = results.wanted, results.wanted_ascii, results.wanted_stems
    snippets = {
        h.page_id: snippet(bodies.get(h.page_id, ""), wanted, ascii_, wanted_stems=stems_)
        for h in results.hits
    }
    titles = {
        h.page_id: highlight(h.title, wanted, ascii_, wanted_stems=stems_) for h in results.hits
    }
    return SearchPage(query, results, snippets, page, per_page, titles)


def plain_snippet(pieces: Pieces, mark: str = "**") -> str:
    return render(pieces, lambda t: f"{mark}{t}{mark}", lambda t: t)


def to_json(page: SearchPage) -> list[dict[str, Any]]:
    """``[{url, title, score, snippet, type, host}]``, best first; the snippet's matched
    words between ``**``."""
    return [
        {"url": h.url, "title": h.title, "score": round(h.score, 4),
         "snippet": plain_snippet(page.snippets.get(h.page_id, [])), "type": h.kind,
         "host": h.host, "date": h.date.date().isoformat() if h.date else None}
        for h in page.results.hits
    ]  # fmt: skip


def _line(h: Hit, n: int, title: str, snippet_text: str, bold: tuple[str, str]) -> str:
    date = h.date.date().isoformat() if h.date else ""
    url, host = printable(h.url), printable(h.host)
    head = f"{n:>3}. {bold[0]}{title or url}{bold[1]}"
    return f"{head}\n     {url}\n     {h.kind} · {host} · {date}\n     {snippet_text}\n"


def _shown(pieces: Pieces) -> Pieces:
    return [(printable(t), marked) for t, marked in pieces]


def to_terminal(page: SearchPage, color: bool = False) -> str:
    """The results as a terminal shows them: title, URL, type, host, date and snippet,
    the matched words in bold (``color``) or between ``**``. What came from the crawl is
    ``printable``: its control characters escaped, never sent to the terminal."""
    results = page.results
    bold = ("\033[1m", "\033[0m") if color else ("", "")
    if not results.hits:
        return f"no results for {page.query!r}"
    lines = [f"{results.total} results for {page.query!r}"
             + (" (not every word found)" if results.any_word else "")
             + f", page {page.page}:\n"]  # fmt: skip
    for n, h in enumerate(results.hits, (page.page - 1) * page.per_page + 1):
        pieces = _shown(page.snippets.get(h.page_id, []))
        text = render(pieces, lambda t: f"{bold[0]}{t}{bold[1]}", lambda t: t) if color \
            else plain_snippet(pieces)  # fmt: skip
        # A bold title marks its matched words underlined; a plain one between **.
        title = _shown(page.titles.get(h.page_id, [(h.title, False)]))
        shown = render(title, lambda t: f"\033[4m{t}\033[24m", lambda t: t) if color \
            else plain_snippet(title)  # fmt: skip
        lines.append(_line(h, n, shown, text, bold))
    return "\n".join(lines)
