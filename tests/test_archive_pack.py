"""What a WACZ's page list says: titles read from a page's start, one line per page."""

from __future__ import annotations

import json

import pytest

from govsi.archive.pack import PageEntry, pages_jsonl, title_of


@pytest.mark.parametrize(
    ("document", "title"),
    [
        ("<html><head><title>Vlada</title></head></html>", "Vlada"),
        ("<TITLE lang=sl>  Ministrstvo\n za   finance </TITLE>", "Ministrstvo za finance"),
        ("<title>Naro&#269;ila &amp; razpisi</title>", "Naročila & razpisi"),
        ("<title></title>", None),
        ("<html><body>no title</body></html>", None),
        ("", None),
        (None, None),
        # Only the head is looked in: a title after 64 K characters is not the page's.
        ("x" * 70_000 + "<title>late</title>", None),
        ("<title>" + "d" * 500 + "</title>", "d" * 300),
    ],
)
def test_title_of(document: str | None, title: str | None) -> None:
    assert title_of(document) == title


def test_pages_jsonl_has_a_header_then_a_page_per_line() -> None:
    lines = list(pages_jsonl([
        PageEntry("http://www.gov.si/", "GOV.SI"),
        PageEntry("http://evem.gov.si/", None),
        PageEntry("http://x.gov.si/", "Č"),
    ]))  # fmt: skip
    assert json.loads(lines[0]) == {"format": "json-pages-1.0", "id": "pages",
                                    "title": "All Pages"}  # fmt: skip
    first, second, third = map(json.loads, lines[1:])
    assert first == {"id": first["id"], "url": "http://www.gov.si/", "title": "GOV.SI"}
    # No time: py-wacz takes the record's (crawldb's may be a second off WARC-Date).
    assert "title" not in second and "ts" not in second
    assert "Č" in lines[3]  # kept as text, not escaped
    assert len({first["id"], second["id"], third["id"]}) == 3
