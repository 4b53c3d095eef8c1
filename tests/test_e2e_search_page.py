"""The search page (``scrapy serve``'s) in a real browser (Chromium through Playwright):
results with marked words, facets, paging, the stored copy; a page title and a stored copy
full of script run none of it. Screenshots go to the test's folder (and SCREENSHOTS_DIR
when set, to be looked at)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine

from govsi.search.serve import SearchSite
from govsi.store.database import make_engine, migrate
from testkit.serving import chromium, running, shot
from tests.support import searchsite

pytestmark = pytest.mark.e2e


@pytest.fixture
def served(tmp_path: Path) -> Iterator[str]:
    engine: Engine = make_engine(f"sqlite:///{tmp_path / 'crawldb.sqlite3'}")
    migrate(engine)
    with running(SearchSite(engine, searchsite.build(engine, tmp_path / "index"))) as url:
        yield url
    engine.dispose()


def test_the_search_page_in_a_browser(served: str, tmp_path: Path) -> None:
    with chromium() as browser:
        page = browser.new_page()
        page.goto(served + "/")
        page.fill("input[name=q]", "obcina")
        page.press("input[name=q]", "Enter")
        page.wait_for_selector(".hit")
        shot(page, tmp_path / "search-results.png")
        assert page.locator(".hit").count() == 10
        assert page.locator(".hit mark").count() >= 10
        assert page.locator("mark").first.inner_text().lower().startswith("obč")
        kinds = page.locator(".facet-kind li").all_inner_texts()
        assert sorted(k.split()[0] for k in kinds) == ["HTML", "PDF"]
        assert page.locator(".facet-host li").count() == 2
        assert page.title() == "obcina · govsi search"
        page.click("text=naslednja")
        page.wait_for_selector("text=prejšnja")
        assert page.locator(".hit").count() == searchsite.PAGES - 10
        page.click(".facet-kind a:text('PDF')")
        page.wait_for_selector(".hit")
        assert page.locator(".hit .kind").all_inner_texts() == ["PDF"] * 5
        assert page.input_value("input[name=q]") == "obcina type:pdf"
        # The hostile title is text on the page; none of its script or handlers ran.
        page.goto(served + "/?q=" + "številka 0".replace(" ", "+"))
        page.wait_for_selector(".hit")
        shot(page, tmp_path / "hostile-title.png")
        assert searchsite.HOSTILE_TITLE in page.locator(".hit h3").all_inner_texts()
        assert page.title() == "številka 0 · govsi search"
        # The stored copy as crawled, its script not run (sandboxed).
        page.goto(served + "/?q=obcina+type%3Ahtml")
        page.click(".hit >> nth=0 >> text=shranjena kopija")
        page.wait_for_selector("text=Uredba o občinah")
        shot(page, tmp_path / "stored-copy.png")
        assert page.title() == "Kopija"
