"""A search box's query parsed (govsi.search.query): words, phrases, filters; nothing typed
is lost."""

from __future__ import annotations

from datetime import datetime

import pytest

from govsi.search.query import ParsedQuery, parse


@pytest.mark.parametrize(
    ("typed", "expected"),
    [
        ("javna naročila", ParsedQuery([["javna"], ["naročila"]])),
        ('"potrdilo o stalnem" prebivališču',
         ParsedQuery([["potrdilo", "o", "stalnem"], ["prebivališču"]])),
        ('"nezaključen narekovaj', ParsedQuery([["nezaključen", "narekovaj"]])),
        ('"" x', ParsedQuery([["x"]])),
        ("host:WWW.gov.si site:.gov.si type:PDF type:docx",
         ParsedQuery([], ["www.gov.si"], ["gov.si"], ["PDF", "DOCX"])),
        ("after:2024 before:2025-02", ParsedQuery(after=datetime(2024, 1, 1),
                                                  before=datetime(2025, 2, 28, 23, 59, 59))),
        ("before:2024-12", ParsedQuery(before=datetime(2024, 12, 31, 23, 59, 59))),
        ("after:2024-02-29 before:2024-03-01",
         ParsedQuery(after=datetime(2024, 2, 29), before=datetime(2024, 3, 1, 23, 59, 59))),
        # A filter with a bad value is a word.
        ("type:exe after:jutri before:2024-13", ParsedQuery([["type:exe"], ["after:jutri"],
                                                              ["before:2024-13"]])),
        ("", ParsedQuery()),
        # Past the dates the index can hold: the nearest it can (every date it holds is
        # far inside), so after:0001 and before:9999 mean every dated page.
        ("after:0001 before:9999-12-31", ParsedQuery(after=datetime(1678, 1, 1),
                                                     before=datetime(2262, 1, 1))),
        ("after:1677-09-20 before:2262-04-12", ParsedQuery(after=datetime(1678, 1, 1),
                                                           before=datetime(2262, 1, 1))),
        ("after:9999", ParsedQuery(after=datetime(2262, 1, 1))),
        ("before:1000-01", ParsedQuery(before=datetime(1678, 1, 1))),
        ("after:1678 before:2261-12-31", ParsedQuery(after=datetime(1678, 1, 1),
                                                     before=datetime(2261, 12, 31, 23, 59, 59))),
        ("after:0000", ParsedQuery([["after:0000"]])),  # no year 0: a word
    ],
)  # fmt: skip
def test_parse(typed: str, expected: ParsedQuery) -> None:
    assert parse(typed) == expected


def test_an_endless_query_is_read_only_so_far() -> None:
    assert len(parse("beseda " * 100_000).units) == 2_000 // len("beseda ") + 1
