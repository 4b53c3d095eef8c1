"""Hosts that never end, and one ordinary host beside them.

past.gov.si: an endless calendar (each month links to the next), a relative link that
nests a path in itself for ever, a session id in every link, and a search with a new
query in every result. mirno.gov.si: a plain small site that must be crawled whole and
not be slowed by its neighbour's traps.
"""

from __future__ import annotations

import itertools
import re

from testkit.simweb.server import Host, Resource, SimWeb, html

CALM_PAGES = 8
_session = itertools.count()


def _page(title: str, links: list[str]) -> Resource:
    body = " ".join(f'<a href="{href}">{href}</a>' for href in links)
    return html(f"<html><body><h1>{title}</h1>{body}</body></html>")


def _trap(target: str) -> Resource | None:
    if m := re.fullmatch(r"/koledar\?mesec=(\d+)", target):
        return _page("Koledar", [f"/koledar?mesec={int(m.group(1)) + 1}"])
    if re.fullmatch(r"/a/(a/)*", target):
        # Each level says where it is, so no level is a copy of another.
        return _page(f"Gnezdo {target}", ["a/"])
    if re.fullmatch(r"/prijava(;jsessionid=\d+)?", target):
        return _page("Prijava", [f"/prijava;jsessionid={next(_session)}"])
    if m := re.fullmatch(r"/iskanje\?q=(\d+)", target):
        n = int(m.group(1))
        return _page("Iskanje", [f"/iskanje?q={n * 7 + i}" for i in range(1, 6)])
    return None


def build() -> SimWeb:
    past = {
        "/": _page(
            "Past",
            [
                "/koledar?mesec=1",
                "/a/",
                "/prijava;jsessionid=0",
                "/iskanje?q=1",
                "http://mirno.gov.si/",
            ],
        )
    }
    calm = {
        "/" if i == 0 else f"/s{i}": _page(
            f"Mirno {i}", [f"/s{i + 1}"] if i + 1 < CALM_PAGES else []
        )
        for i in range(CALM_PAGES)
    }
    return SimWeb([Host("past.gov.si", 0, past, dynamic=_trap), Host("mirno.gov.si", 1, calm)])


SEEDS = ["http://past.gov.si/"]
