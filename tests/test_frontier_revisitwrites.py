"""RevisitWrites: a host's revisits wait for its sitemap lastmods until every one of them
is written, including one that came while an earlier batch was being written."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest
from scrapy.statscollectors import MemoryStatsCollector
from scrapy.utils.test import get_crawler
from twisted.internet.defer import Deferred

from govsi.frontier import revisitwrites
from govsi.frontier.revisitwrites import RevisitWrites

WHEN = datetime(2026, 11, 29)


class Rows:
    def __init__(self) -> None:
        self.written: list[list[tuple[str, datetime]]] = []

    def sitemap_lastmods(self, lastmods: list[tuple[str, datetime]]) -> int:
        self.written.append(lastmods)
        return 0


@pytest.fixture
def writes(monkeypatch: pytest.MonkeyPatch) -> tuple[RevisitWrites, Rows, list[Any]]:
    started: list[Any] = []

    def held(f: Any, *args: Any) -> Deferred[Any]:
        d: Deferred[Any] = Deferred()
        started.append((d, f, args))
        return d

    monkeypatch.setattr(revisitwrites, "deferToThread", held)
    rows = Rows()
    w = RevisitWrites(rows, MemoryStatsCollector(get_crawler()))  # type: ignore[arg-type]
    return w, rows, started


def finish(started: list[Any]) -> None:
    d, f, args = started.pop(0)
    d.callback(f(*args))


@pytest.mark.parametrize("more", [False, True])
def test_a_host_waits_until_its_last_lastmod_is_written(
    writes: tuple[RevisitWrites, Rows, list[Any]], more: bool
) -> None:
    w, rows, started = writes
    w.lastmod("https://a.gov.si/1", "a.gov.si", WHEN)
    w.lastmod("https://b.gov.si/1", "b.gov.si", WHEN)
    w.flush()
    if more:  # comes while the first batch is being written
        w.lastmod("https://a.gov.si/2", "a.gov.si", WHEN)
    finish(started)
    assert not w.waits("b.gov.si")
    assert w.waits("a.gov.si") is more
    assert w.pending() is more
    w.flush()
    if more:
        finish(started)
        assert rows.written[-1] == [("https://a.gov.si/2", WHEN)]
    assert not w.waits("a.gov.si") and not w.pending()
