"""Which URLs the crawl takes: a link's canonical form when it is in scope, not too long and
no trap; an image's as a page's record keeps it; a page's many links a chunk at a time."""

from __future__ import annotations

from collections.abc import Callable

from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet.task import deferLater

from govsi.frontier.traps import TrapGuard
from govsi.stats import Count
from govsi.web.extract import ExtractedLinks
from govsi.web.scope import Scope
from govsi.web.urls import resolve

__all__ = ["ADMIT_CHUNK", "Admission"]

# Links (or images) of one page admitted per reactor turn: about 30 ms of work.
ADMIT_CHUNK = 1000


async def _reactor_turn() -> None:
    """Let the reactor run everything else that is ready, then go on."""
    from twisted.internet import reactor  # here: importing it installs one

    await maybe_deferred_to_future(deferLater(reactor, 0, lambda: None))


class Admission:
    def __init__(
        self, scope: Scope, traps: TrapGuard, count: Count, is_new: Callable[[str], bool]
    ) -> None:
        """``traps``: the crawl's trap rules (they count their refusals); ``is_new(url)``:
        the page ``url`` is not known to the crawl yet."""
        self.scope = scope
        self.traps = traps
        self.count = count
        self.is_new = is_new

    def admit(self, url: str | None) -> str | None:
        """The canonical form of an absolute URL we may store and fetch, else None."""
        canonical, too_long = self.scope.canonical(url)
        if too_long:
            self.count("govsi/url_too_long")
        if canonical is None or self.traps.check(canonical) is not None:
            return None
        return canonical

    def redirect(self, response_url: str, location: str) -> str | None:
        """``admit`` of a redirect's target: its ``location`` resolved against the URL that
        answered with it."""
        return self.admit(resolve(response_url, location))

    def admit_canonical(self, url: str) -> str | None:
        """``admit`` of a link already canonical, in scope and not too long
        (``govsi.page.links.canonical_links``): only the trap rules are left."""
        return url if self.traps.check(url) is None else None

    def may_fetch_image(self, url: str) -> bool:
        # Images outside scope get a row (the page shows them) but are never requested.
        return self.scope.admits(url)

    def image(self, src: str) -> str | None:
        """An image as a page's record keeps it: canonical, or None. An in-scope image that
        breaks a trap rule (``/logo.png?v=N`` past TRAP_MAX_QUERY_VARIANTS) is neither
        recorded nor requested, as a trap's link gets no FRONTIER row; it is counted under
        govsi/traps/<rule>. Images out of scope are recorded, never requested."""
        image = self.scope.canonical_picture(src)
        return self.image_canonical(image) if image is not None else None

    def image_canonical(self, image: str) -> str | None:
        """``image`` of a picture's URL already canonical: only the trap rules are left."""
        if self.may_fetch_image(image) and self.traps.check(image) is not None:
            return None
        return image

    async def admitted_links(self, found: ExtractedLinks) -> list[str]:
        """``admitted`` of a page's links, made canonical before or not."""
        if found.too_long:
            self.count("govsi/url_too_long", found.too_long)
        return await self.admitted(found.links, self.admit_canonical if found.canonical else None)

    async def admitted_images(self, found: ExtractedLinks) -> list[str]:
        """``admitted`` of a page's pictures, as its record keeps them."""
        return await self.admitted(
            found.images, self.image_canonical if found.canonical else self.image
        )

    def chain(self, page_url: str, links: list[str]) -> list[str]:
        """``links`` of ``page_url`` without those past TRAP_MAX_QUERY_CHAIN hops."""
        return self.traps.chain(page_url, links, self.is_new)

    async def admitted(
        self, urls: list[str], admit: Callable[[str], str | None] | None = None
    ) -> list[str]:
        """``admit`` (default: ``self.admit``) of each URL, the Nones left out, each once,
        in order; ADMIT_CHUNK at a time with a reactor turn between, so that a page of
        MAX_LINKS_PER_PAGE links (tens of microseconds each) never stalls the crawl."""
        admit = admit or self.admit
        admitted: dict[str, None] = {}
        for start in range(0, len(urls), ADMIT_CHUNK):
            if start:
                await _reactor_turn()
            for url in urls[start : start + ADMIT_CHUNK]:
                target = admit(url)
                if target is not None:
                    admitted.setdefault(target)
        return list(admitted)
