"""Documents made to cost a reader without bound: each read in bounded memory and time,
or stopped by a bound that says so."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from lxml import etree

from govsi.text.limits import DocumentText, TextLimits, memory_bounded
from govsi.text.ooxml import ooxml_text
from govsi.text.pdf import pdf_text
from testkit.simweb.documents import make_pdf, tree_bomb_docx


def test_a_docx_of_empty_runs_keeps_no_tree(monkeypatch: pytest.MonkeyPatch) -> None:
    # 200 000 empty runs in one paragraph: each dropped once read (a tree that kept them
    # took 1.3 GB at 10 million). The parser is watched: how many siblings an element
    # read has beside it at most (those parsed ahead of the reader: one read of the part,
    # 32 KB of 6-byte runs, ~5 500).
    widest = [0]
    real = etree.iterparse

    def watched(*args: Any, **kwargs: Any) -> Iterator[tuple[str, Any]]:
        for n, (event, el) in enumerate(real(*args, **kwargs)):
            yield event, el
            parent = el.getparent()
            if n % 1000 == 0 and parent is not None:
                widest[0] = max(widest[0], len(parent))

    monkeypatch.setattr(etree, "iterparse", watched)
    got = ooxml_text(tree_bomb_docx(6 * 200_000), "DOCX", TextLimits())
    assert got.status == "empty"
    assert 0 < widest[0] < 10_000


def test_the_time_bound_stops_a_docx_inside_its_part() -> None:
    got = ooxml_text(tree_bomb_docx(12 * 2**20), "DOCX", TextLimits(max_seconds=0.2))
    assert (got.status, got.reason) == ("timeout", "reading took over 0.2 s")


def test_a_pdf_pages_text_is_asked_only_as_far_as_the_bound() -> None:
    got = pdf_text(make_pdf(["a" * 500, "b" * 500]), TextLimits(max_chars=300))
    assert (got.status, got.text, got.truncated) == ("ok", "a" * 300, True)


def test_a_refused_allocation_is_the_memory_status() -> None:
    @memory_bounded
    def reader(data: bytes) -> DocumentText:
        raise MemoryError

    got = reader(b"x")
    assert (got.status, got.reason) == ("memory", "over memory bound: an allocation was refused")
