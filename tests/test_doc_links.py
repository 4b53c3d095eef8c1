"""Every relative link in the README and docs/ leads somewhere: the file exists and, when
the link names a heading (``#anchor``), the file has that heading."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.M | re.S)
CODE = re.compile(r"`[^`\n]*`")


def _links(page: Path) -> list[str]:
    text = CODE.sub("", FENCE.sub("", page.read_text(encoding="utf-8")))
    return LINK.findall(text)


def anchors(page: Path) -> set[str]:
    """The anchors GitHub gives a page's headings."""
    found: set[str] = set()
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    for title in re.findall(r"^#{1,6} +(.+?) *#*$", text, re.M):
        slug = re.sub(r"[^\w\- ]", "", title.lower()).replace(" ", "-")
        n, candidate = 0, slug
        while candidate in found:
            n += 1
            candidate = f"{slug}-{n}"
        found.add(candidate)
    return found


def test_anchors_are_githubs() -> None:
    page = ROOT / "docs" / "rendering.md"
    assert "letting-chromium-run-sandboxed" in anchors(page)
    assert "a-sandboxed-fenced-browser" in anchors(page)


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_relative_links_lead_somewhere(page: Path) -> None:
    broken = []
    for target in _links(page):
        if re.match(r"^[a-z]+:", target):
            continue  # http(s), mailto: not checked (tests never touch the internet)
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists():
            broken.append(f"{target}: no such file")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            broken.append(f"{target}: no such heading in {dest.relative_to(ROOT)}")
    assert broken == [], f"{page.relative_to(ROOT)} has broken links"
