"""A parsed page's elements in document order with the sums the choice of its main text
reads (``govsi.text.content``), each computed in one linear pass: text and link-text lengths,
commas, which elements hold blocks; the template's parts cut (``nav``, ``header``, their
ARIA roles, elements named as template, hidden ones; never one holding half the page's text);
the region the markup names as the content (pure)."""

from __future__ import annotations

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
_ARTICLE_BODY_WEIGHT = 50  # itemprop="articleBody": the page says so
_REGION_SHARE = 4  # a region named by the markup holds 1/4 of the page's text or more


class PageIndex:
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
