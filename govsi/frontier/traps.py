"""Crawler traps: URL spaces without end that must not hold the crawl.

Checked when a link or an image is found, before it becomes a FRONTIER (or image) row, so
a trap costs neither requests nor rows. Each rule is a setting (0 turns it off), and each
refusal is counted in the stats under its reason. URL length and depth are bounded
elsewhere (MAX_URL_LENGTH, DEPTH_LIMIT), and budgets (pages, images, bytes per host) by
the scheduler when a request is released (``govsi.frontier.budgets``); politeness keeps
one host's trap from slowing the others, these keep it from lasting for ever.

- A path segment that occurs ``max_repeats`` times or more (``/a/b/a/b/a/b``): relative
  links that resolve against themselves, mis-configured rewrites.
- More than ``max_query_variants`` distinct queries for one path (endless calendars,
  ``?page=N`` without end, sort/filter combinations, session ids in every link).
- A *query chain* longer than ``max_query_chain`` hops: pages of one path and one set of
  query names (``/koledar?mesec=5&leto=2026``), each found from the previous one, none of
  which brought a new URL outside the chain. An endless calendar is such a chain; real
  pagination is not, since each of its pages brings new articles, and that starts the
  count again. Checked per page (``TrapGuard.chain``), with what the page links to.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Final, Literal

import ada_url

from govsi.web.urls import fingerprint

# The rule a trap breaks (a stat's last part: govsi/traps/<rule>).
TrapRule = Literal["repeated_segment", "query_variants", "query_chain"]
REPEATED_SEGMENT: Final[TrapRule] = "repeated_segment"
QUERY_VARIANTS: Final[TrapRule] = "query_variants"
QUERY_CHAIN: Final[TrapRule] = "query_chain"

Family = tuple[str, str, tuple[str, ...]]


def query_family(url: str) -> Family:
    """Host, path and the sorted names of the query's parameters of a canonical URL: what
    the pages of one query chain share while their values change."""
    host, path, search = _parts(url)
    query = search[1:]
    names = sorted({p.partition("=")[0] for p in query.split("&") if p}) if query else []
    return host, path, tuple(names)


def repeated_segment(path: str, max_repeats: int) -> bool:
    """Whether one non-empty segment of ``path`` occurs ``max_repeats`` times or more."""
    # Each segment follows a "/": a path of fewer has no segment that often (most paths).
    if max_repeats <= 0 or path.count("/") < max_repeats:
        return False
    counts = Counter(s for s in path.split("/") if s)
    return bool(counts) and max(counts.values()) >= max_repeats


class TrapGuard:
    """Decides, for each newly found canonical URL, whether it looks like a trap."""

    def __init__(
        self,
        max_repeats: int = 3,
        max_query_variants: int = 1000,
        on_refusal: Callable[[TrapRule], None] | None = None,
        max_query_chain: int = 0,
    ) -> None:
        self.max_repeats = max_repeats
        self.max_query_variants = max_query_variants
        self.max_query_chain = max_query_chain
        # Hops of the chain each URL was found at (fingerprints; one entry per URL of a
        # query family, which max_query_variants bounds per path).
        self._hops: dict[int, int] = {}
        self.on_refusal = on_refusal
        # The queries counted so far per path, as 64-bit fingerprints, so that meeting a
        # URL again (a menu link on every page) counts nothing. Each set is bounded by its
        # limit.
        self._variants: dict[int, set[int]] = {}

    def check(self, url: str) -> TrapRule | None:
        """The trap rule ``url`` breaks, else None. The same URL always gets the same
        answer: a URL admitted once is never refused later."""
        host, path, search = _parts(url)
        reason: TrapRule | None = None
        if repeated_segment(path, self.max_repeats):
            reason = REPEATED_SEGMENT
        elif self.max_query_variants > 0 and search:
            seen = self._variants.setdefault(fingerprint(f"{host}{path}"), set())
            if not _admit(seen, fingerprint(search), self.max_query_variants):
                reason = QUERY_VARIANTS
        if reason is not None and self.on_refusal is not None:
            self.on_refusal(reason)
        return reason

    def chain(self, page_url: str, links: list[str], is_new: Callable[[str], bool]) -> list[str]:
        """``links`` of the page at ``page_url`` without those that would take a query
        chain past ``max_query_chain`` hops. ``is_new(url)``: not known to the crawl yet.
        Linear in the number of links."""
        # A page without a query heads no chain: none of its links can continue one.
        if self.max_query_chain <= 0 or not links or "?" not in page_url:
            return links
        family = query_family(page_url)
        new = [(url, query_family(url)) for url in links if url != page_url and is_new(url)]
        if any(f != family for _, f in new):
            hops = 1  # the page brought something new: pagination, not a trap
        else:
            hops = self._hops.get(fingerprint(page_url), 0) + 1
        refused: set[str] = set()
        for url, f in new:
            if f != family or not family[2]:
                continue
            if hops > self.max_query_chain:
                refused.add(url)
                continue
            key = fingerprint(url)
            self._hops[key] = min(hops, self._hops.get(key, hops))
        if refused and self.on_refusal is not None:
            for _ in refused:
                self.on_refusal(QUERY_CHAIN)
        return [url for url in links if url not in refused] if refused else links


def _parts(url: str) -> tuple[str, str, str]:
    """Host name, path and search ("?..." or "") of a canonical URL, as ada gives them.
    Cut out of the string: a canonical URL is ``scheme://host[:port]/path[?query]``, and
    parsing each of a page's links again cost the spider a tenth of its time. A host in
    brackets (IPv6) is left to the parser."""
    scheme_end = url.find("://")
    slash = url.find("/", scheme_end + 3) if scheme_end > 0 else -1
    netloc = url[scheme_end + 3 : slash]
    if slash < 0 or "[" in netloc or "@" in netloc:
        parts = ada_url.parse_url(url, ("hostname", "pathname", "search"))
        return parts["hostname"], parts["pathname"], parts["search"]
    path, mark, query = url[slash:].partition("?")
    return netloc.partition(":")[0], path, mark + query if query else ""


def _admit(seen: set[int], key: int, limit: int) -> bool:
    if key in seen:
        return True
    if len(seen) >= limit:
        return False
    seen.add(key)
    return True
