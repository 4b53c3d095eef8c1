"""What a WACZ's page list says: titles read from a page's start, one line per page."""

from __future__ import annotations

import json
import random
import re

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
        # The first <title> is the page's; a closing tag may have spaces before its >.
        ("<title>a</title ><title>b</title>", "a"),
        ("<titlex>no</titlex><title>yes</title>", "yes"),
        ("<title>a</title\n\t>", "a"),
        ("<title>a</titlex></title>", "a</titlex>"),
        ("<title data-x='>'>a</title>", "'>a"),  # the first > ends the tag, as before
        ("<title>a", None),
        ("<title", None),
        # Heads that cost the old pattern seconds to tens of seconds, read in one pass.
        ("<title>" * 9_300, None),
        ("<title " * 9_300, None),
        ("<title>x</title " * 4_000, None),
        ("<title>" * 9_000 + "</title>", ("<title>" * 43)[:300]),
        ("<title>a</title" + " " * 66_000 + ">", None),  # its > past the head
    ],
)
def test_title_of(document: str | None, title: str | None) -> None:
    assert title_of(document) == title


_OLD = re.compile(r"<title\b[^>]*>(.*?)</title\s*>", re.IGNORECASE | re.DOTALL)


def test_title_of_finds_what_the_old_pattern_found() -> None:
    # The pattern's answers, on heads small enough for it, from pieces of tags.
    pieces = ["<title", "<TITLE", ">", "</title", "</Title", " ", "\n", "a", "x", "<", "/"]
    rng = random.Random(50)
    for _ in range(20_000):
        head = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 12)))
        found = _OLD.search(head)
        expected = " ".join(found.group(1).split())[:300] or None if found else None
        assert title_of(head) == expected, head


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
