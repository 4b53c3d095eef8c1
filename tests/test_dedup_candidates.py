"""A duplicate lookup brings back a bounded number of stored pages, however large the
cluster of copies it falls in (issue 50), and still finds what a user relies on: an exact
copy's original, and a near copy's resemblance to one of the cluster."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from sqlalchemy import Engine, text

from govsi.store import database
from govsi.store.candidates import BY_BAND, BY_KEY, CANDIDATES_PER_BAND, SQLITE_PARTS, candidates
from govsi.store.originals import stored_originals
from testkit.pgcluster import PgCluster
from tests.support.govpages import NEWS_1, NEWS_2, semantic
from tests.test_dedup_index import THRESHOLD, fetched, index, titled, writer

NEAR = 60  # near copies of NEWS_1
SAME_TEXT = 12  # pages with NEWS_2 as main text, each with a title of its own


def near_copy(i: int) -> str:
    return semantic(NEWS_1 + f" Posodobljeno ob 14.{i:02d}.")


@dataclass
class Cluster:
    engine: Engine
    near: set[str]  # the near copies' URLs
    same_text: set[str]  # the pages with NEWS_2's main text
    last: tuple[str, str]  # the same-text page stored last and last by its copy key: url, html


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def cluster(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Cluster]:
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path_factory.mktemp('candidates') / 'crawldb.sqlite3'}"
    else:
        pg: PgCluster = request.getfixturevalue("pg_cluster")
        url = pg.create_database("candidates")
    engine = database.make_engine(url)
    database.migrate(engine)
    idx = index(engine)
    near = [fetched(idx, f"https://a.gov.si/{i}/", near_copy(i)) for i in range(NEAR)]
    # Stored in the order of their copy keys, so the last one is last whichever order the
    # database reads them in (by id, or by the index on the keys).
    titles = {f"https://b.gov.si/{i}/": titled(f"Dejavnost {i}", NEWS_2) for i in range(SAME_TEXT)}
    same = sorted(
        (fetched(idx, u, html) for u, html in titles.items()), key=lambda p: p.text_hash or ""
    )
    assert [p.page_type for p in near + same] == ["HTML"] * (NEAR + SAME_TEXT)
    assert (
        len({p.content_hash for p in same}) == 1 and len({p.text_hash for p in same}) == SAME_TEXT
    )
    assert writer(engine).write(near) and writer(engine).write(same)
    idx.close()
    yield Cluster(
        engine, {p.url for p in near}, {p.url for p in same}, (same[-1].url, titles[same[-1].url])
    )
    engine.dispose()


def shared_bands(engine: Engine) -> Counter[int]:
    """Stored pages per band key."""
    with engine.connect() as conn:
        rows = conn.execute(text("SELECT band_key, count(*) FROM page_lsh GROUP BY band_key"))
        return Counter(dict(rows.all()))


def test_a_lookup_returns_at_most_a_few_pages_per_key(cluster: Cluster) -> None:
    # The cluster shares band keys: most of its 60 pages under some (so a bound is needed).
    assert shared_bands(cluster.engine).most_common(1)[0][1] >= NEAR // 2
    later = index(cluster.engine)
    rows = later.lookup(later.prepare("https://c.gov.si/n/", near_copy(99)))
    per_band = Counter(r.band_key for r in rows if r.kind == BY_BAND)
    assert per_band and max(per_band.values()) <= CANDIDATES_PER_BAND
    assert len(rows) <= 2 * CANDIDATES_PER_BAND + 21 * CANDIDATES_PER_BAND
    # 12 stored pages share NEWS_2's main text: at most 8 of them come back by that key.
    asked = later.prepare("https://c.gov.si/m/", titled("Druga dejavnost", NEWS_2))
    same = {r.url for r in later.lookup(asked) if r.kind == BY_KEY}
    assert same and same <= cluster.same_text and len(same) <= CANDIDATES_PER_BAND
    later.close()


def test_a_new_near_copy_is_flagged_as_resembling_a_member_of_the_cluster(cluster: Cluster) -> None:
    later = index(cluster.engine)  # nothing in memory: all from crawldb
    verdict = later.check("https://c.gov.si/n/", near_copy(99))
    assert verdict.original is None
    assert verdict.near in cluster.near
    assert verdict.similarity is not None and verdict.similarity >= THRESHOLD
    # The same text under another title resembles one of its cluster wholly.
    other = later.check("https://c.gov.si/m/", titled("Druga dejavnost", NEWS_2))
    assert (other.original, other.similarity) == (None, 1.0) and other.near in cluster.same_text
    later.close()


def test_an_exact_copy_is_found_however_many_pages_share_its_main_text(cluster: Cluster) -> None:
    url, html = cluster.last
    later = index(cluster.engine)
    assert later.check("https://c.gov.si/kopija/", html).original == url
    later.close()


def test_the_writers_recheck_finds_the_same_in_a_bounded_read(
    cluster: Cluster, tmp_path_factory: pytest.TempPathFactory
) -> None:
    # Pages another process checked before the cluster was written: it found nothing.
    empty = database.make_engine(
        f"sqlite:///{tmp_path_factory.mktemp('other') / 'crawldb.sqlite3'}"
    )
    database.migrate(empty)
    other = index(empty)
    url, html = cluster.last
    exact = fetched(other, "https://c.gov.si/kopija/", html)
    near = fetched(other, "https://c.gov.si/n/", near_copy(99))
    assert exact.page_type == near.page_type == "HTML" and near.near_duplicate_of is None
    other.close()
    empty.dispose()
    with cluster.engine.begin() as conn:
        found = stored_originals(conn, [exact, near], threshold=THRESHOLD)
        # SQLite's statements are cut at SQLITE_PARTS parts: band keys past the first cut
        # are still asked.
        many = list(range(1, SQLITE_PARTS + 1)) + near.band_keys
        rows = candidates(conn, bands=many)
    assert found[exact.url] == (url, None)
    original, score = found[near.url]
    assert original in cluster.near and score is not None and score >= THRESHOLD
    per_band = Counter(r.band_key for r in rows)
    assert set(per_band) <= set(near.band_keys) and max(per_band.values()) == CANDIDATES_PER_BAND


def test_memory_keeps_a_few_pages_per_band_and_still_flags_near_copies(tmp_path) -> None:  # type: ignore[no-untyped-def]
    engine = database.make_engine(f"sqlite:///{tmp_path / 'crawldb.sqlite3'}")
    database.migrate(engine)
    idx = index(engine)  # nothing is written: every answer comes from memory
    for i in range(NEAR):
        assert idx.check(f"https://a.gov.si/{i}/", near_copy(i)).original is None
    lists = idx._recent_bands.values()
    assert max(len(entries) for entries in lists) == CANDIDATES_PER_BAND
    verdict = idx.check("https://c.gov.si/n/", near_copy(99))
    assert verdict.near is not None and verdict.near.startswith("https://a.gov.si/")
    # A page whose band lists were full is still remembered by its keys: its copy is found.
    assert idx.check("https://c.gov.si/kopija/", near_copy(NEAR - 1)).original == (
        f"https://a.gov.si/{NEAR - 1}/"
    )
    idx.close()
    engine.dispose()
