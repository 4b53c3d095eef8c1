"""The search's two choices, measured against the alternatives the issue names:

- **the lemmatizer**: lemmagen3 (the default) against simplemma's Slovenian lemmas, each
  the whole default analysis and ranking, on ``bench.lib.search_corpus``'s relevance set
  (MRR, nDCG@10 per query kind) and in words per second;
- **the engine**: Tantivy against SQLite's FTS5, both fed the same terms (govsi's analysis:
  lemmas, ascii terms, stems) and asked the same way (every word or phrase required; a word
  by its lemma, ascii term or stem, a phrase by its stems; the title weighing 2, a stem
  0.5; no vocabulary and no link prior, which FTS5 would need rebuilt around it): quality
  on the relevance set, then indexing rate, size and query latency (best 200 by BM25, the
  count, facets by host and type; no snippets) over ``--docs`` generated pages of
  ``bench.search_speed``. PostgreSQL's full-text search ranks with ``ts_rank`` (no BM25,
  no corpus statistics), so it is not a candidate for ranked search.

    pip install simplemma==2.0.0   # the alternative lemmatizer (not a govsi requirement)
    PYTHONPATH=. python -m bench.search_choices --docs 100000

Writes bench/results/search_choices.json.
"""

from __future__ import annotations

import argparse
import multiprocessing
import random
import sqlite3
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from bench.lib.results import RESULTS, ROOT, write_result
from bench.lib.search_corpus import corpus
from bench.lib.sysinfo import code, machine
from bench.search_quality import DEFAULT, dcg, run_variant
from bench.search_speed import documents, folder_bytes, percentiles, queries
from govsi.search import analysis
from govsi.search.analysis import STOP_WORDS, ascii_term, fold, stems, term, words
from govsi.search.document import SearchDocument
from govsi.search.fields import Analyzed, fields_of
from govsi.search.index import SearchIndex
from govsi.search.query import ParsedQuery, parse
from govsi.search.searcher import Ranking, Searcher

# What both engines are asked (module docstring).
COMPARED = Ranking(title_boost=2.0, prior=0.0, vocabulary=False)
FTS_COLUMNS = ("body", "body_ascii", "body_stem", "title", "title_ascii", "title_stem")
FTS_WEIGHTS = (1.0, 1.0, 0.5, 2.0, 2.0, 1.0)


@contextmanager
def lemmatizer(lemmatize: Callable[[str], str]) -> Iterator[None]:
    """Analysis with ``lemmatize`` for lemmas, its caches emptied before and after."""
    analysis.lemma("x")  # loads lemmagen3's
    saved = analysis._lemmatizer
    analysis._lemmatizer = lemmatize
    for cached in (analysis._cached_lemma, analysis.forms):
        cached.cache_clear()
    try:
        yield
    finally:
        analysis._lemmatizer = saved
        for cached in (analysis._cached_lemma, analysis.forms):
            cached.cache_clear()


def words_per_second(lemmatize: Callable[[str], str], sample: list[str]) -> float:
    t0 = time.perf_counter()
    for w in sample:
        lemmatize(w)
    return len(sample) / (time.perf_counter() - t0)


class Fts5:
    """A contentless FTS5 table of the analysed fields; ``host`` and ``kind`` in a table
    beside it, by rowid."""

    def __init__(self, path: Path) -> None:
        self.db = sqlite3.connect(path)
        columns = ", ".join(FTS_COLUMNS)
        self.db.execute(
            f"CREATE VIRTUAL TABLE pages USING fts5({columns}, content='',"
            f" tokenize='unicode61 remove_diacritics 0')"
        )
        self.db.execute("CREATE TABLE meta (id INTEGER PRIMARY KEY, host TEXT, kind TEXT)")

    def add(self, docs: list[SearchDocument], fields: list[dict[str, str]]) -> None:
        rows = [(d.page_id, *(f.get(c, "") for c in FTS_COLUMNS))
                for d, f in zip(docs, fields, strict=True)]  # fmt: skip
        marks = ",".join("?" * len(FTS_COLUMNS))
        with self.db:
            self.db.executemany(
                f"INSERT INTO pages (rowid, {', '.join(FTS_COLUMNS)}) VALUES (?, {marks})", rows
            )
            self.db.executemany(
                "INSERT INTO meta VALUES (?, ?, ?)", [(d.page_id, d.host, d.kind) for d in docs]
            )

    def optimize(self) -> None:
        with self.db:
            self.db.execute("INSERT INTO pages(pages) VALUES ('optimize')")

    def search(self, query: str, limit: int = 10) -> tuple[list[int], int, dict[str, Counter[str]]]:
        """(best ``limit`` page ids, the count, facets by host and type)."""
        match = fts_query(parse(query))
        if not match:
            return [], 0, {}
        weights = ", ".join(map(str, FTS_WEIGHTS))
        best = self.db.execute(
            f"SELECT rowid FROM pages WHERE pages MATCH ? ORDER BY bm25(pages, {weights})"
            f" LIMIT ?", (match, max(limit, 200)),
        ).fetchall()  # fmt: skip
        facets: dict[str, Counter[str]] = {"host": Counter(), "kind": Counter()}
        total = 0
        for host, kind, n in self.db.execute(
            "SELECT m.host, m.kind, count(*) FROM pages JOIN meta m ON m.id = pages.rowid"
            " WHERE pages MATCH ? GROUP BY m.host, m.kind",
            (match,),
        ):
            facets["host"][host] += n
            facets["kind"][kind] += n
            total += n
        return [int(pid) for (pid,) in best[:limit]], total, facets


def _quoted(terms: list[str]) -> str:
    return '"' + " ".join(terms) + '"'


def fts_query(parsed: ParsedQuery) -> str:
    """The FTS5 query asking what ``Searcher`` asks with ``COMPARED`` (filters left out)."""
    units = []
    for unit in parsed.units:
        kept = [w for w in words(" ".join(unit)) if fold(w) not in STOP_WORDS]
        if not kept:
            continue
        if len(kept) > 1:
            units.append("{body_stem title_stem} : " + _quoted(stems(kept)))
            continue
        w = kept[0]
        options = [f"{{body title}} : {_quoted([term(w)])}",
                   f"{{body_stem title_stem}} : {_quoted(stems([w]))}"]  # fmt: skip
        if w.isascii():
            options.append(f"{{body_ascii title_ascii}} : {_quoted([ascii_term(w)])}")
        units.append("(" + " OR ".join(options) + ")")
    return " AND ".join(units)


def fts_quality(folder: Path) -> dict[str, Any]:
    docs, _inlinks, qs = corpus()
    fts = Fts5(folder / "quality.sqlite3")
    fts.add(docs, [fields_of(d)[0] for d in docs])
    by_kind: dict[str, list[tuple[float, float]]] = {}
    for q in qs:
        ids, _, _ = fts.search(q.text)
        rr = next((1 / (i + 1) for i, pid in enumerate(ids) if pid in q.relevant), 0.0)
        ideal = dcg(sorted(q.relevant.values(), reverse=True)[:10])
        by_kind.setdefault(q.kind, []).append(
            (rr, dcg([q.relevant.get(pid, 0) for pid in ids]) / ideal)
        )
    every = [p for pairs in by_kind.values() for p in pairs]

    def mean(pairs: list[tuple[float, float]], k: int) -> float:
        return round(sum(p[k] for p in pairs) / len(pairs), 3)

    return {"mrr": mean(every, 0), "ndcg10": mean(every, 1),
            "by_kind": {k: {"ndcg10": mean(v, 1)} for k, v in by_kind.items()}}  # fmt: skip


def _fields(docs: list[SearchDocument]) -> list[dict[str, str]]:
    return [fields_of(d)[0] for d in docs]


def speed(folder: Path, n: int) -> dict[str, Any]:
    """Index ``n`` generated pages into each engine (their analysis done before, not in
    the figure) and time the speed benchmark's queries."""
    docs = documents(n, 300)
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(2, mp_context=context) as pool:
        parts = [docs[i : i + 1000] for i in range(0, n, 1000)]
        fields = [f for part in pool.map(_fields, parts) for f in part]
    out: dict[str, Any] = {}
    # Tantivy: the analysed pages written as SearchIndex.write writes them.
    index = SearchIndex.open_for_update(folder / "tantivy")
    t0 = time.perf_counter()
    writer = index.index.writer(heap_size=128 * 1024 * 1024, num_threads=1)
    for d, f in zip(docs, fields, strict=True):
        writer.add_document(index._document(_analyzed(d, f)))
    writer.commit()
    writer.wait_merging_threads()
    index.index.reload()
    out["tantivy"] = {"index_s": round(time.perf_counter() - t0, 1)}
    out["tantivy"]["bytes"] = folder_bytes(folder / "tantivy")
    searcher = Searcher(index, COMPARED)
    out["tantivy"].update(_latency(lambda q: searcher.search(q).total))
    index.close()
    fts = Fts5(folder / "fts.sqlite3")
    t0 = time.perf_counter()
    for i in range(0, n, 2000):
        fts.add(docs[i : i + 2000], fields[i : i + 2000])
    fts.optimize()
    out["fts5"] = {"index_s": round(time.perf_counter() - t0, 1),
                   "bytes": (folder / "fts.sqlite3").stat().st_size}  # fmt: skip
    out["fts5"].update(_latency(lambda q: fts.search(q)[1]))
    fts.db.close()
    return out


def _analyzed(doc: SearchDocument, fields: dict[str, str]) -> Analyzed:
    return Analyzed(doc, fields, set())


def _latency(run: Callable[[str], int]) -> dict[str, Any]:
    times: dict[str, list[float]] = {}
    for kind, q in queries(random.Random(2)):
        if "type:" in q:
            continue  # filters are not translated for FTS5
        t0 = time.perf_counter()
        run(q)
        times.setdefault(kind, []).append((time.perf_counter() - t0) * 1000)
    every = [t for ts in times.values() for t in ts]
    return {**percentiles(every), "by_kind": {k: percentiles(v) for k, v in times.items()}}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--docs", type=int, default=100_000)
    ap.add_argument("--out", type=Path, default=RESULTS)
    args = ap.parse_args(argv)
    result: dict[str, Any] = {"lemmatizers": {}, "engines": {}}
    docs, inlinks, qs = corpus()
    sample = [w for d in docs for w in words(d.text)][:50_000]
    with tempfile.TemporaryDirectory() as tmp:
        import lemmagen3

        lemmatizers: dict[str, Callable[[str], str]] = {
            "lemmagen3": lemmagen3.Lemmatizer("sl").lemmatize
        }
        try:
            import simplemma

            lemmatizers["simplemma"] = lambda w: simplemma.lemmatize(w, lang="sl")
        except ImportError:
            print("simplemma is not installed: pip install simplemma==2.0.0")
        for name, lemmatize in lemmatizers.items():
            with lemmatizer(lemmatize):
                quality = run_variant(Path(tmp) / name, "lemmas", DEFAULT, docs, inlinks, qs)
            quality.pop("misses")
            quality["words_per_s"] = round(words_per_second(lemmatize, sample))
            result["lemmatizers"][name] = quality
            print(f"{name:>10}: MRR {quality['mrr']}, nDCG@10 {quality['ndcg10']}, "
                  f"{quality['by_kind']}, {quality['words_per_s']} words/s")  # fmt: skip
        tantivy_quality = run_variant(Path(tmp) / "compared", "lemmas", COMPARED, docs, inlinks,
                                      qs)  # fmt: skip
        tantivy_quality.pop("misses")
        result["engines"]["quality"] = {"tantivy": tantivy_quality,
                                        "fts5": fts_quality(Path(tmp))}  # fmt: skip
        for engine, q in result["engines"]["quality"].items():
            print(f"{engine:>10}: MRR {q['mrr']}, nDCG@10 {q['ndcg10']}, {q['by_kind']}")
        result["engines"]["speed"] = speed(Path(tmp), args.docs)
        for engine, figures in result["engines"]["speed"].items():
            print(f"{engine:>10}: {figures}")
    result["docs"] = args.docs
    write_result(args.out / "search_choices.json",
                 {"benchmark": "search_choices", "machine": machine(), "code": code(ROOT),
                  "result": result})  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
