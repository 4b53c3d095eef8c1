"""Traps are bounded, counted, and do not hold up the other hosts."""

from __future__ import annotations

from pathlib import Path

from testkit.crawl import run_crawl
from testkit.simweb import trapweb

MAX_VARIANTS = 20


def test_traps_are_bounded_and_counted(tmp_path: Path) -> None:
    web = trapweb.build().start()
    try:
        run = run_crawl(
            web,
            f"sqlite:///{tmp_path / 'crawldb.sqlite3'}",
            tmp_path,
            trapweb.SEEDS,
            timeout=240,
            DEFAULT_CRAWL_DELAY=0,
            TRAP_MAX_QUERY_VARIANTS=MAX_VARIANTS,
        )
        hits = web.requested()
    finally:
        web.stop()
    assert run.returncode == 0, run.log[-3000:]
    assert run.stats["finish_reason"] == "finished"  # it ended by itself
    past = [h.target for h in hits if h.host == "past.gov.si"]
    calendar = [t for t in past if t.startswith("/koledar")]
    search = [t for t in past if t.startswith("/iskanje")]
    nest = [t for t in past if t.startswith("/a/")]
    session = [t for t in past if t.startswith("/prijava")]
    assert len(calendar) <= MAX_VARIANTS and len(search) <= MAX_VARIANTS
    assert nest == ["/a/", "/a/a/"]  # /a/a/a/ has a segment three times
    # Canonical URLs drop the session id: one page, fetched once.
    assert session == ["/prijava"]
    assert run.stats["govsi/traps/query_variants"] >= 2
    assert run.stats["govsi/traps/repeated_segment"] >= 1
    # The quiet neighbour was crawled whole.
    calm = {h.target for h in hits if h.host == "mirno.gov.si"}
    assert calm >= {"/"} | {f"/s{i}" for i in range(1, trapweb.CALM_PAGES)}
