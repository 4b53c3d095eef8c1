"""Which elements of a parsed page hold its main text, and which parts inside them do not
(``content``): the choice ``maintext`` reads the text of.

A page's text comes in blocks: paragraphs, cells, list items, ``div``s of text, and text
loose between blocks. A block of 25 characters or more scores its parent, half as much
its grandparent and a sixth its great-grandparent: 1, plus its commas, plus one per 100
characters up to 3 (readability's rule). An element's score is what its blocks gave it,
plus its tag's (``div`` up, lists and headings down) and its names' (class and id words:
``article``, ``content``, ``vsebina`` up; ``comment``, ``sidebar``, ``noga`` down), times
the share of its text that is not link text. Before scoring, the template's parts are cut:
``nav``, ``header``, ``footer``, ``aside``, ``figure``, their ARIA roles, elements named as
template (menu, breadcrumb, cookie, related, share, ``drobtinice``, ``piskotki``...) and
hidden ones; but not one named so or hidden that holds half the page's text or more: that
is a wrapper with an unlucky name (``c-layout-sidebar-content``, ``page-ad-margins``) or
text a script shows.

The content is the best scoring element, moved up to an ancestor that several of the best
share or that scores higher (readability.js), with its siblings that score nearly as well
(an article in sections of one class counts its sections' best). When the page's markup
names its content (``<main>``, ``role="main"``, a single ``<article>``, holding a quarter of
the page's text or more), the choice stays inside it, and is it whole when the best part
holds less than half of its text that is not link text (a page of teasers, a record of
fields). A page without a block of text (a list of links, a table) is that region, or the
page, whole. Inside the content, menus (4 links or more, link text 60 % of the text,
labels of 30 characters or less on average), parts named as template and bits of text
under 25 characters go, never one holding half of it.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable
from typing import Any

from govsi.text.pageindex import PageIndex
from govsi.text.scoring import MIN_BLOCK, refine, scores, siblings

_CLEANED = frozenset({"table", "ul", "ol", "div", "section", "form", "dl", "header"})
_WIDEN = 2  # the region whole when the best part holds less than 1/2 of its own text
_MENU_LINKS, _MENU_LINK_SHARE, _MENU_LABEL = 4, 0.6, 30


def is_menu(page: PageIndex, i: int) -> bool:
    """Links with short labels, most of the text: a menu (a list of titles stays)."""
    links = page.links[i]
    return (
        links >= _MENU_LINKS
        and page.link_density(i) >= _MENU_LINK_SHARE
        and page.llen[i] / links <= _MENU_LABEL
    )


def clean(page: PageIndex, roots: list[int], score: dict[int, float]) -> list[int]:
    """The parts inside ``roots`` that are not content (outermost, in order). None that
    holds half of its root's text, but a menu when the root is the whole page (a page
    of menus alone has no main text)."""
    out: list[int] = []
    tags, tlen, weight, removed, end = page.tags, page.tlen, page.weight, page.removed, page.end
    whole_page = roots == [0]
    for r in roots:
        half = tlen[r] / 2
        i = r + 1
        while i <= end[r]:
            if removed[i]:
                i = end[i] + 1
                continue
            tag = tags[i]
            w = weight.get(i, 0)
            menu = tag in _CLEANED and is_menu(page, i)
            if (menu and whole_page) or (tlen[i] <= half and (
                (tag in _CLEANED and (
                    menu
                    or (w < 0 and w + score.get(i, 0) < 0)
                    or (tlen[i] < MIN_BLOCK and tag != "table")
                ))
                or (tag in ("h1", "h2", "h3", "h4", "h5", "h6") and w < 0)
            )):  # fmt: skip
                out.append(i)
                i = end[i] + 1
            else:
                i += 1
    return out


def content(root: Any) -> list[Any]:
    """The elements of ``root``'s tree whose text is the main text, in document order, none
    inside another, with the parts inside them that are not (template, menus, scripts)
    taken out of the tree: ``root`` is consumed. Linear in the tree."""
    page = PageIndex(root)
    if not page.n or page.gone[0]:
        return []
    if page.mains and not any(page.tlen[i] for i in page.mains if not page.removed[i]):
        return []  # the page says where its content is, and there is none
    region = page.region()
    best, score = scores(page, region)
    if best < 0:
        # No block of text: the region whole, or what the page names its content.
        roots = [region or page.named_region()]
    else:
        best = refine(page, best, score, region)
        roots = siblings(page, best, score, region)
        if region and _WIDEN * sum(page.tlen[i] - page.llen[i] for i in roots) < (
            page.tlen[region] - page.llen[region]
        ):
            roots = [region]
    end = page.end

    def inside(i: int) -> bool:
        at = bisect_right(roots, i) - 1
        return at >= 0 and roots[at] < i <= end[roots[at]]

    parts = sorted([i for i in (*page.dropped, *page.cut) if inside(i)] + clean(page, roots, score))
    outermost, last = [], -1
    for i in parts:
        if i > last:
            outermost.append(i)
            last = end[i]
    # While the page holds every element: a proxy let go stops at its parent's.
    remove_all(page.els[i] for i in outermost)
    return [page.els[r] for r in roots]


def remove_all(elements: Iterable[Any]) -> None:
    """Take ``elements`` (in document order, none inside another) out of the tree, keeping
    each one's tail: it is text of the parent that only follows the element, so it goes
    to the previous sibling's tail or the parent's text, after a space. A run of removed
    siblings sends all its tails to one place; they are joined there once at the end,
    since appending each in turn would copy the growing text every time (quadratic in the
    run), as would lxml reading a run of text nodes. Nothing removed receives text:
    whatever receives it comes earlier in document order."""
    tails: dict[Any, list[str]] = {}
    texts: dict[Any, list[str]] = {}
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
