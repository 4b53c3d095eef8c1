"""An HTML page's text for crawldb's ``page_text`` (``PageText``): its main text as it
reads, or all its text when it has none, bounded (pure)."""

from __future__ import annotations

from govsi.items import PageText
from govsi.text.html import page_language, page_title
from govsi.text.language import guess_language
from govsi.text.limits import TextStatus
from govsi.text.maintext import readable_main_text, whole_text
from govsi.web.extract import parse_html

__all__ = ["page_text", "page_text_of"]


def page_text(
    readable: str, html: str, title: str | None, declared: str | None, max_chars: int,
    cut: bool = False,
) -> PageText:  # fmt: skip
    """An HTML page's ``PageText``: its main text as it reads (``readable``), or all its
    text when it has no main text (a page of the template alone still has words to find),
    at most ``max_chars``; ``cut``: the page was read only in part."""
    body = readable or whole_text(html, readable=True)
    kept = body[:max_chars]
    language = guess_language(kept, declared)
    status: TextStatus = "ok" if kept else "empty"
    return PageText("HTML", status, kept, None, title, language, None, cut or len(body) > max_chars)


def page_text_of(html: str, max_chars: int) -> PageText:
    """``page_text`` of ``html``, parsed here (for a page not read in the worker)."""
    root = parse_html(html)
    title, declared = page_title(root), page_language(root)
    return page_text(readable_main_text(html, root), html, title, declared, max_chars)
