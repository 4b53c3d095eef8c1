"""Hosts that would spend a crawl's budgets, and one ordinary host beside them.

slike.gov.si: a page with ``IMAGE_VARIANTS`` pictures ``/logo.png?v=N`` (each served as a
picture), beside a few plain pages. velik.gov.si: ``BIG_PAGES`` pages in a chain, more than
the test's page budget. mirno.gov.si: a small site that must be crawled whole.
"""

from __future__ import annotations

import re

from testkit.simweb.govweb import PNG
from testkit.simweb.server import Host, Resource, SimWeb, html

IMAGE_VARIANTS = 5000
BIG_PAGES = 20
CALM_PAGES = 4
SEEDS = ["http://slike.gov.si/", "http://velik.gov.si/", "http://mirno.gov.si/"]


def _page(title: str, links: list[str], images: int = 0) -> Resource:
    body = " ".join(f'<a href="{href}">{href}</a>' for href in links)
    pictures = "".join(f'<img src="/logo.png?v={n}">' for n in range(images))
    return html(f"<html><body><h1>{title}</h1>{body}{pictures}</body></html>")


def _logo(target: str) -> Resource | None:
    if re.fullmatch(r"/logo\.png\?v=\d+", target):
        return Resource(PNG, headers={"Content-Type": "image/png"})
    return None


def _chain(prefix: str, count: int) -> dict[str, Resource]:
    """``count`` pages, each linking to the next."""
    paths = ["/"] + [f"/s{i}" for i in range(1, count)]
    return {path: _page(f"{prefix} {i}", paths[i + 1 : i + 2]) for i, path in enumerate(paths)}


def build() -> SimWeb:
    slike = {
        "/": _page("Slike", ["/s1", "/s2", "http://mirno.gov.si/"], images=IMAGE_VARIANTS),
        "/s1": _page("Slike 1", ["/s2"]),
        "/s2": _page("Slike 2", []),
    }
    return SimWeb(
        [
            Host("slike.gov.si", 0, slike, dynamic=_logo),
            Host("velik.gov.si", 1, _chain("Velik", BIG_PAGES)),
            Host("mirno.gov.si", 2, _chain("Mirno", CALM_PAGES)),
        ]
    )
