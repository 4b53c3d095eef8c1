"""The search index (govsi.search.index, searcher, update, snippets): what a query finds
and in which order, filters and facets, snippets, and updates that read only what changed."""

from __future__ import annotations

import sqlite3
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import tantivy
from sqlalchemy import Engine

from govsi.items import FetchedPage, PageText
from govsi.search.analysis import ascii_term, term
from govsi.search.document import SearchDocument, domains
from govsi.search.index import SearchIndex
from govsi.search.searcher import Ranking, Searcher, kept_words
from govsi.search.snippets import TITLE, highlight, render, snippet
from govsi.search.update import update
from govsi.store.writer import CrawlWriter
from testkit.crawldb import T
from testkit.imports import loaded_after
from tests.support.oldindex import another_versions_index

G = "https://www.gov.si"


def doc(pid: int, title: str, text: str, host: str = "www.gov.si", kind: str = "HTML",
        date: datetime | None = None) -> SearchDocument:  # fmt: skip
    return SearchDocument(pid, f"https://{host}/{pid}", host, kind, title, text, "sl", date, 1, "m")


DOCS = [
    doc(1, "Javna naročila", "Vlada je sprejela uredbo o javnih naročilih za vse občine.",
        date=datetime(2025, 1, 5)),
    doc(2, "Potrdilo", "Potrdilo o stalnem prebivališču izda upravna enota.",
        "evem.gov.si", "PDF", datetime(2024, 3, 1)),
    doc(3, "Novice", "Ministrstvo za finance objavlja novice o davkih in javnih financah."),
    doc(4, "Občine", "Seznam vseh občin in njihovih naslovov.", "e-uprava.gov.si"),
    doc(5, "Arhiv", "Stara novica o občinah, ki omenja tudi javna naročila enkrat."),
]  # fmt: skip


@pytest.fixture
def index(tmp_path: Path) -> SearchIndex:
    ix = SearchIndex.open_for_update(tmp_path / "index")
    ix.write(DOCS, [])
    return ix


DEFAULT = Ranking()


def found(index: SearchIndex, query: str, ranking: Ranking = DEFAULT) -> list[int]:
    return [h.page_id for h in Searcher(index, ranking).search(query, limit=20).hits]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("občine", {1, 4, 5}),
        ("obcinah", {1, 4, 5}),  # no diacritics, another form
        ("obcina", {1, 4, 5}),  # no diacritics, a form no page has
        ("prebivalisce", {2}),
        ("OBČINO", {1, 4, 5}),
        ('"javna naročila"', {1, 5}),
        ('"naročila javna"', set()),  # a phrase keeps its order
        ("potrdilo prebivalisce", {2}),
        ("davek", {3}),
        ("in za o", set()),  # stop words alone ask nothing
        ("občine type:pdf", set()),
        ("host:evem.gov.si", {2}),
        ("site:gov.si type:pdf", {2}),
        ("naročila after:2025", {1}),
        ("naročila before:2024-12", set()),
        ("nič od tega", set()),
    ],
)
def test_what_a_query_finds(index: SearchIndex, query: str, expected: set[int]) -> None:
    assert set(found(index, query)) == expected


def test_every_word_must_match_unless_no_page_has_them_all(index: SearchIndex) -> None:
    s = Searcher(index)
    both = s.search("uredba občine")
    assert [h.page_id for h in both.hits] == [1] and not both.any_word
    some = s.search("uredba arhivirano")
    assert {h.page_id for h in some.hits} == {1} and some.any_word


def test_the_title_counts_more_and_the_link_prior_orders_equals(index: SearchIndex) -> None:
    # "novice" is in 3's title and text, in 5's text only.
    assert found(index, "novica")[0] == 3
    assert found(index, "javna naročila")[0] == 1
    plain = Ranking(title_boost=1.0, prior=0.0)
    index.set_inlinks({5: 1000})
    assert found(index, "javna naročila", Ranking(title_boost=1.0, prior=1.0))[0] == 5
    assert found(index, "javna naročila", plain)[0] == 1


def test_facets_count_every_match_by_host_and_type(index: SearchIndex) -> None:
    results = Searcher(index).search("občine", limit=1)
    assert results.total == 3 and len(results.hits) == 1
    assert dict(results.facets["host"]) == {"www.gov.si": 2, "e-uprava.gov.si": 1}
    assert dict(results.facets["kind"]) == {"HTML": 3}


def test_paging(index: SearchIndex) -> None:
    s = Searcher(index)
    everything = [h.page_id for h in s.search("občine", limit=10).hits]
    pages = [h.page_id for o in range(3) for h in s.search("občine", offset=o, limit=1).hits]
    assert pages == everything


def test_a_snippet_marks_the_words_of_the_query_as_written() -> None:
    text = "Uvod. " * 100 + "Uredba o javnih naročilih velja za vse občine. " + "Konec. " * 100
    pieces = snippet(text, frozenset({term("uredba"), term("obcinah")}),
                     frozenset({ascii_term("obcinah")}), width=80)  # fmt: skip
    shown = render(pieces, lambda t: f"[{t}]", lambda t: t)
    assert shown.startswith("…") and shown.endswith("…") and len(shown) < 120
    assert "[Uredba] o javnih naročilih velja za vse [občine]" in shown
    assert render(snippet("Kratko.", frozenset({"x"})), str, str) == "Kratko."


def test_a_title_is_shown_whole_with_the_words_asked_for_marked() -> None:
    wanted = frozenset({term("naročilo")})
    pieces = highlight("Javna  naročila\n2025", wanted, wanted_stems=frozenset({"narocil"}))
    assert render(pieces, lambda t: f"[{t}]", str) == "Javna [naročila] 2025"
    long = highlight("Naročila " * 100, wanted)
    assert long[-1] == ("…", False) and len(render(long, str, str)) <= TITLE + 1
    assert highlight("", wanted) == []


def test_domains() -> None:
    assert domains("www.Gov.si") == ["www.gov.si", "gov.si", "si"]


def page(url: str, text: str, when: datetime = T) -> FetchedPage:
    found_text = PageText("HTML", "ok", text, None, "T", "sl")
    return FetchedPage(url, 1, "HTML", when, 200, html_content=f"<p>{text}</p>",
                       content_hash=text, text=found_text)  # fmt: skip


def crawled(engine: Engine, n: int, text: str) -> None:
    """``n`` pages in crawldb, their texts ``text`` with ``{n}`` their number."""
    writer = CrawlWriter(engine)
    for i in range(n):
        writer.add(page(f"{G}/p{i}", text.format(n=i)))
    assert writer.flush()


def test_an_update_reads_only_what_changed(engine: Engine, tmp_path: Path) -> None:
    writer = CrawlWriter(engine)
    for item in (page(f"{G}/a", "Uredba o občinah"), page(f"{G}/b", "Javna naročila"),
                 page(f"{G}/c", "Davki")):  # fmt: skip
        writer.add(item)
    assert writer.flush()
    index = SearchIndex.open_for_update(tmp_path / "index")
    first = update(engine, index)
    assert (first.added, first.removed, first.unchanged) == (3, 0, 0)
    assert update(engine, index).added == 0
    # b changes, c is gone (a 404 now): one page read again, one dropped.
    later = T + timedelta(days=2)
    writer.add(page(f"{G}/b", "Razpis za nepovratna sredstva", later))
    writer.add(FetchedPage(f"{G}/c", 1, "HTML", later, 404, html_content="<p>Ni</p>"))
    assert writer.flush()
    second = update(engine, index)
    assert (second.added, second.removed, second.unchanged) == (1, 1, 1)
    assert found(index, "razpis") and not found(index, "naročila") and not found(index, "davek")
    assert found(index, "obcina")


def test_an_update_reads_a_pages_text_up_to_its_bound(engine: Engine, tmp_path: Path) -> None:
    # A crawldb written with a larger TEXT_MAX_CHARS, or by another tool: the index reads
    # as much as its own bound, whatever the row holds.
    crawled(engine, 1, "Uredba " + "x " * 10 + "občina")
    index = SearchIndex.open_for_update(tmp_path / "index")
    assert update(engine, index, text_chars=20).added == 1
    assert found(index, "uredba") and not found(index, "občina")
    later = SearchIndex.open_for_update(tmp_path / "whole")
    assert update(engine, later).added == 1 and found(later, "občina")


def test_a_run_of_letters_too_long_for_a_word_leaves_the_page_indexed(
    engine: Engine, tmp_path: Path
) -> None:
    # 133 letters with diacritics once made lemmagen3 raise, and every update failed on it.
    hostile = "ab" + "č" * 130 + "x"
    writer = CrawlWriter(engine)
    for i in range(2):
        item = page(f"{G}/p{i}", f"Uredba o občinah {i} {hostile}")
        item.content_hash = f"h{i}"  # the text is longer than a hash's column
        writer.add(item)
    assert writer.flush()
    index = SearchIndex.open_for_update(tmp_path / "index")
    assert update(engine, index).added == 2
    assert len(found(index, "občina")) == 2 and not found(index, hostile)


def test_an_update_analyses_in_a_pool_of_processes_as_in_this_one(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    crawled(engine, 30, "Uredba številka {n} o občinah in ministrstvih")
    monkeypatch.setattr("govsi.search.update.POOL_FROM", 1)
    # Batches of 7: each analysed while the one before it is written.
    monkeypatch.setattr("govsi.search.update.BATCH", 7)
    pooled = SearchIndex.open_for_update(tmp_path / "pooled")
    alone = SearchIndex.open_for_update(tmp_path / "alone")
    done: list[tuple[int, int]] = []
    assert update(engine, pooled, processes=2, progress=lambda *a: done.append(a)).added == 30
    assert update(engine, alone).added == 30
    assert done == [(7, 30), (14, 30), (21, 30), (28, 30), (30, 30)]

    def every(index: SearchIndex, query: str) -> set[int]:  # equal scores come in any order
        return {h.page_id for h in Searcher(index).search(query, limit=50).hits}

    for query in ("obcina", "ministrstvo", '"uredba številka 7"'):
        assert every(pooled, query) == every(alone, query) != set()
    assert Searcher(pooled).search("uredba").total == 30
    assert len(pooled.marks()) == 30
    pooled.close()
    reopened = SearchIndex.open_for_update(tmp_path / "pooled")  # every batch committed
    assert update(engine, reopened).added == 0 and found(reopened, '"uredba številka 29"')


def test_the_count_and_facets_cover_every_match_past_the_ranked_ones(tmp_path: Path) -> None:
    index = SearchIndex.open_for_update(tmp_path / "index")
    many = [doc(n, "Razpis", f"Razpis številka {n}.", "evem.gov.si" if n % 3 else "www.gov.si",
                "PDF" if n % 2 else "HTML") for n in range(1, 451)]  # fmt: skip
    index.write(many, [])
    results = Searcher(index).search("razpisi", offset=440, limit=20)
    assert results.total == 450 and len(results.hits) == 10
    assert dict(results.facets["host"]) == {"evem.gov.si": 300, "www.gov.si": 150}
    assert dict(results.facets["kind"]) == {"PDF": 225, "HTML": 225}


@pytest.mark.parametrize("phrase", ['"javnih naročilih"', '"javna narocila"', '"JAVNIH NAROCIL"'])
def test_a_phrase_is_found_in_its_other_forms_and_without_diacritics(
    index: SearchIndex, phrase: str
) -> None:
    assert set(found(index, phrase)) == {1, 5}


# Pages for queries of several words, each word asked of the stem field alone.
SEVERAL = [
    doc(11, "Ljudje in uredbe", "Besedilo brez drugih besed."),  # both words in the title only
    doc(12, "Novice", "S postopkom za ljudi se ukvarja uredba."),  # other forms of one lemma
    doc(13, "Uredba", "Samo uredba in nič drugega."),  # one of the words
    doc(14, "Seznam", "Uredba o postopku za občine."),
]


def fields_union(index: SearchIndex, query: str) -> set[int]:
    """The pages the union of each word's fields (``Searcher._unit``) finds for ``query``."""
    s = Searcher(index)
    units = [s._unit(kept) for kept in (kept_words([w]) for w in query.split()) if kept]
    searcher = index.searcher()
    hits = searcher.search(
        tantivy.Query.boolean_query([(tantivy.Occur.Must, u) for u in units]), 50
    )
    return set(searcher.fast_field_values("page_id", [address for _, address in hits.hits]))


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("človek uredba", {11, 12}),  # ljudje, ljudi: lemma človek
        ("ljudje uredbe", {11, 12}),
        ("postopek uredba", {12, 14}),  # postopkom, postopku
        ("postopkom obcine", {14}),
        ("uredba obcina", {1, 14}),
        ("javna narocila", {1, 5}),
        ("stalno prebivalisce potrdilo", {2}),
        ("uredba in za", {1, 11, 12, 13, 14}),  # one word left: not asked this way
    ],
)
def test_several_words_find_in_the_stem_field_what_the_union_of_fields_finds(
    tmp_path: Path, query: str, expected: set[int]
) -> None:
    index = SearchIndex.open_for_update(tmp_path / "index")
    index.write(DOCS + SEVERAL, [])
    assert set(found(index, query)) == fields_union(index, query) == expected


def test_in_several_words_the_title_weighs_more_than_the_body(tmp_path: Path) -> None:
    filler = " ".join(f"beseda{n}" for n in range(40))
    index = SearchIndex.open_for_update(tmp_path / "index")
    index.write([doc(22, "Novice", f"Uredba o občinah. {filler}"),
                 doc(21, "Uredba o občinah", f"{filler} besedilo")], [])  # fmt: skip
    assert found(index, "uredba občine") == [21, 22]


def test_a_phrase_never_runs_from_the_body_into_the_title(tmp_path: Path) -> None:
    index = SearchIndex.open_for_update(tmp_path / "index")
    index.write([doc(31, "Občina", "Sprejeta je uredba")], [])
    assert found(index, '"uredba občina"') == [] and found(index, "uredba občina") == [31]


def test_a_phrase_without_the_stem_ranking_still_walks_the_stems(index: SearchIndex) -> None:
    # The body's lemmas keep no positions: the variants measured without stems (bench)
    # find phrases as the default does.
    assert set(found(index, '"javna naročila"', Ranking(stems=False))) == {1, 5}


def test_an_index_of_another_layout_is_emptied_and_built_again(
    engine: Engine, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    folder = tmp_path / "index"
    folder.mkdir()
    (folder / "notes.txt").write_text("mine")
    another_versions_index(folder)
    crawl = CrawlWriter(engine)
    crawl.add(page(f"{G}/a", "Uredba o občinah"))
    assert crawl.flush()
    index = SearchIndex.open_for_update(folder)
    assert "another version's fields" in caplog.text
    assert index.marks() == {} and (folder / "notes.txt").read_text() == "mine"
    assert update(engine, index).added == 1 and found(index, "obcina")


def test_a_crawl_that_keeps_no_index_never_loads_the_engine() -> None:
    code = "import govsi.search.extension, govsi.spiders.govsi, govsi.pipelines"
    assert loaded_after(code, ["tantivy", "lemmagen3"]) == []


def test_a_stop_between_the_commit_and_its_record_leaves_no_copy_twice(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    crawled(engine, 5, "Razpis številka {n}")
    folder = tmp_path / "index"
    index = SearchIndex.open_for_update(folder)

    def stopped(*args: object) -> None:
        raise KeyboardInterrupt  # the process stops after Tantivy committed

    monkeypatch.setattr(SearchIndex, "_record", stopped)
    with pytest.raises(KeyboardInterrupt):
        update(engine, index)
    index.close()
    monkeypatch.undo()
    again = SearchIndex.open_for_update(folder)
    assert again.marks() == {}  # nothing recorded: everything is done again
    assert update(engine, again).added == 5
    results = Searcher(again).search("razpis", limit=20)
    assert results.total == 5 and len({h.page_id for h in results.hits}) == 5


def test_a_batch_that_fails_is_not_committed_by_the_next(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    index = SearchIndex.open_for_update(tmp_path / "index")
    made = SearchIndex._document

    def stopped(self: SearchIndex, page: Any) -> tantivy.Document:
        if page.doc.page_id == 2:
            raise KeyboardInterrupt  # the update stops halfway through the batch
        return made(self, page)

    monkeypatch.setattr(SearchIndex, "_document", stopped)
    with pytest.raises(KeyboardInterrupt):
        index.write([doc(1, "Razpis", "Razpis ena"), doc(2, "Razpis", "Razpis dva")], [])
    monkeypatch.undo()
    index.write([doc(3, "Razpis", "Razpis tri")], [])
    assert [h.page_id for h in Searcher(index).search("razpis").hits] == [3]
    assert set(index.marks()) == {3}


PHRASES = ["Uredba o javnih naročilih za občine.", "Občine in uredba o naročilih.",
           "Javna naročila občin.", "Naročila, javna in druga."]  # fmt: skip


def test_a_phrase_of_common_words_is_found_through_its_pairs_as_by_positions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("govsi.search.index.COMMON_FROM", 40)
    docs = [doc(n, f"Stran {n}", PHRASES[n % 4] + f" Številka {n}.") for n in range(1, 41)]
    paired = SearchIndex.open_for_update(tmp_path / "paired")
    paired.write(docs, [])
    assert {"javn", "narocil", "obcin", "uredb"} <= (paired.common or set())
    plain = SearchIndex.open_for_update(tmp_path / "plain")
    plain.common = frozenset()  # chosen, and none: phrases by their positions alone
    plain.write(docs, [])
    assert paired.searcher().doc_freq("body_pair", "javn+narocil") == 20
    assert plain.searcher().doc_freq("body_pair", "javn+narocil") == 0

    def hits(index: SearchIndex, phrase: str) -> list[tuple[int, float]]:
        return [(h.page_id, round(h.score, 4))
                for h in Searcher(index).search(phrase, limit=50).hits]  # fmt: skip

    # Two words: their pair term, the same pages (scored by the pair's own frequency).
    for phrase in ('"javnih naročil"', '"javna narocila"', '"naročila javna"',
                   '"številka 7"', '"občine uredba"', '"uredba naročila"'):  # fmt: skip
        pages = {pid for pid, _ in hits(paired, phrase)}
        assert pages == {pid for pid, _ in hits(plain, phrase)}
    assert Searcher(paired).search('"javnih naročil"').total == 20
    # A function word between them does not part them; words the other way round do.
    assert Searcher(paired).search('"uredba naročila"').total == 10
    assert Searcher(paired).search('"naročila uredba"').total == 0
    # More: the phrase itself, asked only of the pages holding its pairs.
    for phrase in ('"uredba o javnih naročilih"', '"občine in uredba o naročilih"',
                   '"javna naročila občin"'):  # fmt: skip
        assert hits(paired, phrase) == hits(plain, phrase) != []


def test_the_common_stems_are_chosen_once_and_the_pages_held_written_again(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("govsi.search.index.COMMON_FROM", 20)
    crawled(engine, 5, "Uredba o javnih naročilih številka {n}")
    folder = tmp_path / "index"
    index = SearchIndex.open_for_update(folder)
    assert update(engine, index).added == 5 and index.common is None  # too few to choose
    writer = CrawlWriter(engine)
    for i in range(5, 25):
        writer.add(page(f"{G}/p{i}", f"Javna naročila in uredba številka {i}"))
    assert writer.flush()
    # The 5 pages held are written again with their pairs, or the phrase misses them.
    assert update(engine, index).added == 25
    assert {"javn", "narocil", "uredb"} <= (index.common or set())
    assert Searcher(index).search('"javna naročila"', limit=50).total == 25
    index.close()
    reopened = SearchIndex.open_for_update(folder)
    assert reopened.common == index.common and update(engine, reopened).added == 0


def test_the_vocabulary_of_every_batch_is_recorded_once(tmp_path: Path) -> None:
    index = SearchIndex.open_for_update(tmp_path / "index")
    index.write([doc(1, "Občine", "Seznam občin.")], [])
    index.write([doc(2, "Občine", "Občine, občani in ministrstva.")], [])
    index.close()
    with sqlite3.connect(tmp_path / "index" / "state.sqlite3") as state:
        rows = state.execute("SELECT folded, term FROM vocabulary ORDER BY 1, 2").fetchall()
    # "ministrstva" is written without diacritics: nothing to restore.
    assert rows == [("obcan", "obcan"), ("obcin", "obcina")]
    assert set(found(SearchIndex.open_for_update(tmp_path / "index"), "obcin")) == {1, 2}
