"""A page's links are admitted in chunks with a reactor turn between them: a page of
MAX_LINKS_PER_PAGE links never holds the reactor for the whole of it."""

from __future__ import annotations

import asyncio

import pytest

from govsi.frontier import admission as module
from govsi.frontier.admission import ADMIT_CHUNK, Admission
from govsi.frontier.traps import TrapGuard
from govsi.web.scope import Scope
from tests.support.stats import DictStats


def spider() -> Admission:
    return Admission(Scope(("gov.si",), 2000), TrapGuard(), DictStats().inc_value, lambda url: True)


@pytest.mark.parametrize("n", [0, 1, ADMIT_CHUNK, ADMIT_CHUNK + 1, 3 * ADMIT_CHUNK + 7])
def test_links_are_admitted_in_chunks_in_order_each_once(
    monkeypatch: pytest.MonkeyPatch, n: int
) -> None:
    turns: list[int] = []

    async def turn() -> None:
        turns.append(1)

    monkeypatch.setattr(module, "_reactor_turn", turn)
    hrefs = [f"http://S{i}.gov.si/a/../b" for i in range(n)]
    hrefs += ["http://s0.gov.si/b", "https://zunaj.example.com/", "mailto:x@gov.si"]
    got = asyncio.run(spider().admitted(hrefs))
    # s0 is admitted once, where it first came (by itself when n is 0).
    assert got == [f"http://s{i}.gov.si/b" for i in range(max(n, 1))]
    assert len(turns) == (len(hrefs) - 1) // ADMIT_CHUNK
