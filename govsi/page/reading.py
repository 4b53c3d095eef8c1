"""An HTML document read whole, as one pure step: its links and images, what its render plan
needs, and its duplicate question.

The spider reads a page of fewer than WORKER_MIN_PAGE_CHARS on the reactor thread
(``read_tree``: it keeps the tree, which the duplicate check then reuses). A larger one is
read whole in a worker process (``read_html``), its links made canonical there too
(``canonical_links``): while the reactor computes, every host waits, and a 32 MB page of
tags costs seconds of CPU and a gigabyte of memory. Both give a ``Reading``;
``read_html``'s is picklable. The markup parsed is cut at ``max_tags`` ``<``
(``cut_markup``): past that a page costs bounded memory, and what was cut is counted in
``Reading.cut_tags``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lxml import etree

from govsi.dedup.question import Question, question_of_text
from govsi.dedup.signature import copy_key, exact_key_of
from govsi.items import PageText
from govsi.page.links import canonical_links
from govsi.page.pagetext import page_text
from govsi.render.scripts import Yield, needs_browser, onload_scripts, page_yield, script_signature
from govsi.text.html import page_language, page_title
from govsi.text.maintext import normalized, readable_main_text
from govsi.web.extract import ExtractedLinks, cut_markup, extract_links, parse_html
from govsi.web.scope import Scope
from govsi.web.urls import in_scope

__all__ = ["PlanInputs", "Reading", "read_html", "read_tree", "ready"]


@dataclass(frozen=True, slots=True)
class PlanInputs:
    """What the render plan is made from (``govsi.responses.rendering``); asked only when the
    crawl renders. ``needs``: whether to ask ``needs_browser`` (mode ``auto``)."""

    suffixes: tuple[str, ...]
    needs: bool


@dataclass(slots=True)
class Reading:
    """What one version of a page gives the spider."""

    found: ExtractedLinks
    # The script signature (None: no code runs on load, or the plan was not asked).
    signature: str | None = None
    # Why the page plainly needs a browser (``needs_browser``), when asked.
    needs: str | None = None
    # What this version gives, to compare the plain and rendered ones (when it has a
    # signature, or was asked for).
    yielded: Yield | None = None
    # The duplicate question (``read_html`` with ``measures`` only).
    question: Question | None = None
    # ``<`` beyond ``max_tags`` that were not parsed (0: the whole page was).
    cut_tags: int = 0
    # The main text's exact key (``read_html`` with ``keyed``): what a revisit tells a
    # change by, with or without the duplicate check.
    content_key: str | None = None
    # Its text for crawldb's page_text (``read_html`` with ``text_chars``).
    text: PageText | None = None


def read_tree(
    root: etree._Element | None,
    html: str,
    page_url: str,
    *,
    max_links: int,
    plan: PlanInputs | None = None,
    yielded: bool = False,
) -> Reading:
    """The links of the page parsed as ``root`` (resolved against ``page_url``), the
    inputs of its render plan when ``plan`` is given, and what it gives (``Yield``) when
    ``yielded`` or it has a script signature. ``root`` is left as it is."""
    found = extract_links(html, page_url, root, max_links)
    reading = Reading(found)
    if plan is not None:
        suffixes = list(plan.suffixes)
        tokens = onload_scripts(root, page_url, lambda src: in_scope(src, suffixes))
        reading.signature = script_signature(tokens)
        if reading.signature is not None and plan.needs:
            reading.needs = needs_browser(root)
    if yielded or reading.signature is not None:
        reading.yielded = page_yield(root, found)
    return reading


def read_html(
    url: str,
    html: str,
    page_url: str,
    *,
    max_links: int,
    max_tags: int,
    plan: PlanInputs | None = None,
    yielded: bool = False,
    measures: dict[str, Any] | None = None,
    keyed: bool = False,
    scope: Scope | None = None,
    text_chars: int = 0,
) -> Reading:
    """``read_tree`` of ``html`` cut at ``max_tags`` (``cut_markup``), plus the duplicate
    question of ``url`` (``govsi.dedup.question``) when ``measures`` are given, and
    the main text's key when ``keyed`` or ``measures``; its links made canonical within
    ``scope`` when given (``canonical_links``); its text, at most ``text_chars`` of it,
    when that is not 0 (``page_text``). For a worker process: its arguments and result are
    picklable, and it parses the page once."""
    kept, cut = cut_markup(html, max_tags)
    root = parse_html(kept)
    reading = read_tree(root, kept, page_url, max_links=max_links, plan=plan, yielded=yielded)
    reading.cut_tags = cut
    if scope is not None:
        canonical_links(reading.found, scope)
    title, declared = (page_title(root), page_language(root)) if text_chars else (None, None)
    # Last: the main text is cut out of the tree, which is consumed.
    if measures is not None or keyed or text_chars:
        copy = copy_key(kept, root) if measures is not None else ""
        readable = readable_main_text(kept, root)
        main = normalized(readable)
        key = exact_key_of(main, kept)
        if measures is not None:
            reading.question = question_of_text(url, key, main, copy=copy, **measures)
        if measures is not None or keyed:
            reading.content_key = key
        if text_chars:
            reading.text = page_text(readable, kept, title, declared, text_chars, cut > 0)
    return reading


def ready() -> bool:
    """A worker process's first job (``WorkerPool.prepare``): importing this module, with
    the parser and the duplicate check, is the work."""
    return True
