"""The Changes page and a diff page (``scrapy serve``'s) in a real browser (Chromium
through Playwright): the filter form narrows the list, a change opens its diff with the
added and removed words marked, inline and side by side; hostile titles, URLs and texts
run nothing. Screenshots go to tests/artifacts (GOVSI_TEST_ARTIFACTS) and the test's
folder."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from govsi.changes.pages import ChangesSite
from govsi.search.config import SearchConfig
from govsi.search.searcher import Ranking
from govsi.search.serve import SearchSite
from govsi.store.database import make_engine, migrate
from testkit.crawl import ROOT
from testkit.serving import chromium, running, shot
from tests.support import changesdb

pytestmark = pytest.mark.e2e

ARTIFACTS = Path(os.environ.get("GOVSI_TEST_ARTIFACTS", ROOT / "tests" / "artifacts"))


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, changesdb.Changes]]:
    engine = make_engine(f"sqlite:///{tmp_path / 'crawldb.sqlite3'}")
    migrate(engine)
    ids = changesdb.build(engine)
    search = SearchSite(engine, SearchConfig(tmp_path / "index", False, Ranking(), 1, 1_000_000),
                        links=(("Spremembe", "/changes"),))  # fmt: skip
    changes = ChangesSite(engine, now=lambda: changesdb.NOW)
    with running(search, routes=(changes.route,)) as url:
        yield url, ids
    engine.dispose()


def test_the_changes_page_and_a_diff_in_a_browser(
    served: tuple[str, changesdb.Changes], tmp_path: Path
) -> None:
    url, ids = served
    with chromium() as browser:
        page = browser.new_page()
        # From the search page's header to the Changes page: every change, newest first.
        page.goto(url + "/")
        page.click("header nav a:text('Spremembe')")
        page.wait_for_selector(".change")
        assert page.locator(".change").count() == 50
        first = page.locator(".change h3").first.inner_text()
        # The hostile title is text on the page, its controls made visible; none of
        # its script or handlers ran.
        assert first.startswith("<script>document.title='pwned'</script>\\x1b]52;")
        assert page.title() == "Spremembe · govsi"
        shot(page, tmp_path / "changes-page.png", ARTIFACTS)
        # The form narrows: search words and a kind.
        page.fill("input[name=q]", "uredba")
        page.select_option("select[name=kind]", "changed")
        page.click("header button")
        page.wait_for_selector(".change")
        titles = page.locator(".change h3").all_inner_texts()
        assert titles[-1] == "Uredba o občinah" and len(titles) == 2
        assert page.locator(".change .kind").all_inner_texts() == ["spremenjena"] * 2
        assert page.input_value("input[name=q]") == "uredba"
        # The feed of this filter.
        assert page.get_attribute("a.feed", "href") == "/changes.atom?kind=changed&q=uredba"
        shot(page, tmp_path / "changes-filtered.png", ARTIFACTS)
        # A change's diff: the added and removed words marked.
        page.click(".change h3 a:text('Uredba o občinah')")
        page.wait_for_selector(".diff")
        added = [t.strip() for t in page.locator(".diff ins").all_inner_texts()]
        assert added[0] == "60" and "Dodan je nov člen o javnih naročilih" in added[1]
        assert [t.strip() for t in page.locator(".diff del").all_inner_texts()] == ["30"]
        shot(page, tmp_path / "change-diff.png", ARTIFACTS)
        page.click("text=vzporedno")
        page.wait_for_selector(".sides")
        assert "30" in page.locator(".diff.before del").first.inner_text()
        assert "60" in page.locator(".diff.after ins").first.inner_text()
        shot(page, tmp_path / "change-side-by-side.png", ARTIFACTS)
        # The hostile change: cut to the bound, said so; its markup shown, not made.
        page.goto(f"{url}/changes/{ids.hostile}")
        page.wait_for_selector(".diff")
        assert page.locator(".note.truncated").count() == 1
        assert "<img src=x" in page.locator(".diff").inner_text()
        assert page.locator(".diff img").count() == 0
        shot(page, tmp_path / "change-hostile.png", ARTIFACTS)
        assert page.title().startswith("spremenjena: <script>")
