"""Tests for govsi.middlewares: which bodies are kept, and browser context rotation."""

from __future__ import annotations

import pytest

from govsi.middlewares import keep_body
from govsi.render.browser import ContextRotation

KEEP_CASES = [
    # content type, url, kind, store binary, store images, kept
    ("text/html; charset=utf-8", "https://www.gov.si/", "page", False, False, True),
    ("application/pdf", "https://www.gov.si/a.pdf", "page", True, False, True),
    ("application/pdf", "https://www.gov.si/a.pdf", "page", False, False, False),
    ("application/octet-stream", "https://www.gov.si/a.docx", "page", True, False, True),
    ("application/zip", "https://www.gov.si/a.zip", "page", True, True, False),
    ("image/png", "https://www.gov.si/a.png", "page", True, True, False),
    ("image/png", "https://www.gov.si/a.png", "image", False, True, True),
    ("image/png", "https://www.gov.si/a.png", "image", True, False, False),
    (None, "https://www.gov.si/stran", "page", False, False, True),  # may sniff as HTML
]


@pytest.mark.parametrize(("ctype", "url", "kind", "binary", "images", "kept"), KEEP_CASES)
def test_keep_body(ctype: str | None, url: str, kind: str, binary: bool, images: bool,
                   kept: bool) -> None:  # fmt: skip
    assert keep_body(ctype, url, kind, binary, images) is kept


class Ctx:
    def __init__(self, name: str) -> None:
        self.name = name


def test_pages_go_to_a_new_context_every_per_context_pages() -> None:
    rotation = ContextRotation(3)
    assert [rotation.assign() for _ in range(7)] == [0, 0, 0, 1, 1, 1, 2]


def test_a_retired_context_closes_when_its_last_page_is_done() -> None:
    rotation = ContextRotation(2)
    first = [rotation.assign(), rotation.assign()]
    assert first == [0, 0]
    c0 = Ctx("0")
    assert rotation.done(0, c0) == []  # generation 0 is still current
    assert rotation.assign() == 1  # 0 is retired now, one page still out
    assert rotation.done(1, Ctx("1")) == []
    assert rotation.done(0, c0) == [c0]  # its last page: closed
    assert rotation.done(1, None) == []  # nothing known is left to close


def test_a_retired_context_is_never_closed_under_a_page_in_flight() -> None:
    # More pages at once than pages per context: generations pass while a page of an old
    # one is still being rendered (closing its context would fail that page).
    rotation = ContextRotation(1)
    c0, c1 = Ctx("0"), Ctx("1")
    assert [rotation.assign() for _ in range(4)] == [0, 1, 2, 3]
    assert rotation.done(1, c1) == [c1]  # retired, and its only page is back
    rotation.contexts[0] = c0  # learned from an earlier page; 0 has a page out
    assert rotation.done(3, Ctx("3")) == []  # 3 is current; 0 and 2 have pages out
    c2 = Ctx("2")
    assert rotation.done(2, c2) == [c2]  # 0 stays: its page is still out
    assert rotation.done(0, c0) == [c0]  # its page is back: now it closes


def test_a_restarted_browser_context_replaces_the_dead_one() -> None:
    rotation = ContextRotation(2)
    rotation.assign()
    rotation.assign()
    rotation.done(0, Ctx("dead"))
    fresh = Ctx("fresh")
    rotation.assign()  # generation 1; 0 retired with one page out
    assert rotation.done(0, fresh) == [fresh]
