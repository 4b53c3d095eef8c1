"""End-to-end feeds: crawl a news site whose list declares an RSS feed (``testkit.simweb.feedweb``),
then, two hours later on crawldb's clock (every stored time moved back), a new item is
published in the feed only and the site is crawled again with the default REVISIT=due.

The first run stores the feed (where it was found, its validators) and fetches the page
only the feed names first; a feed robots.txt forbids is never asked for; a JSON Feed's
page is stored, a feed moved by a 301 is stored at its new URL (the old row retired), and
a 404 feed backs off (asked again two hours later, two failures in a row). The second run,
though no page is due, polls the feed and re-reads the sitemaps conditionally (the unchanged
one answers 304), fetches the new item before any other page, and the page a sitemap's
``<lastmod>`` says changed; no other page. Delays hold in both runs."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from itertools import pairwise
from pathlib import Path

import pytest

from testkit.clock import move_clock
from testkit.crawl import CrawlRun, query, run_crawl
from testkit.simweb import feedweb
from testkit.simweb.expected import E2E_SETTINGS
from testkit.simweb.feedweb import (
    CHANGED_PAGE,
    FEED_PATH,
    FORBIDDEN_FEED,
    GONE_FEED,
    JSON_FEED,
    MOVED_FEED,
    MOVED_TO,
    NEW_ITEM,
    ONLY_IN_FEED,
    ONLY_IN_JSON,
    SITEMAP,
    SITEMAP_CHANGED,
    N,
)
from testkit.simweb.server import Hit, SimWeb

DELAY = 0.2
SETTINGS = {**E2E_SETTINGS, "DEFAULT_CRAWL_DELAY": DELAY}
LATER = timedelta(hours=2)  # past FEED_POLL_INTERVAL and SITEMAP_POLL_INTERVAL (defaults)


@dataclass
class Polled:
    web: SimWeb
    db_url: str
    first: list[Hit]
    second: list[Hit]
    runs: tuple[CrawlRun, CrawlRun]


@pytest.fixture(scope="module")
def polled(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Polled]:
    work: Path = tmp_path_factory.mktemp("feeds")
    db_url = f"sqlite:///{work / 'crawldb.sqlite3'}"
    web = feedweb.build().start()
    try:
        first = run_crawl(web, db_url, work / "first", feedweb.SEEDS, **SETTINGS)
        assert first.returncode == 0, first.log[-3000:]
        first_hits = web.requested()
        move_clock(db_url, LATER)
        feedweb.publish(web)
        web.reset_log()
        # A page a sitemap says changed is due at once, two hours after its visit (the
        # default bound, a day, would wait for it: docs/stored.md).
        second = run_crawl(web, db_url, work / "second", feedweb.SEEDS, **SETTINGS,
                           REVISIT_MIN_INTERVAL=3600)  # fmt: skip
        assert second.returncode == 0, second.log[-3000:]
        for run in (first, second):
            assert "Traceback" not in run.log, run.log[-5000:]
        yield Polled(web, db_url, first_hits, web.requested(), (first, second))
    finally:
        web.stop()


def stored(db_url: str) -> dict[str, str]:
    return {u: t for u, t in query(db_url, "SELECT url, page_type_code FROM page")}


def test_the_feed_is_stored_with_where_it_was_found_and_its_validators(polled: Polled) -> None:
    rows = query(polled.db_url, "SELECT url, kind, found_on, etag, poll_status, entries, "
                                "new_entries FROM feed ORDER BY url")  # fmt: skip
    by_url = {r[0]: r[1:] for r in rows}
    feed = by_url[f"http://{N}{FEED_PATH}"]
    assert feed[:2] == ("feed", f"http://{N}/novice/")
    # The second poll's: the new ETag, four entries, one of them new.
    assert feed[2:] == ('"v2"', 200, 4, 1)
    sitemap = by_url[f"http://{N}{SITEMAP}"]
    assert sitemap[0] == "sitemap" and sitemap[2:4] == ('"s1"', 304)
    assert f"http://{N}{FORBIDDEN_FEED}" not in by_url


def test_a_json_feed_a_moved_feed_and_a_gone_one(polled: Polled) -> None:
    assert stored(polled.db_url)[f"http://{N}{ONLY_IN_JSON}"] == "HTML"
    rows = query(polled.db_url, "SELECT url, state, moved_to, failures, poll_status, "
                                "found_on FROM feed")  # fmt: skip
    by_url = {r[0]: r[1:] for r in rows}
    page = f"http://{N}/novice/"
    assert by_url[f"http://{N}{JSON_FEED}"] == ("active", None, 0, 200, page)
    assert by_url[f"http://{N}{MOVED_FEED}"][:2] == ("moved", f"http://{N}{MOVED_TO}")
    # The new URL polled in both runs (the second conditionally); the old one only once.
    assert by_url[f"http://{N}{MOVED_TO}"] == ("active", None, 0, 304, page)
    assert [h.target for h in polled.second].count(MOVED_FEED) == 0
    # Two hours after its first 404 (the interval doubled), a second: backed off again.
    assert by_url[f"http://{N}{GONE_FEED}"] == ("active", None, 2, 404, page)
    assert int(polled.runs[0].stats.get("govsi/feeds/backed_off", 0)) == 1  # type: ignore[call-overload]


def test_a_page_only_the_feed_names_is_fetched_first(polled: Polled) -> None:
    pages = stored(polled.db_url)
    assert pages[f"http://{N}{ONLY_IN_FEED}"] == "HTML"
    order = [h.target for h in polled.first]
    # New entries go ahead of the host's breadth-first order: before a page one hop from
    # the root, found long before.
    assert order.index(ONLY_IN_FEED) < order.index("/o-nas") < order.index("/novice/1")


def test_robots_txt_holds_for_feeds(polled: Polled) -> None:
    asked = {h.target for h in polled.first + polled.second}
    assert FORBIDDEN_FEED not in asked and "/zaprto/skrito" not in asked
    assert int(polled.runs[0].stats.get("govsi/feeds/refused_by_robots", 0)) == 1  # type: ignore[call-overload]


def test_a_later_run_polls_feed_and_sitemap_conditionally_and_fetches_the_new_item(
    polled: Polled,
) -> None:
    hits = [h for h in polled.second if h.target != "/robots.txt"]
    by_target = {h.target: h for h in hits}
    assert by_target[FEED_PATH].header("If-None-Match") == '"v1"'
    assert by_target[FEED_PATH].status == 200
    assert by_target[SITEMAP].header("If-None-Match") == '"s1"'
    assert by_target[SITEMAP].status == 304
    assert by_target[SITEMAP_CHANGED].header("If-None-Match") == '"p1"'
    assert by_target[SITEMAP_CHANGED].status == 200
    # The new item first, then the page the sitemap says changed; no other page was due.
    feeds = (FEED_PATH, SITEMAP, SITEMAP_CHANGED, JSON_FEED, MOVED_TO, GONE_FEED)
    pages = [h.target for h in hits if h.target not in feeds]
    assert pages == [NEW_ITEM, CHANGED_PAGE]
    assert stored(polled.db_url)[f"http://{N}{NEW_ITEM}"] == "HTML"
    assert int(polled.runs[1].stats.get("govsi/revisit/sitemap_lastmod", 0)) == 1  # type: ignore[call-overload]


def test_delays_hold_in_both_runs(polled: Polled) -> None:
    for hits in (polled.first, polled.second):
        times = sorted(h.time for h in hits)
        assert min((b - a for a, b in pairwise(times)), default=DELAY) >= DELAY
