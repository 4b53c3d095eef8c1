"""A page's main text: the text a reader reads it for, without the site's template.

Government sites wrap every page in a large template (header, menus, breadcrumbs, cookie
banner, footer), so two different short news items can share most of their text; copies
are judged on the main text only, and search shows it. Which elements hold it is
``govsi.text.content``'s choice (readability's scoring of text blocks, within the region
the markup names as the content, the template's parts cut); this module reads their text.
The definition, and how it was chosen by measurement: docs/maintext.md.
"""

from __future__ import annotations

import re

from lxml import etree

from govsi.text.content import content, remove_all
from govsi.web.extract import held_elements, outermost, parse_html

# Which definition of the main text this module implements. Exact keys and signatures made
# from it are stored in crawldb; keys of different definitions are never compared
# (``govsi.dedup.signature``): a change to what ``main_text`` returns for any page bumps it.
# 2: text blocks scored (govsi.text.content) instead of the first content-named element.
VERSION = 2

# What whole_text leaves out (as version 1 did: its key of a page without main text).
_WHOLE_DROP = ("script", "style", "noscript", "template", "svg", "iframe", "head")
_NON_WORD = re.compile(r"\W+")
_SPACES = re.compile(r"\s+")
_SPACE_RUNS = re.compile(r"  +")
_COLLAPSE_CHUNK = 1 << 14
# _NON_WORD's work on ASCII: lower-cases letters, keeps digits and "_", blanks the rest.
_ASCII_WORDS = bytes(
    c + 32 if 65 <= c <= 90 else c if chr(c).isalnum() or c == 95 else 32 for c in range(256)
)
_NORMALIZE_CHUNK = 1 << 16


def _text(element: etree._Element) -> str:
    """``element``'s text runs joined by spaces, each run of whitespace one space. A piece
    at a time: split or one substitution over a page of words would hold an object per
    word (60 bytes for a 3-byte word)."""
    text = " ".join(element.itertext())
    if len(text) <= _COLLAPSE_CHUNK:
        return _SPACES.sub(" ", text).strip()
    pieces = [
        _SPACES.sub(" ", text[start : start + _COLLAPSE_CHUNK])
        for start in range(0, len(text), _COLLAPSE_CHUNK)
    ]
    del text
    # Only where a run of whitespace was cut between two pieces are two spaces left.
    return _SPACE_RUNS.sub(" ", "".join(pieces)).strip()


def normalized(text: str, chunk: int = _NORMALIZE_CHUNK) -> str:
    """The words (``\\w+`` runs) of ``text``, lower-cased, joined by single spaces.

    Linear in time, and in memory beyond the result: a 32 MB page of one-letter words is
    16 M words, as a list of Python strings about 1 GB, so the text goes in pieces of about
    ``chunk`` characters, cut at spaces (a space is never inside a word, nor in the
    context of a letter's lower case). A piece of ASCII goes through bytes.translate,
    much faster than the regular expression."""
    out: list[str] = []
    start, end = 0, len(text)
    while start < end:
        stop = start + chunk
        if stop < end:
            cut = text.rfind(" ", start, stop)
            stop = cut if cut > start else text.find(" ", stop)
        if stop < 0 or stop > end:
            stop = end
        piece = text[start:stop]
        if piece.isascii():
            words = b" ".join(piece.encode("ascii").translate(_ASCII_WORDS).split()).decode()
        else:
            words = _NON_WORD.sub(" ", piece.lower()).strip(" ")
        if words:
            out.append(words)
        start = stop + 1
    return " ".join(out)


def main_text(html: str, root: etree._Element | None = None) -> str:
    """The page's main text (``readable_main_text``), its words lower-cased
    (``normalized``): what copies and changes are compared by.

    ``root``: the page already parsed by ``parse_html``, to save parsing it again; it is
    consumed (the template is cut out of it).
    """
    return normalized(readable_main_text(html, root))


def readable_main_text(html: str, root: etree._Element | None = None) -> str:
    """The page's main text as it reads: the chosen elements' text runs, whitespace
    collapsed, joined by single spaces, case and punctuation kept (the text search shows).
    Empty when the page has no text. ``root`` is consumed. Linear in the page."""
    if root is None:
        root = parse_html(html)
    if root is None:
        return ""
    return " ".join(text for text in map(_text, content(root)) if text)


def whole_text(html: str, readable: bool = False) -> str:
    """All the page's text (scripts, styles and the like left out), ``normalized``, or as
    it reads when ``readable``."""
    root = parse_html(html)
    if root is None:
        return ""
    held = held_elements(root)  # noqa: F841 (see held_elements)
    # Only the outermost: removing one walks its subtree. Below ``root``: it has no parent.
    remove_all([e for child in root for e in outermost(child, _WHOLE_DROP)])
    text = " ".join(t.strip() for t in root.itertext() if t.strip())
    return text if readable else normalized(text)
