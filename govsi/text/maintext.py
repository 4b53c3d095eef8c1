"""A page's main content: its text with the site's template taken away.

Government sites wrap every page in a large template (header, menus, breadcrumbs, cookie
banner, footer), so two different short news items can share 90 % of their text; copies
are judged on the main content only. ``main_text`` keeps ``<main>`` / ``<article>`` /
``role="main"`` when the page has one, else the first element whose id or class names the
content (``content``, ``vsebina``, ``print-body``, ...) outside any template part; inside
it, template parts go. A page with neither loses the template's regions: ``nav``,
``header``, ``footer``, ``aside``, their ARIA roles, elements whose class or id names a
template part (menu, breadcrumb, cookie, sidebar, ...), and menus built from plain
``div``s: link-dense blocks of short labels. A list of news is link-dense too, but its
links are whole titles, so it stays.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from lxml import etree

from govsi.web.extract import held_elements, outermost, parse_html

# Which definition of the main text this module implements, and of the keys made from it.
# Exact keys and signatures are stored in crawldb (``page.key_version``); keys of different
# definitions are never compared, stored ones are made again (``govsi.dedup.rekey``): a
# change to what ``main_text`` returns for any page, or to how ``govsi.dedup.signature``
# makes keys of it, bumps it.
VERSION = 2

_DROP_TAGS = ("script", "style", "noscript", "template", "svg", "iframe", "head")
_TEMPLATE_TAGS = ("nav", "header", "footer", "aside")
_TEMPLATE_ROLES = frozenset({"navigation", "banner", "contentinfo", "complementary", "search"})
# Words in class/id values that name template parts (compared as whole tokens).
_TEMPLATE_WORDS = frozenset(
    {
        "nav", "navbar", "navigation", "menu", "menus", "submenu", "megamenu", "header",
        "footer", "breadcrumb", "breadcrumbs", "cookie", "cookies", "consent", "gdpr",
        "banner", "sidebar", "aside", "social", "share", "sharing", "skip", "toolbar",
        "topbar", "language", "languages", "lang", "related", "tags", "pagination",
        "pager", "widget", "cc", "cookieconsent",
        # Slovenian class names: head, foot, menu, breadcrumbs, cookies, side, related.
        "glava", "noga", "meni", "drobtinice", "piskotki", "piskotek", "stranski",
        "stranska", "sorodne", "sorodni", "navigacija",
    }
)  # fmt: skip
# Not "print": print views put the article itself in class="print-body".
# Words in id/class values that name the content column of a page without <main>.
_CONTENT_WORDS = frozenset(
    {"content", "maincontent", "vsebina", "main", "article", "clanek", "body", "story"}
)
_TOKEN = re.compile(r"[a-z0-9]+")
_NON_WORD = re.compile(r"\W+")
# _NON_WORD's work on ASCII: lower-cases letters, keeps digits and "_", blanks the rest.
_ASCII_WORDS = bytes(
    c + 32 if 65 <= c <= 90 else c if chr(c).isalnum() or c == 95 else 32 for c in range(256)
)
_NORMALIZE_CHUNK = 1 << 16
# A block is a menu when most of its text is link text and it has several links.
_LINK_DENSE_MIN_LINKS = 4
_LINK_DENSE_RATIO = 0.6
# Menu labels are a few words ("Teme in projekti"); news titles in a list are sentences.
_MENU_MAX_WORDS_PER_LINK = 4.0
_BLOCKS = ("div", "ul", "ol", "table", "section", "p", "dl")
_MAIN_TAGS = frozenset({"main", "article"})


def _names(element: etree._Element) -> list[str]:
    return _TOKEN.findall(f"{element.get('class') or ''} {element.get('id') or ''}".lower())


def _is_template(element: etree._Element) -> bool:
    if element.tag in _TEMPLATE_TAGS:
        return True
    if (element.get("role") or "").strip().lower() in _TEMPLATE_ROLES:
        return True
    return any(token in _TEMPLATE_WORDS for token in _names(element))


def _template_walk(root: etree._Element) -> tuple[list[Any], list[Any]]:
    """(the elements below ``root`` outside every template part, in document order; the
    outermost template parts). ``_is_template`` is asked once per element, and never of
    an element inside a part."""
    parts: list[Any] = []

    def is_part(element: etree._Element) -> bool:
        if _is_template(element):
            parts.append(element)
            return True
        return False

    listed = _preorder(root, is_part)
    inside = set(parts)
    return [e for e in listed if e not in inside], parts


def _preorder(root: etree._Element, prune: Callable[[etree._Element], bool]) -> list[Any]:
    """Elements under ``root`` in document order, without the subtrees of those ``prune``
    accepts (which are listed). An explicit stack: pages nest thousands deep."""
    out: list[Any] = []
    stack = list(reversed(root))
    while stack:
        element = stack.pop()
        if not isinstance(element.tag, str):
            continue  # comments, processing instructions
        out.append(element)
        if not prune(element):
            stack.extend(reversed(element))
    return out


@dataclass
class _Sizes:
    """What ``_text`` and ``_is_menu`` need of a subtree, summed bottom-up once."""

    pieces: int = 0  # non-blank text pieces
    chars: int = 0  # their stripped length
    words: int = 0
    links: int = 0  # <a> elements inside
    label_chars: int = 0  # the length of each link's _text, summed
    label_words: int = 0

    @property
    def text_len(self) -> int:
        return self.chars + max(0, self.pieces - 1)  # joined by single spaces


def _add_text(sizes: _Sizes, text: str | None) -> None:
    if text and (stripped := text.strip()):
        sizes.pieces += 1
        sizes.chars += len(stripped)
        sizes.words += len(stripped.split())


def _subtree_sizes(root: etree._Element) -> dict[etree._Element, _Sizes]:
    """``_Sizes`` of every element under ``root``, in one pass (children before parents)."""
    order = _preorder(root, lambda e: False)
    sizes: dict[etree._Element, _Sizes] = {}
    for element in reversed(order):
        own = _Sizes()
        _add_text(own, element.text)
        for child in element:
            if isinstance(child.tag, str):
                c = sizes[child]
                own.pieces += c.pieces
                own.chars += c.chars
                own.words += c.words
                own.links += c.links + (child.tag == "a")
                own.label_chars += c.label_chars + (c.text_len if child.tag == "a" else 0)
                own.label_words += c.label_words + (c.words if child.tag == "a" else 0)
            _add_text(own, child.tail)
        sizes[element] = own
    return sizes


def _content_column(root: etree._Element, outside_template: list[Any]) -> etree._Element | None:
    """The first element named as the content that no template part encloses (from
    ``outside_template``, ``_template_walk``'s first list) and that holds some text.
    Linear: text is counted once, bottom-up."""
    candidates = [
        element
        for element in outside_template
        if any(token in _CONTENT_WORDS for token in _names(element))
    ]
    if not candidates:
        return None
    sizes = _subtree_sizes(root)
    return next((e for e in candidates if sizes[e].pieces), None)


def _text(element: etree._Element) -> str:
    return " ".join(t.strip() for t in element.itertext() if t.strip())


def _is_menu(sizes: _Sizes) -> bool:
    if sizes.links < _LINK_DENSE_MIN_LINKS:
        return False
    text = sizes.text_len
    if text == 0 or sizes.label_chars / text < _LINK_DENSE_RATIO:
        return False
    return sizes.label_words / sizes.links <= _MENU_MAX_WORDS_PER_LINK


def _remove_all(elements: Iterable[etree._Element]) -> None:
    """Take ``elements`` (in document order, none inside another) out of the tree, keeping
    each one's tail: it is text of the parent that only follows the element, so it goes
    to the previous sibling's tail or the parent's text. A run of removed siblings sends
    all its tails to one place; they are joined there once at the end, since appending
    each in turn would copy the growing text every time (quadratic in the run). Nothing
    removed receives text: whatever receives it comes earlier in document order."""
    tails: dict[etree._Element, list[str]] = {}
    texts: dict[etree._Element, list[str]] = {}
    for element in elements:
        parent = element.getparent()
        if parent is None:
            continue
        tail = element.tail
        if tail and tail.strip():
            previous = element.getprevious()
            if previous is not None:
                tails.setdefault(previous, []).append(tail)
            else:
                texts.setdefault(parent, []).append(tail)
        # Unlinking walks the removed subtree (lxml fixes its document references), so
        # callers never pass an element inside another they remove.
        parent.remove(element)
    for previous, pieces in tails.items():
        previous.tail = "".join([previous.tail or "", *(" " + piece for piece in pieces)])
    for parent, pieces in texts.items():
        parent.text = "".join([parent.text or "", *(" " + piece for piece in pieces)])


def _drop_parts(root: etree._Element) -> list[Any]:
    # Only the outermost: removing one walks its subtree, so nested ones would each walk
    # all below them. Below ``root``: it has no parent to be removed from.
    return [e for child in root for e in outermost(child, _DROP_TAGS)]


def _main_region(root: etree._Element) -> etree._Element | None:
    """The first ``<main>``, ``<article>`` or ``role="main"`` element, in one walk that stops
    there. Not an XPath union: libxml2 merges its node sets in quadratic time (a page of
    20 000 of each took 12.8 s)."""
    for element in root.iter(etree.Element):
        if element.tag in _MAIN_TAGS or element.get("role") == "main":
            return element
    return None


def _strip(root: etree._Element) -> etree._Element:
    _remove_all(_drop_parts(root))
    column = _main_region(root)
    parts: list[Any] = []
    if column is None:
        outside_template, parts = _template_walk(root)
        column = _content_column(root, outside_template)
    if column is not None:
        # Template parts inside the main region (a related-news aside) go too; link-dense
        # blocks stay, since there they are usually the content (a list of documents).
        _remove_all(_template_walk(column)[1])
        return column
    _remove_all(parts)
    # Sizes of the tree as it is now: removing a menu changes only its ancestors' sizes,
    # and those were judged before it (parents come first).
    sizes = _subtree_sizes(root)
    menus = _preorder(root, lambda e: e.tag in _BLOCKS and _is_menu(sizes[e]))
    # Its children go with it, never looked at.
    _remove_all(e for e in menus if e.tag in _BLOCKS and _is_menu(sizes[e]))
    return root


def normalized(text: str, chunk: int = _NORMALIZE_CHUNK) -> str:
    """The words (``\\w+`` runs) of ``text``, lower-cased, joined by single spaces.

    Linear in time, and in memory beyond the result: a 32 MB page of one-letter words is
    16 M words, as a list of Python strings about 1 GB, so the text goes in pieces of about
    ``chunk`` characters, cut at spaces (a space is never inside a word, nor in the
    context of a letter's lower case). A piece of ASCII goes through bytes.translate,
    twenty times as fast as the regular expression."""
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
    """The page's main content as plain text, the site's template taken away: its words,
    lower-cased (``normalized``), what copies are compared by.

    ``root``: the page already parsed by ``parse_html``, to save parsing it again; it is
    consumed (the template is cut out of it).
    """
    return normalized(readable_main_text(html, root))


def readable_main_text(html: str, root: etree._Element | None = None) -> str:
    """``main_text`` as it reads: the main content's text runs, stripped and joined by
    single spaces, case and punctuation kept (the text search shows). ``root`` is consumed."""
    if root is None:
        root = parse_html(html)
    if root is None:
        return ""
    held = held_elements(root)  # noqa: F841 (see held_elements)
    return _text(_strip(root))


def whole_text(html: str, readable: bool = False) -> str:
    """All the page's text (scripts, styles and the like left out), ``normalized``, or as
    it reads when ``readable``."""
    root = parse_html(html)
    if root is None:
        return ""
    held = held_elements(root)  # noqa: F841 (see held_elements)
    _remove_all(_drop_parts(root))
    text = _text(root)
    return text if readable else normalized(text)
