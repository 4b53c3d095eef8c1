"""Budgets hold on a real crawl: endless image variants and a host larger than its page
budget are cut, counted and left for a later run; the rest of the crawl is complete."""

from __future__ import annotations

from pathlib import Path

from testkit.crawl import query, run_crawl
from testkit.simweb import budgetweb

MAX_VARIANTS = 100
MAX_IMAGES = 30
MAX_PAGES = 5


def test_image_variants_and_a_large_host_stay_within_their_budgets(tmp_path: Path) -> None:
    web = budgetweb.build().start()
    db_url = f"sqlite:///{tmp_path / 'crawldb.sqlite3'}"
    try:
        run = run_crawl(
            web,
            db_url,
            tmp_path,
            budgetweb.SEEDS,
            timeout=240,
            TRAP_MAX_QUERY_VARIANTS=MAX_VARIANTS,
            MAX_IMAGES_PER_HOST=MAX_IMAGES,
            MAX_PAGES_PER_HOST=MAX_PAGES,
        )
        hits = web.requested()
    finally:
        web.stop()
    assert run.returncode == 0, run.log[-3000:]
    assert run.stats["finish_reason"] == "finished"  # it ended by itself
    logos = [h for h in hits if h.host == "slike.gov.si" and h.target.startswith("/logo.png")]
    assert len(logos) == MAX_IMAGES
    # Variants past the trap rule are neither requested nor recorded; those past the
    # budget are recorded, owed to a later run.
    assert run.stats["govsi/traps/query_variants"] == budgetweb.IMAGE_VARIANTS - MAX_VARIANTS
    assert run.stats["govsi/budget/images_per_host"] == MAX_VARIANTS - MAX_IMAGES
    [(recorded, fetched)] = query(
        db_url, "SELECT count(*), count(accessed_time) FROM image WHERE url LIKE '%logo.png%'"
    )
    assert (recorded, fetched) == (MAX_VARIANTS, MAX_IMAGES)
    assert "MAX_IMAGES_PER_HOST (30) reached" in run.log
    # The large host: its budget's pages fetched, the rest left FRONTIER with the reason.
    velik = {h.target for h in hits if h.host == "velik.gov.si"} - {"/robots.txt"}
    assert len(velik) == MAX_PAGES
    left = query(
        db_url,
        "SELECT p.fetch_error FROM page p JOIN site s ON s.id = p.site_id "
        "WHERE s.domain = 'velik.gov.si' AND p.page_type_code = 'FRONTIER'",
    )
    assert [r[0] for r in left] == [f"budget: MAX_PAGES_PER_HOST ({MAX_PAGES}) reached"]
    assert run.stats["govsi/budget/pages_per_host/hosts"] == 1
    # The rest of the crawl is complete.
    slike = {h.target for h in hits if h.host == "slike.gov.si"}
    assert {"/", "/s1", "/s2"} <= slike
    calm = {h.target for h in hits if h.host == "mirno.gov.si"}
    assert calm >= {"/"} | {f"/s{i}" for i in range(1, budgetweb.CALM_PAGES)}
    # What the report reads: the limits the run reached, in crawl_limit.
    limits = dict(query(db_url, "SELECT name, value FROM crawl_limit"))
    assert limits["govsi/budget/images_per_host"] == MAX_VARIANTS - MAX_IMAGES
    assert limits["govsi/budget/pages_per_host/hosts"] == 1
    assert limits["govsi/traps/query_variants"] == run.stats["govsi/traps/query_variants"]
