"""Keys across definitions of the main text: a crawldb of an earlier version keeps working.
Near copies it stored without their content go back to the frontier (migration 0016); its
keys are made again by the current definition (``govsi.copies.rekey``)."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy import Engine, text

from govsi.copies.index import unpack
from govsi.copies.rekey import rekey, stale
from govsi.dedup.signature import KEY_VERSION, copy_key, exact_key, lsh_params, signature
from govsi.store import database
from govsi.web.extract import cut_markup
from testkit.crawldb import T, q
from tests.support.govpages import NEWS_1, NEWS_2, semantic

BANDS, ROWS = lsh_params(0.75, 128)
MEASURES = {"max_tags": 250_000, "num_perm": 128, "shingle_size": 5, "bands": BANDS, "rows": ROWS}


def upgrade_to(engine: Engine, revision: str) -> None:
    cfg = Config()
    cfg.set_main_option("script_location", str(database.migrations_dir()))
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, revision)


def add_page(engine: Engine, pid: int, page_type: str, key: str | None, html: str | None = None,
             duplicate_of: int | None = None) -> None:  # fmt: skip
    with engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO page (id, page_type_code, url, html_content, http_status_code, "
                "accessed_time, depth, content_hash, duplicate_of) VALUES (:id, :type, :url, "
                ":html, 200, :t, 1, :key, :dup)"
            ),
            {"id": pid, "type": page_type, "url": f"https://a.gov.si/{pid}", "html": html,
             "t": T, "key": key, "dup": duplicate_of},
        )  # fmt: skip
        if duplicate_of is not None:
            link = f"INSERT INTO link (from_page, to_page) VALUES ({pid}, {duplicate_of})"
            conn.execute(text(link))


def test_near_copies_stored_without_content_are_fetched_again(tmp_path: Path) -> None:
    engine = database.make_engine(f"sqlite:///{tmp_path / 'old.sqlite3'}")
    upgrade_to(engine, "0015")
    add_page(engine, 1, "HTML", "k1", semantic(NEWS_1))
    add_page(engine, 2, "DUPLICATE", "k1", duplicate_of=1)  # an exact copy: the same key
    add_page(engine, 3, "DUPLICATE", "k3", duplicate_of=1)  # a near copy: its content lost
    add_page(engine, 4, "DUPLICATE", None, duplicate_of=1)  # key unknown: maybe lost
    database.migrate(engine)
    rows = q(engine, "SELECT id, page_type_code, duplicate_of, accessed_time, content_hash "
                     "FROM page ORDER BY id")  # fmt: skip
    assert [r[:3] for r in rows] == [(1, "HTML", None), (2, "DUPLICATE", 1),
                                     (3, "FRONTIER", None), (4, "FRONTIER", None)]  # fmt: skip
    assert rows[2][3:] == rows[3][3:] == (None, None)  # not fetched, as far as a crawl knows
    assert q(engine, "SELECT from_page, to_page FROM link") == [(2, 1)]
    engine.dispose()


def test_stored_keys_are_made_again_by_the_current_definition(engine: Engine) -> None:
    page, other = semantic(NEWS_1), semantic(NEWS_2)
    add_page(engine, 1, "HTML", "old-key-1", page)
    add_page(engine, 2, "DUPLICATE", "old-key-1", duplicate_of=1)
    add_page(engine, 3, "HTML", "old-key-3", other)
    add_page(engine, 4, "HTML", "old-key-4", None)  # no content kept: nothing to key
    with engine.connect() as conn:
        assert stale(conn) == 4
    assert rekey(engine, **MEASURES) == 4
    rows = q(engine, "SELECT id, content_hash, key_version, text_hash, minhash FROM page "
                     "ORDER BY id")  # fmt: skip
    assert [r[:4] for r in rows] == [
        (1, exact_key(page), KEY_VERSION, copy_key(page)),
        (2, exact_key(page), KEY_VERSION, copy_key(page)),
        (3, exact_key(other), KEY_VERSION, copy_key(other)), (4, None, KEY_VERSION, None),
    ]  # fmt: skip
    sig = signature(page)
    assert sig is not None and unpack(rows[0][4], 128).jaccard(sig) == 1.0
    lsh = q(engine, "SELECT page_id, count(*) FROM page_lsh GROUP BY page_id ORDER BY page_id")
    assert lsh == [(1, BANDS), (3, BANDS)]
    # Done once: a later start finds nothing stale.
    assert rekey(engine, **MEASURES) == 0


def test_a_page_is_keyed_again_as_the_crawl_reads_it(engine: Engine) -> None:
    # Cut at MAX_PARSE_TAGS as a fetch is: the keys a fetch of the same page would make.
    page = "<html><body><main>" + "".join(f"<p>Odstavek {i} besedila.</p>" for i in range(200))
    add_page(engine, 1, "HTML", "old-key", page)
    assert rekey(engine, **{**MEASURES, "max_tags": 20}) == 1
    kept, cut = cut_markup(page, 20)
    assert cut > 0
    assert q(engine, "SELECT content_hash FROM page") == [(exact_key(kept),)]
