"""Search speed: index build rate and size, and query latency, on generated Slovenian-like
pages (``--docs`` of ~``--words`` words, a Zipfian vocabulary of inflected forms).

- build: documents/s of ``SearchIndex.write`` (analysis and Tantivy), in batches as
  ``scrapy index`` does; bytes on disk per 100 000 documents;
- queries: p50/p95 ms of a search with facets and the snippets of its first 10 results
  (the texts from memory: crawldb's read of 10 rows by id is not in the figure), over a
  mix of one-word, two-word, phrase, ASCII and filtered queries.

    PYTHONPATH=. python -m bench.search_speed --docs 100000
    PYTHONPATH=. python -m bench.search_speed --docs 1000000

Writes bench/results/search_speed-<docs>.json.
"""

from __future__ import annotations

import argparse
import itertools
import multiprocessing
import os
import random
import statistics
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from bench.lib.results import RESULTS, ROOT, write_result
from bench.lib.sysinfo import code, machine
from govsi.search.analysis import fold
from govsi.search.document import SearchDocument
from govsi.search.index import SearchIndex
from govsi.search.searcher import Searcher
from govsi.search.snippets import snippet
from govsi.search.update import BATCH, write_batches

_STEMS = (
    "občin",
    "uredb",
    "ministrstv",
    "naročil",
    "vlad",
    "prebivališč",
    "potrdil",
    "zakon",
    "sklep",
    "postopk",
    "dovoljenj",
    "izkaznic",
    "subvencij",
    "napoved",
    "pomoč",
    "razpis",
    "projekt",
    "agencij",
    "urad",
    "svet",
    "komisij",
    "predlog",
    "pravilnik",
    "seznam",
)
_ENDINGS = ("a", "e", "i", "o", "u", "ah", "ih", "om", "em", "ami", "ov", "")
HOSTS = [f"{n}.gov.si" for n in ("www", "evem", "e-uprava", "e-prostor", "www.fu", "mju")]
KINDS = ["HTML"] * 8 + ["PDF", "DOCX"]


def vocabulary(size: int, rng: random.Random) -> list[str]:
    """``size`` word forms: real stems and endings, and made-up stems (rare words)."""
    words = [s + e for s in _STEMS for e in _ENDINGS]
    letters = "abcčdefghijklmnoprsštuvzž"
    while len(words) < size:
        stem = "".join(rng.choice(letters) for _ in range(rng.randint(3, 8)))
        words += [stem + e for e in rng.sample(_ENDINGS, 3)]
    return words[:size]


def documents(n: int, words_per_doc: int, seed: int = 1) -> list[SearchDocument]:
    rng = random.Random(seed)
    vocab = vocabulary(60_000, rng)
    cum = list(itertools.accumulate(1 / (i + 1) for i in range(len(vocab))))  # Zipf
    out = []
    base = datetime(2020, 1, 1)
    for pid in range(1, n + 1):
        body = rng.choices(vocab, cum_weights=cum, k=words_per_doc)
        text = " ".join(body).capitalize() + "."
        title = " ".join(rng.choices(vocab, cum_weights=cum, k=5)).capitalize()
        host = rng.choice(HOSTS)
        when = base + timedelta(days=pid % 2000)
        url = f"https://{host}/{pid}"
        out.append(
            SearchDocument(pid, url, host, rng.choice(KINDS), title, text, "sl", when, 1, "m")
        )
    return out


QUERY_KINDS = ("one word", "two words", "phrase", "no diacritics", "filtered")


def queries(rng: random.Random) -> list[tuple[str, str]]:
    """(kind, query) pairs: 200 of each of ``QUERY_KINDS``."""
    q = []
    for _ in range(200):
        a, b = rng.choice(_STEMS) + rng.choice(_ENDINGS), rng.choice(_STEMS) + rng.choice(_ENDINGS)
        texts = [a, f"{a} {b}", f'"{a} {b}"', fold(a), f"{a} type:pdf after:2022"]
        q += list(zip(QUERY_KINDS, texts, strict=True))
    return q


def percentiles(times: list[float]) -> dict[str, float]:
    times = sorted(times)
    return {"p50_ms": round(statistics.median(times), 2),
            "p95_ms": round(times[int(0.95 * len(times)) - 1], 2),
            "max_ms": round(times[-1], 2)}  # fmt: skip


def folder_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--docs", type=int, default=100_000)
    ap.add_argument("--words", type=int, default=300, help="words per document")
    ap.add_argument(
        "--processes",
        type=int,
        default=0,
        help="analysing processes (SEARCH_INDEX_PROCESSES; 0: one per CPU)",
    )
    ap.add_argument("--out", type=Path, default=RESULTS)
    ap.add_argument(
        "--index",
        type=Path,
        help="keep the index in this folder; one already there is queried, not built again",
    )
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.index or Path(tmp) / "index"
        reuse = folder.exists() and any(folder.iterdir())
        index = SearchIndex.open_for_update(folder)
        built = 0.0
        processes = args.processes or os.cpu_count() or 1
        # spawn, as scrapy index does: a forked child would keep Tantivy's lock file open.
        context = multiprocessing.get_context("spawn")
        pool = ProcessPoolExecutor(processes, mp_context=context) if processes > 1 else None
        for start in range(0, 0 if reuse else args.docs, 50_000):
            part = documents(min(50_000, args.docs - start), args.words, seed=start + 1)
            part = [SearchDocument(d.page_id + start, *vars_of(d)[1:]) for d in part]
            t0 = time.perf_counter()
            batches = (part[i : i + BATCH] for i in range(0, len(part), BATCH))
            for _ in write_batches(index, batches, [], pool):
                pass
            built += time.perf_counter() - t0
            print(f"  {start + len(part)} documents, {built:.0f} s", flush=True)
        if pool is not None:
            pool.shutdown()
        if not reuse:  # a rebuild is done when its merges are
            t0 = time.perf_counter()
            index.close()
            index = SearchIndex.open(folder)
            built += time.perf_counter() - t0
        size = folder_bytes(folder)
        texts = {d.page_id: d.text for d in documents(min(args.docs, 50_000), args.words)}
        searcher = Searcher(index)
        times: dict[str, list[float]] = {kind: [] for kind in QUERY_KINDS}
        totals = []
        for kind, q in queries(random.Random(2)):
            t0 = time.perf_counter()
            results = searcher.search(q)
            for h in results.hits:
                snippet(texts.get(h.page_id, ""), results.wanted, results.wanted_ascii,
                        wanted_stems=results.wanted_stems)  # fmt: skip
            times[kind].append((time.perf_counter() - t0) * 1000)
            totals.append(results.total)
        index.close()
    every = [t for kind in QUERY_KINDS for t in times[kind]]
    result: dict[str, Any] = {
        "docs": args.docs, "words_per_doc": args.words, "processes": processes,
        "build_s": round(built, 1) if not reuse else None,
        "docs_per_s": round(args.docs / built, 1) if not reuse else None,
        "index_bytes": size, "bytes_per_100k_docs": round(size * 100_000 / args.docs),
        "queries": len(every), **percentiles(every),
        "by_kind": {kind: percentiles(times[kind]) for kind in QUERY_KINDS},
        "mean_hits": round(statistics.mean(totals)),
    }  # fmt: skip
    for k, v in result.items():
        print(f"{k:>20}: {v}")
    write_result(args.out / f"search_speed-{args.docs}.json",
                 {"benchmark": "search_speed", "machine": machine(), "code": code(ROOT),
                  "result": result})  # fmt: skip
    return 0


def vars_of(d: SearchDocument) -> tuple[Any, ...]:
    return (d.page_id, d.url, d.host, d.kind, d.title, d.text, d.language, d.date, d.depth,
            d.extracted_at)  # fmt: skip


if __name__ == "__main__":
    raise SystemExit(main())
