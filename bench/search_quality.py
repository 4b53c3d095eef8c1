"""Search quality on a Slovenian relevance set (``bench.lib.search_corpus``): MRR and
nDCG@10, overall and per query kind, for each analysis and ranking choice:

- ``raw``: BM25 over lower-cased tokens, what an analyzer-less engine does;
- ``folded``: diacritics folded;
- ``lemmas``: lemmas (lemmagen3), folded;
- ``+ascii``, ``+vocabulary``, ``+stems``: what else a query word is matched by
  (``govsi.search.searcher.Ranking``), alone and together;
- ``+title``: and the title boost (SEARCH_TITLE_BOOST's default);
- ``+title+prior``: and the link prior (SEARCH_LINK_PRIOR's default): the default;
- ``title keys xN``: the default with the title's keys written N times into the stem field
  (``TITLE_KEYS``, 4 by default; once: no title weight in queries of several words).

    PYTHONPATH=. python -m bench.search_quality

Writes bench/results/search_quality.json.
"""

from __future__ import annotations

import argparse
import math
import tempfile
from collections import defaultdict
from dataclasses import replace
from pathlib import Path
from typing import Any

from bench.lib.results import RESULTS, ROOT, write_result
from bench.lib.search_corpus import QUERY_KINDS, Query, corpus
from bench.lib.sysinfo import code, machine
from govsi.search import analysis as search_analysis
from govsi.search.analysis import Analysis
from govsi.search.index import SearchIndex
from govsi.search.searcher import Ranking, Searcher

DEFAULT = Ranking()
LEMMAS = Ranking(1.0, 0.0, ascii=False, vocabulary=False, stems=False)
VARIANTS: list[tuple[str, Analysis, Ranking]] = [
    ("raw", "raw", Ranking(1.0, 0.0)),
    ("folded", "folded", Ranking(1.0, 0.0)),
    ("lemmas", "lemmas", LEMMAS),
    ("+ascii", "lemmas", replace(LEMMAS, ascii=True)),
    ("+ascii+vocabulary", "lemmas", replace(LEMMAS, ascii=True, vocabulary=True)),
    ("+stems", "lemmas", replace(LEMMAS, stems=True)),
    ("+vocab+stems", "lemmas", replace(LEMMAS, vocabulary=True, stems=True)),
    ("+ascii+stems", "lemmas", replace(LEMMAS, ascii=True, stems=True)),
    ("+ascii+vocab+stems", "lemmas", replace(LEMMAS, ascii=True, vocabulary=True, stems=True)),
    ("+title", "lemmas", replace(DEFAULT, prior=0.0)),
    ("+title+prior (default)", "lemmas", DEFAULT),
]


def dcg(grades: list[int]) -> float:
    return float(sum((2**g - 1) / math.log2(i + 2) for i, g in enumerate(grades)))


def measure(searcher: Searcher, q: Query) -> tuple[float, float]:
    """(reciprocal rank of the first relevant result, nDCG@10) of one query."""
    ids = [h.page_id for h in searcher.search(q.text, limit=10).hits]
    rr = next((1 / (i + 1) for i, pid in enumerate(ids) if pid in q.relevant), 0.0)
    ideal = dcg(sorted(q.relevant.values(), reverse=True)[:10])
    return rr, dcg([q.relevant.get(pid, 0) for pid in ids]) / ideal


def run_variant(
    folder: Path,
    analysis: Analysis,
    ranking: Ranking,
    docs: Any,
    inlinks: dict[int, int],
    queries: list[Query],
) -> dict[str, Any]:
    index = SearchIndex.open_for_update(folder, analysis)
    if not index.marks():
        index.write(docs, [])
        index.set_inlinks(inlinks)
    searcher = Searcher(index, ranking)
    by_kind: dict[str, list[tuple[float, float]]] = defaultdict(list)
    misses = []
    for q in queries:
        rr, ndcg = measure(searcher, q)
        by_kind[q.kind].append((rr, ndcg))
        if rr < 1:
            miss = {"query": q.text, "kind": q.kind, "rr": round(rr, 3), "ndcg": round(ndcg, 3)}
            misses.append(miss)
    index.close()

    def mean(pairs: list[tuple[float, float]], k: int) -> float:
        return round(sum(p[k] for p in pairs) / len(pairs), 3)

    every = [p for pairs in by_kind.values() for p in pairs]
    return {
        "mrr": mean(every, 0),
        "ndcg10": mean(every, 1),
        "by_kind": {
            k: {"mrr": mean(by_kind[k], 0), "ndcg10": mean(by_kind[k], 1)} for k in QUERY_KINDS
        },
        "misses": misses,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--filler", type=int, default=600, help="filler pages")
    ap.add_argument("--out", type=Path, default=RESULTS)
    args = ap.parse_args(argv)
    docs, inlinks, queries = corpus(args.filler)
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, analysis, ranking in VARIANTS:
            folder = Path(tmp) / analysis
            results[name] = run_variant(folder, analysis, ranking, docs, inlinks, queries)
        for n in (1, 2):
            # An index-time choice: an index of its own, built with the constant changed.
            default_keys, search_analysis.TITLE_KEYS = search_analysis.TITLE_KEYS, n
            try:
                folder = Path(tmp) / f"title-keys-{n}"
                results[f"title keys x{n}"] = run_variant(
                    folder, "lemmas", DEFAULT, docs, inlinks, queries
                )
            finally:
                search_analysis.TITLE_KEYS = default_keys
    print(f"{len(queries)} queries over {len(docs)} pages\n")
    kinds_head = "  ".join(f"{k:>9}" for k in QUERY_KINDS)
    print(f"{'variant':<24} {'MRR':>6} {'nDCG@10':>8}  {kinds_head}")
    for name, r in results.items():
        kinds = "  ".join(f"{r['by_kind'][k]['ndcg10']:>9.3f}" for k in QUERY_KINDS)
        print(f"{name:<24} {r['mrr']:>6.3f} {r['ndcg10']:>8.3f}  {kinds}")
    print("\n(per kind: nDCG@10)")
    best = results["+title+prior (default)"]
    for m in best["misses"][:20]:
        print(f"  default missed the best first: {m}")
    write_result(
        args.out / "search_quality.json",
        {
            "benchmark": "search_quality",
            "queries": len(queries),
            "pages": len(docs),
            "machine": machine(),
            "code": code(ROOT),
            "results": results,
        },
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
