"""A page of results as ``scrapy search`` prints it (govsi.search.results): what came from
the crawl never reaches the terminal as control characters."""

from __future__ import annotations

import json
from datetime import datetime

import pytest

from govsi.printable import json_printable
from govsi.search.results import SearchPage, to_json, to_terminal
from govsi.search.searcher import Hit, Results

TITLE = "\x1b]0;pwned\x07Uredba\x1b]52;c;cHduZWQ=\x07 \x9b2J o \u202eobčinah"
URL = "https://a.gov.si/\x1b[2Jstran"


def _page() -> SearchPage:
    hit = Hit(1, URL, TITLE, "HTML", "a.gov.si\x1b[H", datetime(2025, 3, 1), 1.5)
    return SearchPage(
        "uredba", Results(1, [hit]),
        snippets={1: [("Besedilo \x1b[31m", False), ("uredbe", True), ("\r\x1b[K", False)]},
        page=1, per_page=10,
        titles={1: [("\x1b]0;pwned\x07", False), ("Uredba", True), ("\x9b2J \u202e", False)]},
    )  # fmt: skip


@pytest.mark.parametrize("color", [False, True])
def test_the_terminal_gets_no_control_character_from_the_crawl(color: bool) -> None:
    shown = to_terminal(_page(), color=color)
    ours = {"\x1b[1m", "\x1b[0m", "\x1b[4m", "\x1b[24m"} if color else set()
    rest = shown
    for escape in ours:
        rest = rest.replace(escape, "")
    assert not any(c in rest for c in "\x1b\x07\x9b\r\u202e"), rest
    assert "\\x1b]0;pwned\\x07" in shown and "\\x9b2J \\u202e" in shown
    assert "https://a.gov.si/\\x1b[2Jstran" in shown and "a.gov.si\\x1b[H" in shown
    assert ("\x1b[4mUredba\x1b[24m" if color else "**Uredba**") in shown
    assert "Besedilo \\x1b[31m" in shown and "\\x0d\\x1b[K" in shown


def test_json_keeps_the_values_and_escapes_them_for_the_terminal() -> None:
    dumped = json_printable(json.dumps(to_json(_page()), ensure_ascii=False, indent=1))
    assert "\x9b" not in dumped and "\u202e" not in dumped and "\x1b" not in dumped
    (found,) = json.loads(dumped)
    assert found["title"] == TITLE and found["url"] == URL
