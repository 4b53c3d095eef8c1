"""Main text against public ground truth: govsi's ``readable_main_text`` and the
maintained extractors, on the same pages, scored the same way, in one run.

Sets (``--data DIR``, the clones named in bench/README.md's "Main text" section; a set
whose folder is missing is skipped, and said so):

- ``article``: scrapinghub/article-extraction-benchmark, 181 news and blog pages with each
  one's article body (``DIR/article-extraction-benchmark``);
- ``cleaneval``: CleanEval's final test set, 681 pages of 2007 with the text a person kept
  (``DIR/html-cleaning-dataset-merged/cleaneval-final``; the gold's ``URL:`` line and its
  ``<p>``/``<h>``/``<l>`` marks dropped, as the Webis benchmark does).

Score: the article benchmark's own (its ``evaluate.py``): per page, the ``\\w+`` tokens'
4-gram shingles of the truth and of the extraction, counted with repeats, give tp/fp/fn
normalized to sum 1; precision is the mean over pages that extracted something, recall the
mean over pages whose truth has text, F1 the harmonic mean of the two means. Time: CPU
time of the extraction alone (the page already decoded to ``str``; govsi parses it, as
each library does), in ms per page and per 50 KB of HTML; and govsi's with the tree
given, as the crawl calls it (the parse is shared with link extraction), the best of 3.
Candidates not installed (requirements-bench.txt) are skipped.

``--real``: on the gov.si pages of ``tests/data/realpages/`` (``testkit.realpages``):
how many pages with text get an empty main text, or one of the site's template only; F1
of the hand-written expected texts (20 pages, 10 of them held out).

    PYTHONPATH=. python -m bench.main_text --data DIR --real        # ~8 min
    PYTHONPATH=. python -m bench.main_text --data DIR --sets article --only govsi,whole
"""

from __future__ import annotations

import argparse
import gzip
import json
import logging
import re
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.lib.results import RESULTS, ROOT, write_result
from bench.lib.sysinfo import code, machine


@dataclass
class Page:
    key: str
    html: str
    truth: str


# --- the sets -------------------------------------------------------------------------


def _decode(data: bytes) -> str:
    # CleanEval's pages are in a dozen encodings, mostly Latin-1 and Windows-1252, and
    # UTF-8; Windows-1252 reads Latin-1 text the same, and maps what it lacks.
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("cp1252", errors="replace")


def article_pages(data: Path) -> Iterator[Page]:
    root = data / "article-extraction-benchmark"
    truth = json.loads((root / "ground-truth.json").read_text(encoding="utf-8"))
    for key in sorted(truth):
        with gzip.open(root / "html" / f"{key}.html.gz", "rt", encoding="utf8") as f:
            html = f.read()
        yield Page(key, html, truth[key].get("articleBody") or "")


_CLEANEVAL_MARK = re.compile(r"<[phl]>", re.IGNORECASE)


def cleaneval_pages(data: Path) -> Iterator[Page]:
    root = data / "html-cleaning-dataset-merged" / "cleaneval-final"
    for gold in sorted((root / "GoldStandard").glob("*.txt"), key=lambda p: int(p.stem)):
        text = _decode(gold.read_bytes())
        if text.startswith("URL:"):
            text = text.split("\n", 1)[1] if "\n" in text else ""
        html = _decode((root / "input" / f"{gold.stem}.html").read_bytes())
        yield Page(gold.stem, html, _CLEANEVAL_MARK.sub(" ", text))


SETS: dict[str, tuple[str, Callable[[Path], Iterator[Page]]]] = {
    "article": ("article-extraction-benchmark", article_pages),
    "cleaneval": ("html-cleaning-dataset-merged/cleaneval-final", cleaneval_pages),
}


# --- the score: scrapinghub/article-extraction-benchmark's evaluate.py, its logic --------

_TOKEN = re.compile(r"\w+", re.UNICODE | re.MULTILINE | re.IGNORECASE | re.DOTALL)
TpFpFn = tuple[float, float, float]


def _ngrams(text: str, n: int) -> list[tuple[str, ...]]:
    tokens = _TOKEN.findall(text or "")
    out = []
    for i in range(0, max(1, len(tokens) - n + 1)):
        shingle = tuple(tokens[i : i + n])
        if shingle:
            out.append(shingle)
    return out


def shingle_matching(true: str, pred: str, n: int = 4) -> TpFpFn:
    true_shingles, pred_shingles = Counter(_ngrams(true, n)), Counter(_ngrams(pred, n))
    tp = fp = fn = 0.0
    for key in set(true_shingles) | set(pred_shingles):
        t, p = true_shingles.get(key, 0), pred_shingles.get(key, 0)
        tp += min(t, p)
        fp += max(0, p - t)
        fn += max(0, t - p)
    s = tp + fp + fn
    # Normalized so that longer texts do not weigh more.
    return (tp / s, fp / s, fn / s) if s > 0 else (tp, fp, fn)


def _precision(tp: float, fp: float, fn: float) -> float:
    if fp == fn == 0:
        return 1.0
    if tp == fp == 0:
        return 0.0
    return tp / (tp + fp)


def _recall(tp: float, fp: float, fn: float) -> float:
    if fp == fn == 0:
        return 1.0
    if tp == fn == 0:
        return 0.0
    return tp / (tp + fn)


def scores(matches: list[TpFpFn]) -> dict[str, float]:
    # evaluate.py's means fail when no page extracted anything: precision 0 then.
    predicted = [_precision(*m) for m in matches if m[0] + m[1] > 0]
    precision = statistics.mean(predicted) if predicted else 0.0
    recall = statistics.mean(_recall(*m) for m in matches if m[0] + m[2] > 0)
    return {
        "f1": 2 * precision * recall / (precision + recall) if precision + recall else 0.0,
        "precision": precision,
        "recall": recall,
    }


# --- the extractors -------------------------------------------------------------------


def _govsi() -> Callable[[str], str]:
    from govsi.text.maintext import readable_main_text

    return readable_main_text


def _whole() -> Callable[[str], str]:
    from govsi.text.maintext import whole_text

    return lambda html: whole_text(html, readable=True)


def _trafilatura(fast: bool) -> Callable[[str], str]:
    import trafilatura

    def extract(html: str) -> str:
        return trafilatura.extract(html, include_comments=False, fast=fast) or ""

    return extract


def _resiliparse() -> Callable[[str], str]:
    from resiliparse.extract.html2text import extract_plain_text
    from resiliparse.parse.html import HTMLTree

    return lambda html: extract_plain_text(HTMLTree.parse(html), main_content=True)


def _readability() -> Callable[[str], str]:
    from lxml import html as lxml_html
    from readability import Document

    # It logs a traceback for each page it cannot clean; the page counts as empty.
    logging.getLogger("readability.readability").setLevel(logging.CRITICAL)

    def extract(html: str) -> str:
        try:
            summary = Document(html).summary(html_partial=True)
        except Exception:  # it raises on pages it cannot parse: nothing found
            return ""
        texts = lxml_html.fromstring(summary).itertext() if summary.strip() else []
        return " ".join(t.strip() for t in texts if t.strip())

    return extract


def _justext(language: str) -> Callable[[str], str]:
    import justext

    stoplist = justext.get_stoplist(language)

    def extract(html: str) -> str:
        try:
            paragraphs = justext.justext(html, stoplist)
        except Exception:  # it raises on empty documents: nothing found
            return ""
        return "\n".join(p.text for p in paragraphs if not p.is_boilerplate)

    return extract


EXTRACTORS: dict[str, Callable[[], Callable[[str], str]]] = {
    "govsi": _govsi,
    "trafilatura": lambda: _trafilatura(fast=False),
    "trafilatura-fast": lambda: _trafilatura(fast=True),
    "resiliparse": _resiliparse,
    "readability": _readability,
    "justext-en": lambda: _justext("English"),
    "justext-sl": lambda: _justext("Slovenian"),
    "whole": _whole,
}


def run_set(
    name: str, pages: list[Page], extractors: dict[str, Callable[[str], str]]
) -> dict[str, Any]:
    kb = sum(len(p.html.encode("utf-8", "replace")) for p in pages) / 1000
    out: dict[str, Any] = {"pages": len(pages), "html_kb_mean": kb / len(pages)}
    print(f"\n{name}: {len(pages)} pages, {kb / len(pages):.0f} KB of HTML on average")
    print(f"{'':18s} {'F1':>6s} {'P':>6s} {'R':>6s} {'ms/page':>8s} {'ms/50KB':>8s} {'empty':>6s}")
    for label, extract in extractors.items():
        matches: list[TpFpFn] = []
        seconds = 0.0
        empty = 0
        per_page: dict[str, float] = {}
        for page in pages:
            started = time.process_time()
            text = extract(page.html)
            seconds += time.process_time() - started
            empty += not text.strip()
            m = shingle_matching(page.truth, text)
            matches.append(m)
            per_page[page.key] = round(
                2 * _precision(*m) * _recall(*m) / ((_precision(*m) + _recall(*m)) or 1), 4
            )
        s = scores(matches)
        ms = 1000 * seconds / len(pages)
        per_50kb = 1000 * seconds / kb * 50
        print(f"{label:18s} {s['f1']:6.3f} {s['precision']:6.3f} {s['recall']:6.3f} "
              f"{ms:8.2f} {per_50kb:8.2f} {empty:6d}", flush=True)  # fmt: skip
        out[label] = {**s, "ms_per_page": ms, "ms_per_50kb": per_50kb, "empty": empty,
                      "page_f1": per_page}  # fmt: skip
    if "govsi" in extractors:
        seconds = tree_given_seconds([p.html for p in pages])
        ms, per_50kb = 1000 * seconds / len(pages), 1000 * seconds / kb * 50
        print(f"{'govsi, tree given':18s} {'':20s} {ms:8.2f} {per_50kb:8.2f}", flush=True)
        out["govsi_tree_given"] = {"ms_per_page": ms, "ms_per_50kb": per_50kb}
    return out


def tree_given_seconds(pages: list[str]) -> float:
    """CPU time of govsi's main text with the page already parsed, as the crawl calls it
    (the tree is shared with link extraction); the best of three runs of each page."""
    from govsi.text.maintext import readable_main_text
    from govsi.web.extract import parse_html

    total = 0.0
    for html in pages:
        best = float("inf")
        for _ in range(3):
            root = parse_html(html)
            started = time.process_time()
            readable_main_text(html, root)
            best = min(best, time.process_time() - started)
        total += best
    return total


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, help="folder of the sets' clones")
    parser.add_argument("--sets", default=",".join(SETS), help='comma-separated ("": none)')
    parser.add_argument("--only", default="", help="extractors, comma-separated")
    parser.add_argument("--real", action="store_true", help="the gov.si pages' empty count")
    parser.add_argument("--limit", type=int, default=0, help="pages per set (0: all)")
    args = parser.parse_args(argv)
    wanted = [e for e in args.only.split(",") if e] or list(EXTRACTORS)
    extractors: dict[str, Callable[[str], str]] = {}
    skipped: dict[str, str] = {}
    for label in wanted:
        try:
            extractors[label] = EXTRACTORS[label]()
        except ImportError as e:
            skipped[label] = f"not installed ({e.name})"
    for label, why in skipped.items():
        print(f"{label}: skipped, {why}")
    result: dict[str, Any] = {"machine": machine(), "code": code(ROOT), "skipped": skipped}
    for name in [s for s in args.sets.split(",") if s]:
        folder, load = SETS[name]
        if args.data is None or not (args.data / folder).is_dir():
            print(f"{name}: skipped, no {folder} in --data")
            continue
        pages = list(load(args.data))
        if args.limit:
            pages = pages[: args.limit]
        result[name] = run_set(name, pages, extractors)
    if args.real:
        result["real"] = real_pages(extractors)
    write_result(RESULTS / "main_text.json", result)
    return 0


def _shingles(text: str, n: int = 5) -> set[tuple[str, ...]]:
    words = _TOKEN.findall(text.lower())
    return {tuple(words[i : i + n]) for i in range(max(1, len(words) - n + 1))} if words else set()


def real_pages(extractors: dict[str, Callable[[str], str]]) -> dict[str, Any]:
    """On the corpus of real gov.si pages: how many pages with text (20 words or more of
    all their text) get an empty main text, or one of the template only (every 5-word
    shingle of it is in the main text of 90 % or more of its site's pages); and the F1 of
    the hand-written expected texts, held-out pages apart."""
    try:
        from testkit import realpages
    except ImportError:
        print("real: skipped, no testkit/realpages.py")
        return {}
    from govsi.text.maintext import whole_text

    pages = list(realpages.pages())
    expected = realpages.expected_texts()
    with_text = [p for p in pages if len(_TOKEN.findall(whole_text(p.html))) >= 20]
    graded_n = sum(p.key in expected for p in pages)
    held = sum(p.key in expected and p.part == "heldout" for p in pages)
    print(f"\nreal gov.si pages: {len(pages)}, {len(with_text)} with text; "
          f"{graded_n} with an expected text ({held} held out)")  # fmt: skip
    print(f"{'':18s} {'empty':>6s} {'templ.':>6s} {'F1':>6s} {'P':>6s} {'R':>6s} "
          f"{'F1 held':>8s} {'ms/page':>8s}")  # fmt: skip
    out: dict[str, Any] = {"pages": len(pages), "with_text": len(with_text)}
    for label, extract in extractors.items():
        texts: dict[str, str] = {}
        seconds = 0.0
        for p in with_text:
            started = time.process_time()
            texts[p.url] = extract(p.html)
            seconds += time.process_time() - started
        empty = [p.url for p in with_text if not texts[p.url].strip()]
        common: dict[str, Counter[tuple[str, ...]]] = {}
        sizes = Counter(p.site for p in with_text)
        for p in with_text:
            common.setdefault(p.site, Counter()).update(_shingles(texts[p.url]))
        template = [
            p.url
            for p in with_text
            if texts[p.url].strip()
            and all(common[p.site][s] >= 0.9 * sizes[p.site] for s in _shingles(texts[p.url]))
        ]
        graded = [(p, shingle_matching(expected[p.key], texts[p.url]))
                  for p in with_text if p.key in expected]  # fmt: skip
        s_all = scores([m for _, m in graded]) if graded else {}
        heldout = [m for p, m in graded if p.part == "heldout"]
        s_held = scores(heldout) if heldout else {}
        ms = 1000 * seconds / len(with_text)
        print(f"{label:18s} {len(empty):6d} {len(template):6d} {s_all.get('f1', 0):6.3f} "
              f"{s_all.get('precision', 0):6.3f} {s_all.get('recall', 0):6.3f} "
              f"{s_held.get('f1', 0):8.3f} {ms:8.2f}", flush=True)  # fmt: skip
        out[label] = {
            "empty": len(empty), "empty_by_site": dict(Counter(u.split("/")[2] for u in empty)),
            "template_only": len(template), "empty_urls": empty[:50],
            "template_urls": template[:50], "expected": s_all, "expected_heldout": s_held,
            "ms_per_page": ms,
        }  # fmt: skip
    if "govsi" in extractors:
        seconds = tree_given_seconds([p.html for p in with_text])
        kb = sum(len(p.body) for p in with_text) / 1000
        ms, per_50kb = 1000 * seconds / len(with_text), 1000 * seconds / kb * 50
        print(f"govsi, tree given: {ms:.2f} ms/page, {per_50kb:.2f} ms per 50 KB "
              f"({kb / len(with_text):.0f} KB a page)")  # fmt: skip
        out["govsi_tree_given"] = {"ms_per_page": ms, "ms_per_50kb": per_50kb}
    return out


if __name__ == "__main__":
    sys.exit(main())
