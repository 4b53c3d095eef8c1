"""Copies across processes: two crawlers sharing one crawldb, each checking a page before
the other's is written, still end with one original and its DUPLICATEs."""

from __future__ import annotations

import threading
import time
from datetime import datetime
from functools import partial

import pytest
from sqlalchemy import Connection, Engine, text

from govsi.copies.index import DuplicateIndex
from govsi.items import FetchedPage, Revisit
from govsi.store import database
from govsi.store.originals import FindOriginals, replaces_original, stored_originals
from govsi.store.writer import CrawlWriter
from testkit.pgcluster import PgCluster
from tests.support.govpages import NEWS_1, NEWS_2, semantic

T = datetime(2026, 11, 23, 12, 0, 0)
THRESHOLD = 0.75


def index(engine: Engine) -> DuplicateIndex:
    return DuplicateIndex(engine, threshold=THRESHOLD, num_perm=128, shingle_size=5)


FIND_ORIGINALS = partial(stored_originals, threshold=THRESHOLD)


def writer(engine: Engine, find_originals: FindOriginals | None = FIND_ORIGINALS) -> CrawlWriter:
    return CrawlWriter(engine, find_originals=find_originals)


def fetched(idx: DuplicateIndex, url: str, html: str) -> FetchedPage:
    """The page as the spider yields it after asking ``idx``."""
    verdict = idx.check(url, html)
    page = FetchedPage(url, 1, "HTML", T, 200, content_type="text/html", html_content=html)
    page.content_hash = verdict.content_hash
    if verdict.original:
        page.page_type, page.duplicate_of, page.html_content = "DUPLICATE", verdict.original, None
    else:
        page.minhash, page.band_keys = verdict.minhash, verdict.band_keys
        page.near_duplicate_of, page.similarity = verdict.near, verdict.similarity
        page.text_hash = verdict.text_hash
        page.links = [url + "samo-tu/"]
    return page


def near_flags(engine: Engine) -> dict[str, tuple[str | None, float | None]]:
    """url -> (the page it resembles, their similarity), for flagged pages."""
    sql = """
        SELECT p.url, o.url, p.similarity FROM page p JOIN page o ON o.id = p.near_duplicate_of
    """
    with engine.connect() as conn:
        return {r[0]: (r[1], r[2]) for r in conn.execute(text(sql))}


def rows(engine: Engine) -> dict[str, tuple]:
    """url -> (type, has html, original's url, outgoing links, band keys)."""
    sql = """
        SELECT p.url, p.page_type_code, p.html_content IS NOT NULL, o.url,
               (SELECT count(*) FROM link l WHERE l.from_page = p.id),
               (SELECT count(*) FROM page_lsh b WHERE b.page_id = p.id)
        FROM page p LEFT JOIN page o ON o.id = p.duplicate_of
        WHERE p.page_type_code != 'FRONTIER'
    """
    with engine.connect() as conn:
        return {r[0]: tuple(r[1:]) for r in conn.execute(text(sql))}


@pytest.mark.parametrize(
    ("html_a", "html_b"),
    [
        (semantic(NEWS_1), semantic(NEWS_1)),  # exact: the same content under another URL
        (semantic(NEWS_1), semantic(NEWS_1 + " Posodobljeno ob 14.02.")),  # near
    ],
    ids=["exact", "near"],
)
def test_a_copy_checked_before_the_original_was_written_is_settled_when_written(
    engine: Engine, html_a: str, html_b: str
) -> None:
    first, second = index(engine), index(engine)  # two processes: neither sees the other
    a = fetched(first, "https://a.gov.si/novica/", html_a)
    b = fetched(second, "https://b.gov.si/novica/", html_b)
    assert a.page_type == b.page_type == "HTML"
    assert b.near_duplicate_of is None
    assert writer(engine).write([a]) and writer(engine).write([b])
    stored = rows(engine)
    assert stored["https://a.gov.si/novica/"] == ("HTML", True, None, 1, 21)
    if html_a == html_b:
        # No content, no links or band keys of its own: one link, to the original.
        assert stored["https://b.gov.si/novica/"] == (
            "DUPLICATE", False, "https://a.gov.si/novica/", 1, 0,
        )  # fmt: skip
        assert "https://b.gov.si/novica/samo-tu/" not in set(urls(engine))
        assert near_flags(engine) == {}
    else:
        # A near copy is a page of its own: kept whole, links and band keys too; flagged.
        assert stored["https://b.gov.si/novica/"] == ("HTML", True, None, 1, 21)
        assert "https://b.gov.si/novica/samo-tu/" in set(urls(engine))
        (original, score), = near_flags(engine).values()
        assert original == "https://a.gov.si/novica/" and 0.75 <= score < 1


def urls(engine: Engine) -> list[str]:
    with engine.connect() as conn:
        return [r[0] for r in conn.execute(text("SELECT url FROM page"))]


def test_different_pages_both_stay_originals(engine: Engine) -> None:
    first, second = index(engine), index(engine)
    a = fetched(first, "https://a.gov.si/1/", semantic(NEWS_1))
    b = fetched(second, "https://a.gov.si/2/", semantic(NEWS_2))
    assert writer(engine).write([a]) and writer(engine).write([b])
    assert {v[0] for v in rows(engine).values()} == {"HTML"}


def test_refetching_the_same_url_is_not_a_copy_of_itself(engine: Engine) -> None:
    page = fetched(index(engine), "https://a.gov.si/1/", semantic(NEWS_1))
    assert writer(engine).write([page]) and writer(engine).write([page])
    assert rows(engine)["https://a.gov.si/1/"][:3] == ("HTML", True, None)


def test_copies_of_a_page_that_turned_out_a_copy_point_at_the_first_original(
    engine: Engine,
) -> None:
    first, second = index(engine), index(engine)
    a = fetched(first, "https://a.gov.si/n/", semantic(NEWS_1))
    b = fetched(second, "https://b.gov.si/n/", semantic(NEWS_1))
    c = fetched(second, "https://b.gov.si/n/?print=1", semantic(NEWS_1))  # b's copy, in memory
    d = fetched(second, "https://b.gov.si/n/?lang=sl", semantic(NEWS_1))
    assert c.duplicate_of == d.duplicate_of == "https://b.gov.si/n/"
    assert writer(engine).write([a])
    late = writer(engine)
    assert late.write([b, c])  # in the same batch as b
    assert late.write([d])  # after b was written
    stored = rows(engine)
    for copy in (
        "https://b.gov.si/n/",
        "https://b.gov.si/n/?print=1",
        "https://b.gov.si/n/?lang=sl",
    ):
        assert stored[copy][:3] == ("DUPLICATE", False, "https://a.gov.si/n/")


def test_without_duplicate_detection_the_writer_stores_what_it_is_given(engine: Engine) -> None:
    first, second = index(engine), index(engine)
    a = fetched(first, "https://a.gov.si/n/", semantic(NEWS_1))
    b = fetched(second, "https://b.gov.si/n/", semantic(NEWS_1))
    assert writer(engine, None).write([a]) and writer(engine, None).write([b])
    assert {v[0] for v in rows(engine).values()} == {"HTML"}


def test_two_processes_writing_copies_at_the_same_moment_keep_one_original(
    pg_cluster: PgCluster,
) -> None:
    # PostgreSQL only: an SQLite crawldb has one crawler process.
    engine = database.make_engine(pg_cluster.create_database("dupindex_race"))
    database.migrate(engine)
    pages = [fetched(index(engine), f"https://{host}.gov.si/n/", semantic(NEWS_1)) for host in "ab"]
    assert all(p.page_type == "HTML" for p in pages)
    start = threading.Barrier(2)

    def slow_check(conn: Connection, batch: list[FetchedPage]) -> dict[str, str]:
        # Both processes check at once; the other's commit lands while this one waits.
        found = stored_originals(conn, batch, threshold=THRESHOLD)
        time.sleep(0.5)
        return found

    results: list[bool] = []

    def write(page: FetchedPage) -> None:
        w = writer(engine, slow_check)
        start.wait()
        results.append(w.write([page]))

    threads = [threading.Thread(target=write, args=(p,)) for p in pages]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [True, True]
    kinds = sorted(v[0] for v in rows(engine).values())
    assert kinds == ["DUPLICATE", "HTML"]


def test_an_index_started_later_finds_the_originals_stored_before(engine: Engine) -> None:
    # As after a restart, or in another process: nothing in memory, all from crawldb.
    a = fetched(index(engine), "https://a.gov.si/n/", semantic(NEWS_1))
    assert writer(engine).write([a])
    later = index(engine)
    exact = later.check("https://b.gov.si/n/", semantic(NEWS_1))
    near = later.check("https://b.gov.si/m/", semantic(NEWS_1 + " Posodobljeno ob 14.02."))
    other = later.check("https://b.gov.si/o/", semantic(NEWS_2))
    itself = later.check("https://a.gov.si/n/", semantic(NEWS_1))  # fetched again
    assert (exact.original, near.original) == ("https://a.gov.si/n/", None)
    assert (near.near, other.near) == ("https://a.gov.si/n/", None)
    # Fetched again, the page may resemble its own near copy, checked since: never itself.
    assert itself.near in (None, "https://b.gov.si/m/")
    assert near.similarity is not None and 0.75 <= near.similarity < 1
    assert other.original is None and itself.original is None
    assert later.lookup_failures == 0
    later.close()


def test_a_page_a_revisit_replaces_is_no_original_of_its_old_content(engine: Engine) -> None:
    # /staro was stored; a revisit finds it moved to /novo (a 301, not written yet), and
    # /novo holds what /staro held: it is the original now, not /staro's copy.
    old = fetched(index(engine), "https://a.gov.si/staro", semantic(NEWS_1))
    assert writer(engine).write([old])
    later = index(engine)
    later.retract("https://a.gov.si/staro")
    moved = later.check("https://a.gov.si/novo", semantic(NEWS_1))
    assert moved.original is None
    # ... and copies of it are its copies from then on; other stored originals still count.
    assert later.check("https://b.gov.si/kopija", semantic(NEWS_1)).original == (
        "https://a.gov.si/novo"
    )
    other = fetched(index(engine), "https://a.gov.si/druga", semantic(NEWS_2))
    assert writer(engine).write([other])
    assert later.check("https://c.gov.si/x", semantic(NEWS_2)).original == "https://a.gov.si/druga"
    later.close()


def test_a_revisit_stays_the_original_of_a_copy_fetched_before_it_was_decided(
    engine: Engine,
) -> None:
    # /novica was stored as an original. In the next round a new page with its content is
    # fetched, then /novica's revisit; the copy's lookup answers only after the revisit
    # came in. The copy is still /novica's (the original does not flip to the newer page),
    # and /novica, decided next, is an original again.
    import asyncio

    from govsi.copies.check import Copies
    from govsi.store.config import DuplicateConfig

    first = fetched(index(engine), "https://a.gov.si/novica", semantic(NEWS_1))
    assert writer(engine).write([first])

    class Gated(Copies):
        gates: dict[str, asyncio.Event] = {}

        async def _rows(self, asked):  # type: ignore[no-untyped-def]
            await self.gates.setdefault(asked.url, asyncio.Event()).wait()
            assert self.index is not None
            return self.index.lookup(asked)

    async def round_two() -> tuple[object, object]:
        copies = Gated(DuplicateConfig(True, THRESHOLD, 128, 5), lambda *a: None)
        copies.open(engine)
        copy = asyncio.create_task(
            copies.verdict("https://b.gov.si/nova", semantic(NEWS_1), None, None)
        )

        async def revisited() -> object:
            # As HtmlPages does: its stored version retracted as its own verdict is made.
            decided = await copies.verdict("https://a.gov.si/novica", semantic(NEWS_1), None, None)
            copies.retract("https://a.gov.si/novica")
            return decided

        revisit = asyncio.create_task(revisited())
        await asyncio.sleep(0)
        for url in ("https://b.gov.si/nova", "https://a.gov.si/novica"):  # in the order asked
            Gated.gates.setdefault(url, asyncio.Event()).set()
            await asyncio.sleep(0.01)
        return await copy, await revisit

    copy, revisit = asyncio.run(round_two())
    assert copy.original == "https://a.gov.si/novica"  # type: ignore[attr-defined]
    assert revisit.original is None  # type: ignore[attr-defined]


def test_a_page_moved_in_the_batch_that_rewrites_its_old_address_is_an_original(
    engine: Engine,
) -> None:
    # Another process checked /novo before it knew /staro had moved; the batch writes
    # both: /staro's committed row is stale, so /novo stays an original.
    old = fetched(index(engine), "https://a.gov.si/staro", semantic(NEWS_1))
    assert writer(engine).write([old])
    was = Revisit(content_hash=old.content_hash, page_type="HTML", http_status_code=200)
    moved = FetchedPage("https://a.gov.si/staro", 1, "HTML", T, 301, revisit=was)
    moved.links = ["https://a.gov.si/novo"]
    fresh = index(engine)
    fresh.retract("https://a.gov.si/staro")
    new = fetched(fresh, "https://a.gov.si/novo", semantic(NEWS_1))
    # A failed revisit keeps /staro's copy: that would still be the original.
    failed = FetchedPage("https://a.gov.si/staro", 1, "ERROR", T, fetch_error="x", revisit=was)
    assert not replaces_original(failed) and replaces_original(moved)
    assert writer(engine).write([moved, new])
    stored = rows(engine)
    assert stored["https://a.gov.si/novo"][:3] == ("HTML", True, None)
    fresh.close()


def test_the_sqlite_lookup_walks_band_keys_not_every_html_page(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # Without statistics SQLite once chose idx_page_page_type_code and read every HTML page
    # per lookup: five times slower crawls. Each part must be a range read of its index.
    from govsi.store.candidates import sqlite_candidates

    engine = database.make_engine(f"sqlite:///{tmp_path / 'plan.sqlite3'}")
    database.migrate(engine)
    sql = sqlite_candidates(1, 1, 3)
    with engine.connect() as conn:
        asked = conn.exec_driver_sql("EXPLAIN QUERY PLAN " + sql, ("x", "y", "x", 1, 2, 3))
        plan = [row[3] for row in asked]
    exact = "USING INDEX idx_page_copy_keys (content_hash=? AND page_type_code=? AND text_hash=?)"
    assert sum(exact in step for step in plan) == 1
    assert sum("idx_page_copy_keys (content_hash=? AND page_type_code=?)" in s for s in plan) == 1
    bands = [s for s in plan if "page_lsh USING COVERING INDEX" in s and "(band_key=?)" in s]
    assert len(bands) == 3
    assert sum("SEARCH p USING INTEGER PRIMARY KEY" in step for step in plan) == 3
    # No walk over a table, no sort of everything found before the limit applies.
    assert not [s for s in plan if s.startswith("SCAN page") or "TEMP B-TREE" in s], plan
    assert not [s for s in plan if "idx_page_page_type_code" in s], plan
    engine.dispose()


def test_a_lookup_returns_originals_not_every_earlier_copy(engine: Engine) -> None:
    # Copies share the original's content hash; a much-copied page must not make every
    # later lookup read all of them.
    idx = index(engine)
    pages = [fetched(idx, f"https://a.gov.si/{i}/", semantic(NEWS_1)) for i in range(4)]
    assert [p.page_type for p in pages] == ["HTML"] + ["DUPLICATE"] * 3
    assert writer(engine).write(pages)
    later = index(engine)
    question = later.prepare("https://b.gov.si/n/", semantic(NEWS_1))
    rows = later.lookup(question)
    # By both keys and by the exact key alone: the original, none of its DUPLICATEs.
    assert {(r[0], r[2], r[4]) for r in rows if r[0] == 0} == {(0, "https://a.gov.si/0/", "HTML")}
    later.close()


def test_a_lookup_without_band_keys_still_finds_the_exact_copy(engine: Engine) -> None:
    # SQLite's lookup goes straight to its driver, one part for each band key there is:
    # none is a valid query that asks no band.
    first = index(engine)
    page = fetched(first, "https://a.gov.si/1/", semantic(NEWS_1))
    assert writer(engine).write([page])
    asked = index(engine).prepare("https://b.gov.si/1/", semantic(NEWS_1))
    bare = type(asked)(asked.url, asked.key, None, [], asked.copy)
    # Found by both keys, and by the exact key alone.
    found = {(r.kind, r.url, r.page_type_code, r.text_hash) for r in index(engine).lookup(bare)}
    assert found == {(0, "https://a.gov.si/1/", "HTML", asked.copy)}
    # With its band keys, the stored original comes back by those too.
    assert {(r[0], r[2]) for r in index(engine).lookup(asked)} == {
        (0, "https://a.gov.si/1/"),
        (1, "https://a.gov.si/1/"),
    }


def titled(title: str, content: str, extra: str = "") -> str:
    return semantic(content).replace("<html>", f"<html><head><title>{title}</title></head>") + extra


@pytest.mark.parametrize(
    ("second", "kind"),
    [
        # All a reader sees is the same, whatever the markup: an exact copy.
        (titled("Dejavnost 12421", NEWS_1, "<!-- x --><a href='/skrito'></a>"), "DUPLICATE"),
        # The same main text, told apart by the title (two activities of one template), by
        # what is around it (a print view), or by a count in the template: pages of their own.
        (titled("Dejavnost 12946", NEWS_1), "near"),
        (f"<html><head><title>Dejavnost 12421</title></head><body><main><h2>Novica</h2>"
         f"<p>{NEWS_1}</p></main></body></html>", "near"),
        (titled("Dejavnost 12421", NEWS_1).replace("Objavljeno", "30 najdenih, objavljeno"),
         "near"),
    ],
    ids=["same-visible-text", "other-title", "print-view", "other-template-text"],
)  # fmt: skip
def test_an_exact_copy_shows_a_reader_the_same_title_and_text(
    engine: Engine, second: str, kind: str
) -> None:
    idx = index(engine)
    first = fetched(idx, "https://a.gov.si/1/", titled("Dejavnost 12421", NEWS_1))
    assert writer(engine).write([first])
    for checker in (idx, index(engine)):  # from memory, and from crawldb alone
        verdict = checker.check("https://a.gov.si/2/", second)
        if kind == "DUPLICATE":
            assert verdict.original == "https://a.gov.si/1/"
        else:
            assert verdict.original is None
            assert (verdict.near, verdict.similarity) == ("https://a.gov.si/1/", 1.0)
            assert verdict.text_hash is not None and verdict.minhash is not None
