"""Text blocks scored and the best element chosen, readability's way: a block of text
scores its parent, grandparent and great-grandparent; an element's score is its blocks',
its tag's and its names', times the share of its text that is not link text; the best is
moved up to an ancestor several of the best share or that scores higher, with its siblings
that score nearly as well (pure)."""

from __future__ import annotations

from bisect import bisect_left, bisect_right

from govsi.text.pageindex import PageIndex

_PARAGRAPHS = frozenset({"p", "pre", "td", "blockquote"})
_DIVLIKE = frozenset({"div", "section", "article", "main", "li", "dd"})  # text if no blocks
_TAG_SCORES = {
    "div": 5, "article": 5, "main": 5, "section": 3, "pre": 3, "td": 3, "blockquote": 3,
    "address": -3, "ol": -3, "ul": -3, "dl": -3, "dd": -3, "dt": -3, "li": -3, "form": -3,
    "h1": -5, "h2": -5, "h3": -5, "h4": -5, "h5": -5, "h6": -5, "th": -5,
}  # fmt: skip
MIN_BLOCK = 25  # characters: shorter text scores nothing, and goes when alone in a part
_SIBLING_SHARE = 0.2  # a sibling scoring 1/5 of the best (and 10) is content too


def scores(page: PageIndex, region: int) -> tuple[int, dict[int, float]]:
    """Every scored element's score inside ``region``, and the best one (-1: none)."""
    tags, tlen, par, weight, own, blocks = (
        page.tags, page.tlen, page.par, page.weight, page.own, page.blocks
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

    removed = page.removed
    for i in range(region + 1 if region else 0, page.end[region] + 1):
        if removed[i]:
            continue
        tag = tags[i]
        if tag in _PARAGRAPHS or (tag in _DIVLIKE and not blocks[i]):
            if tlen[i] >= MIN_BLOCK:
                give(par[i], 1 + page.commas[i] + min(tlen[i] / 100, 3))
        elif blocks[i] and own[i] >= MIN_BLOCK:
            # Text loose between blocks is a block of its own, in this element.
            give(i, 1 + page.own_commas[i] + min(own[i] / 100, 3))
    best, best_score = -1, 0.0
    for i, s in score.items():
        s *= 1 - page.link_density(i)
        score[i] = s
        if s > best_score:
            best, best_score = i, s
    return best, score


def refine(page: PageIndex, best: int, score: dict[int, float], region: int) -> int:
    """readability.js's move up: to the ancestor that 3 of the 5 next best candidates
    scoring 3/4 of the best share; then to an ancestor scoring more before one scores
    less than a third; then past ancestors that have it as their only child."""
    par, tags, end = page.par, page.tags, page.end
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
    last = score.setdefault(best, _TAG_SCORES.get(tags[best], 0) + page.weight.get(best, 0))
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
    while not stops(par[best]) and len(page.children(par[best])) == 1:
        best = par[best]
    score.setdefault(best, last)
    return best


def siblings(page: PageIndex, best: int, score: dict[int, float], region: int) -> list[int]:
    """``best`` with those of its siblings that are content too (readability's rule),
    in document order; only those of its class when its name says it is the content."""
    p = page.par[best]
    if best == region or p < region:
        return [best]
    top, els, tags, end = score[best], page.els, page.tags, page.end
    threshold = max(10.0, top * _SIBLING_SHARE)
    cls = els[best].get("class")
    named = best in page.named
    scored = sorted(score)

    def inner(x: int) -> float:
        lo, hi = bisect_left(scored, x), bisect_right(scored, end[x])
        return max((score[i] for i in scored[lo:hi]), default=-1e9)

    out, floor = [], None
    for s in page.children(p):
        if s == best:
            out.append(s)
            continue
        same = bool(cls) and els[s].get("class") == cls
        if named and not same:
            continue
        value = score.get(s, -1e9) + (top * _SIBLING_SHARE if same else 0)
        if value >= threshold or (tags[s] == "p" and _reads_as_text(page, s)):
            out.append(s)
        elif same:
            # An article cut into sections of one class scores its paragraphs'
            # parents, deeper than the sections: the best inside each compares.
            floor = _SIBLING_SHARE * inner(best) if floor is None else floor
            if inner(s) >= floor:
                out.append(s)
    return out


def _reads_as_text(page: PageIndex, i: int) -> bool:
    n, density = page.tlen[i], page.link_density(i)
    if n > 80:
        return density < 0.25
    if n == 0 or density > 0:
        return False
    text = " ".join(page.els[i].itertext()).rstrip()
    return text.endswith(".") or ". " in text
