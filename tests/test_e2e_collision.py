"""A seen-URL set that takes a new page for a known one (a 64-bit fingerprint collision,
``testkit.collide``): the page's link still gives it a FRONTIER row, and the last
look at crawldb before the crawl ends (``govsi.frontier.sweep``) fetches it. Nothing lost,
nothing fetched twice."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from govsi.settings import EXTENSIONS
from testkit.crawl import run_crawl, snapshot
from testkit.simweb import govweb
from testkit.simweb.expected import E2E_SETTINGS, W, assert_complete
from testkit.simweb.server import SimWeb


def test_a_page_taken_for_known_by_a_collision_is_fetched_before_the_crawl_ends(
    gov_web: SimWeb, tmp_path: Path
) -> None:
    db_url = f"sqlite:///{tmp_path / 'crawldb.sqlite3'}"
    gov_web.reset_log()
    run = run_crawl(
        gov_web,
        db_url,
        tmp_path,
        govweb.SEEDS,
        # /podrocja/a/b/c/ (found last, from /podrocja/a/b/) shares /o-vladi's fingerprint.
        EXTENSIONS=json.dumps({**EXTENSIONS, "testkit.collide.Collide": 0}),
        TEST_COLLIDE=f"{W}/podrocja/a/b/c/,{W}/o-vladi",
        DB_FLUSH_INTERVAL=0.2,
        **E2E_SETTINGS,
    )
    assert run.returncode == 0, run.log[-3000:]
    assert run.stats.get("test/collision_asked", 0) >= 1
    assert run.stats.get("govsi/frontier/dry_sweeps", 0) >= 1
    assert_complete(snapshot(db_url))
    fetched = Counter((h.host, h.target) for h in gov_web.requested() if h.target != "/robots.txt")
    assert fetched[("www.gov.si", "/podrocja/a/b/c/")] == 1
    assert fetched[("www.gov.si", "/o-vladi")] == 1
