"""30 MiB inputs against the per-page, per-header and per-word operations added for issues
30 and 32: each in a fresh process, its time and peak traced memory (``tracemalloc``).

- ``traps``: ``TrapGuard.chain`` with a 30 MiB page URL and link (in a crawl both have
  passed MAX_URL_LENGTH first), and ``query_family`` of 3 M parameters;
- ``headers``: ``fence.page_headers`` of a page's document with two 30 MiB headers;
- ``words``: ``words`` of a 30 MiB run of letters, ``fields_of`` a document whose title and
  one word are 30 MiB each (an update cuts both in SQL before), ``analyzed`` of 1 M
  characters of text;
- ``query``: a search of 30 MiB of words, and of one 30 MiB word;
- ``source``: ``source.documents`` reading a page_text row of 30 MiB text and title;
- ``index``: ``scrapy index``'s update of 60 pages of 1 M characters each (TEXT_MAX_CHARS),
  batches bounded by BATCH_CHARS; ``index_unbounded`` the same with batches of BATCH
  pages only, as before (peak RSS too: Tantivy's memory is not traced);
- ``lookup``: the duplicate lookup with a 30 MiB key;
- ``question``: a page's duplicate question as a worker makes it (``question_of_text``:
  signature values and band keys) of 30 MiB of text, and ``guess_language`` of it.

    PYTHONPATH=. python -m bench.huge_inputs                 # every part, ~1 min
    PYTHONPATH=. python -m bench.huge_inputs --parts words,query
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

MiB = 2**20
PARTS = ("traps", "headers", "words", "query", "source", "index", "index_unbounded", "lookup",
         "question")  # fmt: skip


def report(name: str, run: Callable[[], Any]) -> None:
    tracemalloc.start()
    started = time.perf_counter()
    out = run()
    seconds = time.perf_counter() - started
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    print(f"{name:58s} {seconds:7.3f} s  peak {peak / MiB:6.1f} MiB  -> {out}", flush=True)


def traps(work: Path) -> None:
    from govsi.frontier.traps import TrapGuard, query_family

    guard = TrapGuard(max_query_chain=10)
    page = "http://a.gov.si/k?" + "m=1&" * (30 * MiB // 4)
    links = ["http://a.gov.si/k?" + "x" * (30 * MiB), "http://a.gov.si/p"]
    report("chain: 30 MiB page URL with a query, 30 MiB link",
           lambda: len(guard.chain(page, links, lambda url: True)))  # fmt: skip
    plain = "http://a.gov.si/" + "p" * (30 * MiB)
    report("chain: 30 MiB page URL without a query",
           lambda: len(guard.chain(plain, links, lambda url: True)))  # fmt: skip
    many = "http://a.gov.si/k?" + "&".join(f"p{i}=1" for i in range(3 * MiB))
    report("query_family: 3 M parameters", lambda: len(query_family(many)[2]))


def headers(work: Path) -> None:
    from govsi.render.fence import page_headers

    given = [("Content-Security-Policy", "script-src " + "a" * 30 * MiB), ("X", "y" * 30 * MiB)]
    report("page_headers: two 30 MiB headers",
           lambda: len(page_headers(given)["content-security-policy"]))  # fmt: skip


def words_(work: Path) -> None:
    from govsi.search.analysis import analyzed, words
    from govsi.search.document import SearchDocument
    from govsi.search.fields import fields_of

    report("words: a 30 MiB run of letters", lambda: len(words("č" * 30 * MiB)))
    doc = SearchDocument(1, "https://a.gov.si/", "a.gov.si", "HTML", "t" * 30 * MiB,
                         "ab" + "č" * 30 * MiB + " občina", "sl", None, 1, "m")  # fmt: skip
    report("fields_of: a 30 MiB title and a 30 MiB word", lambda: len(fields_of(doc)[0]))
    text = "Občine so sprejele uredbe o postopkih. " * (MiB // 40)
    report("analyzed: 1 M characters of text", lambda: len(analyzed(words(text)).stems))


def query(work: Path) -> None:
    from govsi.search.index import SearchIndex
    from govsi.search.searcher import Searcher

    searcher = Searcher(SearchIndex.open_for_update(work / "index"))
    report("search: 30 MiB of words", lambda: searcher.search("občina " * (30 * MiB // 8)).total)
    report("search: one 30 MiB word", lambda: searcher.search("a" * 30 * MiB).total)


def _crawldb(work: Path) -> Any:
    from govsi.store import database

    engine = database.make_engine(f"sqlite:///{work / 'crawldb.sqlite3'}")
    database.migrate(engine)
    return engine


def source(work: Path) -> None:
    from datetime import datetime

    from govsi.items import FetchedPage, PageText
    from govsi.search import source as search_source
    from govsi.store.writer import CrawlWriter

    engine = _crawldb(work)
    writer = CrawlWriter(engine)
    text = PageText("HTML", "ok", "besedilo " * (30 * MiB // 9), None, "naslov " * (30 * MiB // 7),
                    "sl")  # fmt: skip
    writer.add(FetchedPage("https://a.gov.si/x", 1, "HTML", datetime(2026, 11, 27), 200,
                           html_content="<p>x</p>", content_hash="k", text=text))  # fmt: skip
    assert writer.flush()
    ids = list(search_source.versions(engine))

    def read() -> list[tuple[int, int]]:
        return [(len(d.text), len(d.title)) for d in search_source.documents(engine, ids)]

    report("documents: a page_text row of 30 MiB text and title", read)


def index(work: Path, bounded: bool = True) -> None:
    import resource
    from datetime import datetime

    from govsi.items import FetchedPage, PageText
    from govsi.search import update as search_update
    from govsi.search.index import SearchIndex
    from govsi.store.writer import CrawlWriter

    engine = _crawldb(work)
    writer = CrawlWriter(engine)
    words = "občina uredba zakon vlada ministrstvo postopek "
    for n in range(60):
        body = (f"stran{n} " + words * (MiB // len(words)))[:1_000_000]
        found = PageText("HTML", "ok", body, None, "naslov", "sl")
        writer.add(FetchedPage(f"https://a.gov.si/{n}", 1, "HTML", datetime(2026, 11, 27),
                               200, html_content="<p>x</p>", content_hash=f"k{n}",
                               text=found))  # fmt: skip
        if n % 10 == 9:
            assert writer.flush()
    if not bounded:
        search_update.BATCH_CHARS = 10**12  # batches of BATCH pages only, as before
    folder = SearchIndex.open_for_update(work / "index")
    name = "bounded by characters" if bounded else "by pages only"
    report(f"index: 60 pages of 1 M characters, {name}",
           lambda: search_update.update(engine, folder).added)  # fmt: skip
    folder.close()
    print(f"  peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


def lookup(work: Path) -> None:
    from govsi.copies.index import DuplicateIndex
    from govsi.dedup.question import Question

    index = DuplicateIndex(_crawldb(work), threshold=0.9, num_perm=128, shingle_size=5)
    asked = Question("https://a.gov.si/", "k" * 30 * MiB, None, list(range(10)))
    report("duplicate lookup: a 30 MiB key", lambda: len(index.lookup(asked)))


def question(work: Path) -> None:
    from govsi.dedup.question import question_of_text
    from govsi.text.language import guess_language

    measures = {"num_perm": 128, "shingle_size": 5, "bands": 32, "rows": 4}
    repeated = ("občina uredba zakon vlada " * (30 * MiB // 26))[: 30 * MiB]
    distinct = " ".join(f"w{i}" for i in range(4 * MiB))[: 30 * MiB]
    for name, text in (("repeated words", repeated), ("distinct words", distinct),
                       ("one word", "a" * 30 * MiB)):  # fmt: skip
        asked = lambda text=text: len(question_of_text("u", "k", text, **measures).keys)  # noqa: E731
        report(f"question_of_text: 30 MiB of {name}", asked)
        report(f"guess_language: 30 MiB of {name}", lambda text=text: guess_language(text, "sl"))


RUNS: dict[str, Callable[[Path], None]] = {
    "traps": traps, "headers": headers, "words": words_, "query": query, "source": source,
    "index": index, "index_unbounded": lambda work: index(work, bounded=False),
    "lookup": lookup, "question": question,
}  # fmt: skip


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--parts", default=",".join(PARTS))
    ap.add_argument("--one", help=argparse.SUPPRESS)  # a part, in this process
    args = ap.parse_args()
    if args.one:
        with tempfile.TemporaryDirectory(prefix="govsi-huge-") as tmp:
            RUNS[args.one](Path(tmp))
        return 0
    failed = 0
    for part in args.parts.split(","):
        # Each part in a process of its own: one part's caches and peak never meet another's.
        done = subprocess.run([sys.executable, "-m", "bench.huge_inputs", "--one", part])
        failed += done.returncode != 0
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
