"""A page's links, images and feeds made canonical within the crawl's scope, each once, in
order (pure)."""

from __future__ import annotations

from govsi.web.extract import ExtractedLinks
from govsi.web.scope import Scope

__all__ = ["canonical_links"]


def canonical_links(found: ExtractedLinks, scope: Scope) -> None:
    """Make ``found``'s links canonical, each once, in order, those out of ``scope`` or too
    long left out (counted in ``too_long``), its feeds likewise (not counted), and its
    images canonical (out of scope too:
    a page's record keeps every picture it shows). The crawl's trap rules, which have a
    memory, are the spider's to apply after."""
    links: dict[str, None] = {}
    for url in found.links:
        canonical, too_long = scope.canonical(url)
        if canonical is not None:
            links.setdefault(canonical)
        found.too_long += too_long
    images: dict[str, None] = {}
    for src in found.images:
        if (image := scope.canonical_picture(src)) is not None:
            images.setdefault(image)
    feeds: dict[str, None] = {}
    for url in found.feeds:
        if (feed := scope.canonical(url)[0]) is not None:
            feeds.setdefault(feed)
    found.feeds = list(feeds)
    found.links, found.images, found.canonical = list(links), list(images), True
