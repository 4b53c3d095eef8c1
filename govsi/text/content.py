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

from bisect import bisect_left, bisect_right
from collections.abc import Iterable
from typing import Any

from govsi.text.names import (
    ARTICLE,
    GONE,
    HIDDEN_STYLE,
    KINDS,
    MAIN,
    TEMPLATE,
    TEMPLATE_ROLES,
    judge,
    judged,
)

_BLOCKS = frozenset(
    {"address", "article", "aside", "blockquote", "dd", "details", "dialog", "div", "dl", "dt",
     "fieldset", "figcaption", "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6",
     "header", "hr", "li", "main", "nav", "ol", "p", "pre", "section", "table", "tr", "td",
     "th", "tbody", "thead", "tfoot", "ul", "br", "caption", "summary", "center"}
)  # fmt: skip
_PARAGRAPHS = frozenset({"p", "pre", "td", "blockquote"})
_DIVLIKE = frozenset({"div", "section", "article", "main", "li", "dd"})  # text if no blocks
_TAG_SCORES = {
    "div": 5, "article": 5, "main": 5, "section": 3, "pre": 3, "td": 3, "blockquote": 3,
    "address": -3, "ol": -3, "ul": -3, "dl": -3, "dd": -3, "dt": -3, "li": -3, "form": -3,
    "h1": -5, "h2": -5, "h3": -5, "h4": -5, "h5": -5, "h6": -5, "th": -5,
}  # fmt: skip
_CLEANED = frozenset({"table", "ul", "ol", "div", "section", "form", "dl", "header"})
_ARTICLE_BODY_WEIGHT = 50  # itemprop="articleBody": the page says so
_MIN_BLOCK = 25  # characters: shorter text scores nothing, and goes when alone in a part
_REGION_SHARE = 4  # a region named by the markup holds 1/4 of the page's text or more
_WIDEN = 2  # the region whole when the best part holds less than 1/2 of its own text
_SIBLING_SHARE = 0.2  # a sibling scoring 1/5 of the best (and 10) is content too
_MENU_LINKS, _MENU_LINK_SHARE, _MENU_LABEL = 4, 0.6, 30


class _Page:
    """The elements of a tree in document order (index ``i``, ``end[i]`` its last
    descendant's) with the sums ``content`` needs, each computed in one linear pass. Its
    list of elements also holds their proxies, and lets them go last first (see
    ``govsi.web.extract.held_elements``)."""

    def __init__(self, root: Any) -> None:
        index: dict[Any, int] = {}
        par: list[int] = []
        tags: list[str] = []
        own: list[int] = []  # characters of the element's own text and its children's tails
        own_commas: list[int] = []
        weight: dict[int, int] = {}
        flagged: list[int] = []  # template parts by tag, role, name or hidden
        sure: set[int] = set()  # by tag or role: whatever their size
        self.mains: list[int] = []
        self.articles: list[int] = []
        self.named: set[int] = set()
        # Never text: a DROP element, what is inside one, a comment. Its tail is text.
        gone = self.gone = bytearray()
        self.dropped: list[int] = []  # the outermost DROP elements, to take out if inside
        # What is inside a DROP element is not indexed, only held: released first, children
        # before parents, while the DROP element still holds its proxy.
        held: list[Any] = []
        self.held = held
        parent_of = index.get
        mains, articles, named = self.mains, self.articles, self.named
        for e in root.iter():
            p = parent_of(e.getparent(), -1)
            if p < 0 < len(par) or (p >= 0 and gone[p]):
                held.append(e)
                continue
            i = len(par)
            index[e] = i
            par.append(p)
            tag = e.tag
            kind = KINDS.get(tag, 0)
            if i:
                tail = e.tail
                if tail and not tail.isspace():
                    own[p] += len(tail.strip())
                    own_commas[p] += tail.count(",")
            if kind == GONE:
                gone.append(1)
                tags.append("")
                own.append(0)
                own_commas.append(0)
                if i and tag.__class__ is str:
                    self.dropped.append(i)
                continue
            gone.append(0)
            tags.append(tag)
            text = e.text
            if text and not text.isspace():
                own.append(len(text.strip()))
                own_commas.append(text.count(","))
            else:
                own.append(0)
                own_commas.append(0)
            template = False
            if kind:
                if kind == MAIN:
                    mains.append(i)
                elif kind == ARTICLE:
                    articles.append(i)
                else:
                    sure.add(i)
            attrib = e.attrib
            if attrib:
                cls, ident = attrib.get("class"), attrib.get("id")
                if cls or ident:
                    names = cls if ident is None else f"{cls or ''} {ident}"
                    template, w, content_word = judged.get(names) or judge(names)
                    if w:
                        weight[i] = w
                    if content_word:
                        named.add(i)
                if len(attrib) > (cls is not None) + (ident is not None):
                    template = self._rare(attrib, i, sure, weight) or template
            if template or kind == TEMPLATE:
                flagged.append(i)
        # Dropped in reverse order, children before parents (held_elements).
        els = self.els = list(index)
        self.par, self.tags, self.weight = par, tags, weight
        self.own, self.own_commas = own, own_commas
        n = self.n = len(els)
        # One pass up the tree: subtrees, all their text (for a template part's share),
        # and the sums without the parts cut: a part is cut when its subtree is summed.
        is_flagged = bytearray(n)
        for i in flagged:
            is_flagged[i] = 1
        half = sum(own) / 2  # every text counted once: the root's total
        end = list(range(n))
        total, tlen, commas = list(own), list(own), list(own_commas)
        llen, links = [0] * n, [0] * n
        blocks = bytearray(n)
        cut = bytearray(n)
        for i in range(n - 1, 0, -1):
            p = par[i]
            if end[i] > end[p]:
                end[p] = end[i]
            if gone[i]:
                continue
            t = total[i]
            if t:
                total[p] += t
            if is_flagged[i] and (t < half or i in sure):
                cut[i] = 1
                continue
            t = tlen[i]
            if t:
                tlen[p] += t
                c = commas[i]
                if c:
                    commas[p] += c
                if tags[i] == "a":
                    llen[p] += t
                    links[p] += 1
                elif llen[i]:
                    llen[p] += llen[i]
                    links[p] += links[i]
            if tags[i] in _BLOCKS:
                blocks[p] = 1
        self.end = end
        removed = bytearray(gone)
        self.cut: list[int] = []  # outermost template parts, in document order
        last = -1
        for i in flagged:
            if i > last and cut[i]:
                self.cut.append(i)
                removed[i : end[i] + 1] = b"\x01" * (end[i] - i + 1)
                last = end[i]
        self.removed = removed
        self.tlen, self.commas, self.llen, self.links = tlen, commas, llen, links
        self.blocks = blocks

    def _rare(self, attrib: Any, i: int, sure: set[int], weight: dict[int, int]) -> bool:
        """What the attributes other than class and id say: the region or template by
        role, the article body by itemprop; whether the element is hidden."""
        if "itemprop" in attrib and attrib["itemprop"] == "articleBody":
            weight[i] = weight.get(i, 0) + _ARTICLE_BODY_WEIGHT
            self.articles.append(i)
        if "role" in attrib:
            role = attrib["role"]
            if role == "main":
                self.mains.append(i)
            elif role in TEMPLATE_ROLES:
                sure.add(i)
        return "hidden" in attrib or (
            "style" in attrib and bool(HIDDEN_STYLE.search(attrib["style"]))
        )

    def link_density(self, i: int) -> float:
        return self.llen[i] / self.tlen[i] if self.tlen[i] else 0.0

    def children(self, i: int) -> list[int]:
        out, c, end, removed = [], i + 1, self.end, self.removed
        while c <= end[i]:
            if not removed[c]:
                out.append(c)
            c = end[c] + 1
        return out

    def region(self) -> int:
        """The element the markup names as the content, or the root (0)."""
        for i in [*self.mains, *(self.articles if len(self.articles) == 1 else ())]:
            if not self.removed[i] and self.tlen[i] * _REGION_SHARE >= self.tlen[0]:
                return int(i)
        return 0

    def named_region(self) -> int:
        """The first element named as the content (``id="vsebina"``, ``class="content"``)
        holding a quarter of the page's text, or the root (0)."""
        for i in sorted(self.named):
            if not self.removed[i] and self.tlen[i] * _REGION_SHARE >= self.tlen[0]:
                return i
        return 0

    def scores(self, region: int) -> tuple[int, dict[int, float]]:
        """Every scored element's score inside ``region``, and the best one (-1: none)."""
        tags, tlen, par, weight, own, blocks = (
            self.tags, self.tlen, self.par, self.weight, self.own, self.blocks
        )  # fmt: skip
        score: dict[int, float] = {}

        def give(a: int, points: float) -> None:
            for divider in (1, 2, 6):
                if a < region:
                    return
                if a not in score:
                    score[a] = _TAG_SCORES.get(tags[a], 0) + weight.get(a, 0)
                score[a] += points / divider
                a = par[a]

        removed = self.removed
        for i in range(region + 1 if region else 0, self.end[region] + 1):
            if removed[i]:
                continue
            tag = tags[i]
            if tag in _PARAGRAPHS or (tag in _DIVLIKE and not blocks[i]):
                if tlen[i] >= _MIN_BLOCK:
                    give(par[i], 1 + self.commas[i] + min(tlen[i] / 100, 3))
            elif blocks[i] and own[i] >= _MIN_BLOCK:
                # Text loose between blocks is a block of its own, in this element.
                give(i, 1 + self.own_commas[i] + min(own[i] / 100, 3))
        best, best_score = -1, 0.0
        for i, s in score.items():
            s *= 1 - self.link_density(i)
            score[i] = s
            if s > best_score:
                best, best_score = i, s
        return best, score

    def refine(self, best: int, score: dict[int, float], region: int) -> int:
        """readability.js's move up: to the ancestor that 3 of the 5 next best candidates
        scoring 3/4 of the best share; then to an ancestor scoring more before one scores
        less than a third; then past ancestors that have it as their only child."""
        par, tags, end = self.par, self.tags, self.end
        top = score[best]
        near = [i for i in sorted(score, key=score.__getitem__, reverse=True)[1:6]
                if score[i] >= 0.75 * top]  # fmt: skip

        def stops(a: int) -> bool:
            return a < region or tags[a] in ("body", "html")

        if len(near) >= 3:
            a = par[best]
            while not stops(a):
                if sum(a < i <= end[a] for i in near) >= 3:
                    best = a
                    break
                a = par[a]
        last = score.setdefault(best, _TAG_SCORES.get(tags[best], 0) + self.weight.get(best, 0))
        floor = last / 3
        a = par[best]
        while not stops(a):
            if a in score:
                if score[a] < floor:
                    break
                if score[a] > last:
                    best = a
                    break
                last = score[a]
            a = par[a]
        while not stops(par[best]) and len(self.children(par[best])) == 1:
            best = par[best]
        score.setdefault(best, last)
        return best

    def siblings(self, best: int, score: dict[int, float], region: int) -> list[int]:
        """``best`` with those of its siblings that are content too (readability's rule),
        in document order; only those of its class when its name says it is the content."""
        p = self.par[best]
        if best == region or p < region:
            return [best]
        top, els, tags, end = score[best], self.els, self.tags, self.end
        threshold = max(10.0, top * _SIBLING_SHARE)
        cls = els[best].get("class")
        named = best in self.named
        scored = sorted(score)

        def inner(x: int) -> float:
            lo, hi = bisect_left(scored, x), bisect_right(scored, end[x])
            return max((score[i] for i in scored[lo:hi]), default=-1e9)

        out, floor = [], None
        for s in self.children(p):
            if s == best:
                out.append(s)
                continue
            same = bool(cls) and els[s].get("class") == cls
            if named and not same:
                continue
            value = score.get(s, -1e9) + (top * _SIBLING_SHARE if same else 0)
            if value >= threshold or (tags[s] == "p" and self._reads_as_text(s)):
                out.append(s)
            elif same:
                # An article cut into sections of one class scores its paragraphs'
                # parents, deeper than the sections: the best inside each compares.
                floor = _SIBLING_SHARE * inner(best) if floor is None else floor
                if inner(s) >= floor:
                    out.append(s)
        return out

    def _reads_as_text(self, i: int) -> bool:
        n, density = self.tlen[i], self.link_density(i)
        if n > 80:
            return density < 0.25
        if n == 0 or density > 0:
            return False
        text = " ".join(self.els[i].itertext()).rstrip()
        return text.endswith(".") or ". " in text

    def is_menu(self, i: int) -> bool:
        """Links with short labels, most of the text: a menu (a list of titles stays)."""
        links = self.links[i]
        return (
            links >= _MENU_LINKS
            and self.link_density(i) >= _MENU_LINK_SHARE
            and self.llen[i] / links <= _MENU_LABEL
        )

    def clean(self, roots: list[int], score: dict[int, float]) -> list[int]:
        """The parts inside ``roots`` that are not content (outermost, in order). None that
        holds half of its root's text, but a menu when the root is the whole page (a page
        of menus alone has no main text)."""
        out: list[int] = []
        tags, tlen, weight, removed, end = self.tags, self.tlen, self.weight, self.removed, self.end
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
                menu = tag in _CLEANED and self.is_menu(i)
                if (menu and whole_page) or (tlen[i] <= half and (
                    (tag in _CLEANED and (
                        menu
                        or (w < 0 and w + score.get(i, 0) < 0)
                        or (tlen[i] < _MIN_BLOCK and tag != "table")
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
    page = _Page(root)
    if not page.n or page.gone[0]:
        return []
    if page.mains and not any(page.tlen[i] for i in page.mains if not page.removed[i]):
        return []  # the page says where its content is, and there is none
    region = page.region()
    best, score = page.scores(region)
    if best < 0:
        # No block of text: the region whole, or what the page names its content.
        roots = [region or page.named_region()]
    else:
        best = page.refine(best, score, region)
        roots = page.siblings(best, score, region)
        if region and _WIDEN * sum(page.tlen[i] - page.llen[i] for i in roots) < (
            page.tlen[region] - page.llen[region]
        ):
            roots = [region]
    end = page.end

    def inside(i: int) -> bool:
        at = bisect_right(roots, i) - 1
        return at >= 0 and roots[at] < i <= end[roots[at]]

    parts = sorted([i for i in (*page.dropped, *page.cut) if inside(i)] + page.clean(roots, score))
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
