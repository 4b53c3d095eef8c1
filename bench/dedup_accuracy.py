"""Precision and recall of ``govsi.dedup.signature.is_duplicate`` on the labelled pairs of
``bench.lib.dedup_pairs``, swept over threshold, MinHash permutations and shingle size.

For every setting: the confusion counts, precision, recall and F1 of the DUPLICATE decision,
the errors per kind of pair, and the wall time per ``is_duplicate`` call (both pages parsed,
as the crawler does it). Two references at the same thresholds and shingle sizes, both exact
Jaccard of word shingles: the naive baseline on the whole page's text (no boilerplate
stripping), which template-heavy pages fool, and a ceiling on the content region exactly as
the generator wrote it, which shows the errors the threshold alone causes. The best setting
meeting the project's requirement (precision >= 0.99, recall >= 0.95) is marked ``*``; at it
(else at the best F1) the similarity per kind and examples of errors with both pages' main
text go, with everything else, to ``bench/results/dedup_accuracy.json``.

    PYTHONPATH=. python -m bench.dedup_accuracy
    PYTHONPATH=. python -m bench.dedup_accuracy --thresholds 0.8,0.9 --num-perm 128 --shingle 5
    PYTHONPATH=. python -m bench.dedup_accuracy --standin   # a local stand-in, not govsi.dedup
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import re
import sys
import time
from collections import Counter
from pathlib import Path
from statistics import median
from types import SimpleNamespace
from typing import Any

from lxml import html as lxml_html

from bench.lib.dedup_pairs import KINDS, Pair, build_pairs
from bench.lib.ministry import CLASSES
from bench.lib.results import RESULTS, ROOT, write_result
from bench.lib.sysinfo import code, machine

WORD = re.compile(r"\w+")
STANDIN_TEMPLATE = re.compile(
    r"nav|menu|meni|header|glava|footer|noga|cookie|piskot|sidebar|stranski|breadcrumb|"
    r"drobtin|related|sorodne|share|aside"
)


def _words_of(element: Any) -> list[str]:
    return WORD.findall(" ".join(element.itertext()).lower())


def _parse(html: str) -> Any:
    doc = lxml_html.document_fromstring(html)
    for bad in doc.xpath("//script | //style | //head"):
        bad.drop_tree()
    return doc


def _shingles(words: list[str], k: int) -> set[str]:
    if len(words) <= k:
        return {" ".join(words)} if words else set()
    return {" ".join(words[i : i + k]) for i in range(len(words) - k + 1)}


def standin() -> SimpleNamespace:
    """A crude local stand-in with govsi.dedup.signature's API, to develop this without it."""
    from datasketch import MinHash

    def main_text(html: str) -> str:
        doc = _parse(html)
        main = doc.xpath("//main | //article | //*[@role='main']")
        if main:
            return " ".join(_words_of(main[0]))
        for e in list(doc.iter()):
            names = f"{e.get('class', '')} {e.get('id', '')}".lower()
            if e.getparent() is not None and (
                e.tag in ("nav", "header", "footer", "aside") or STANDIN_TEMPLATE.search(names)
            ):
                e.drop_tree()
        return " ".join(_words_of(doc))

    def exact_key(html: str) -> str:
        return hashlib.sha256(main_text(html).encode()).hexdigest()

    def signature(html: str, *, num_perm: int = 128, shingle_size: int = 5) -> MinHash:
        m = MinHash(num_perm=num_perm, seed=1)
        m.update_batch([s.encode() for s in _shingles(main_text(html).split(), shingle_size)])
        return m

    def similarity(a: str, b: str, *, num_perm: int = 128, shingle_size: int = 5) -> float:
        kw = {"num_perm": num_perm, "shingle_size": shingle_size}
        return float(signature(a, **kw).jaccard(signature(b, **kw)))

    def is_duplicate(a: str, b: str, *, threshold: float = 0.9, **kw: int) -> bool:
        return exact_key(a) == exact_key(b) or similarity(a, b, **kw) >= threshold

    return SimpleNamespace(main_text=main_text, exact_key=exact_key, signature=signature,
                           similarity=similarity, is_duplicate=is_duplicate)  # fmt: skip


def score(pairs: list[Pair], decisions: list[bool], seconds: float) -> dict[str, Any]:
    c = Counter((p.duplicate, d) for p, d in zip(pairs, decisions, strict=True))
    tp, fp, fn, tn = c[True, True], c[False, True], c[True, False], c[False, False]
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    errors = Counter(p.kind for p, d in zip(pairs, decisions, strict=True) if d != p.duplicate)
    return {
        "tp": tp, "fp": fp, "fn": fn, "tn": tn, "precision": round(precision, 4),
        "recall": round(recall, 4), "f1": round(f1, 4),
        "ms_per_pair": round(1000 * seconds / len(pairs), 3),
        "errors_by_kind": dict(sorted(errors.items())),
        "meets": precision >= 0.99 and recall >= 0.95,
    }  # fmt: skip


def template_share(pairs: list[Pair]) -> dict[str, float]:
    """The template's share of the words of the short news pages (the hard negatives)."""
    shares = []
    for p in pairs:
        if p.kind == "short_news_different":
            doc = _parse(p.a_html)
            skip = ("share", *CLASSES["related"].split())
            own = doc.xpath("//*[@id='vsebina']/*[not(@class) or @class!='share']")
            words = sum(len(_words_of(e)) for e in own if e.get("class") not in skip)
            shares.append(1 - words / len(_words_of(doc)))
    return {"min": round(min(shares), 3), "median": round(median(shares), 3),
            "max": round(max(shares), 3)}  # fmt: skip


def row(r: dict[str, Any], mark: str = "") -> str:
    by_count = sorted(r["errors_by_kind"].items(), key=lambda x: -x[1])
    errs = ", ".join(f"{k} {n}" for k, n in by_count)
    return (f"{mark:1} {r['shingle']:>2} {r.get('num_perm', '-'):>4} {r['threshold']:>5.2f} "
            f"{r['tp']:>4} {r['fp']:>4} {r['fn']:>4} {r['tn']:>4} {r['precision']:>6.3f} "
            f"{r['recall']:>6.3f} {r['f1']:>6.3f} {r['ms_per_pair']:>7.2f}  {errs}")  # fmt: skip


HEAD = "  k  perm   thr   TP   FP   FN   TN   prec recall     F1  ms/pair  errors by kind"


def whole_page(html: str) -> list[str]:
    """The naive baseline's text: every word of the page, template and all."""
    return _words_of(_parse(html))


def ideal_main(html: str) -> list[str]:
    """The ceiling's text: the content region exactly as bench.lib.dedup_pairs wrote it (no
    header, menu, sidebar, footer, cookie banner, related or share box). Only this benchmark
    knows it; it shows which errors the threshold alone would cause."""
    doc = _parse(html)
    wraps = (
        "//*[@data-bench='content'] | //main[@id='vsebina'] | //*[@class='print-body'] | "
        "//article | //*[@id='content']"
    )
    root = doc.xpath(wraps)[0]
    for e in root.xpath(".//*[@class]"):
        if e.get("class") in ("share", *CLASSES["related"].split()):
            e.drop_tree()
    return _words_of(root)


def baseline(pairs: list[Pair], thresholds: list[float], sizes: list[int], words: Any) -> list:
    """Exact Jaccard of the word shingles of ``words(html)``: equal texts are duplicates."""
    out = []
    for k in sizes:
        t0 = time.perf_counter()
        sims = []
        for p in pairs:
            a, b = (_shingles(words(h), k) for h in (p.a_html, p.b_html))
            sims.append(len(a & b) / len(a | b) if a | b else 1.0)
        seconds = time.perf_counter() - t0
        for t in thresholds:
            out.append({"shingle": k, "threshold": t,
                        **score(pairs, [s >= t for s in sims], seconds)})  # fmt: skip
    return out


def sweep(dd: Any, pairs: list[Pair], args: argparse.Namespace) -> tuple[list, dict]:
    results, sims = [], {}
    for k in args.shingle:
        for n in args.num_perm:
            kw = {"num_perm": n, "shingle_size": k}
            sims[k, n] = [dd.similarity(p.a_html, p.b_html, **kw) for p in pairs]
            for t in args.thresholds:
                t0 = time.perf_counter()
                got = [dd.is_duplicate(p.a_html, p.b_html, threshold=t, **kw) for p in pairs]
                r = {"shingle": k, "num_perm": n, "threshold": t,
                     **score(pairs, got, time.perf_counter() - t0)}  # fmt: skip
                results.append(r)
                print(f"k={k} num_perm={n} threshold={t}: P {r['precision']:.3f} "
                      f"R {r['recall']:.3f}", file=sys.stderr, flush=True)  # fmt: skip
    return results, sims


def pick_best(results: list[dict]) -> dict | None:
    ok = [r for r in results if r["meets"]]
    return max(ok, key=lambda r: (r["f1"], -r["num_perm"], -r["ms_per_pair"])) if ok else None


def diagnose(dd: Any, pairs: list[Pair], setting: dict, sims: list[float]) -> dict[str, Any]:
    """Similarity per kind, and examples of the errors with both pages' main text."""
    by_kind: dict[str, list[float]] = {}
    for p, s in zip(pairs, sims, strict=True):
        by_kind.setdefault(p.kind, []).append(s)
    per_kind = {
        k: {"duplicate": KINDS[k][0], "min": round(min(v), 3), "median": round(median(v), 3),
            "max": round(max(v), 3), "errors": setting["errors_by_kind"].get(k, 0)}
        for k, v in by_kind.items()
    }  # fmt: skip
    examples: list[dict[str, Any]] = []
    shown: Counter[str] = Counter()
    kw = {"num_perm": setting["num_perm"], "shingle_size": setting["shingle"]}
    for p, s in zip(pairs, sims, strict=True):
        if shown[p.kind] >= 3:
            continue
        dup = dd.is_duplicate(p.a_html, p.b_html, threshold=setting["threshold"], **kw)
        if dup != p.duplicate:
            shown[p.kind] += 1
            examples.append({"kind": p.kind, "label": p.duplicate, "similarity": round(s, 3),
                             "exact_key_equal": dd.exact_key(p.a_html) == dd.exact_key(p.b_html),
                             "main_text_a": dd.main_text(p.a_html)[:600],
                             "main_text_b": dd.main_text(p.b_html)[:600]})  # fmt: skip
    return {"similarity_by_kind": per_kind, "error_examples": examples}


def main(argv: list[str] | None = None) -> int:
    def floats(s: str) -> list[float]:
        return [float(x) for x in s.split(",")]

    def ints(s: str) -> list[int]:
        return [int(x) for x in s.split(",")]

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--thresholds", type=floats, default=floats("0.7,0.8,0.85,0.9,0.95"))
    ap.add_argument("--num-perm", type=ints, default=ints("64,128,256"))
    ap.add_argument("--shingle", type=ints, default=ints("3,4,5,7"))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--standin", action="store_true", help="a local stand-in, not govsi.dedup.signature"
    )
    ap.add_argument("--out", type=Path, default=RESULTS / "dedup_accuracy.json")
    args = ap.parse_args(argv)
    dd = standin() if args.standin else importlib.import_module("govsi.dedup.signature")
    dedup_py = ROOT / "govsi" / "dedup.py"
    dedup_sha = (
        hashlib.sha256(dedup_py.read_bytes()).hexdigest()[:16] if dedup_py.exists() else None
    )
    source = "stand-in (bench.dedup_accuracy.standin)" if args.standin else "govsi.dedup.signature"
    pairs = build_pairs(args.seed)
    share = template_share(pairs)
    print(f"{len(pairs)} pairs ({sum(p.duplicate for p in pairs)} duplicates) of {len(KINDS)} "
          f"kinds; template share of short news text: min {share['min']:.2f}, median "
          f"{share['median']:.2f}, max {share['max']:.2f}", flush=True)  # fmt: skip
    results, sims = sweep(dd, pairs, args)
    best = pick_best(results)
    focus = best or max(results, key=lambda r: r["f1"])
    print(f"\nis_duplicate of {source}  (* best setting with precision >= 0.99 and recall >= "
          f"0.95, + also meets it, ~ best F1 when none does)\n{HEAD}")  # fmt: skip
    for r in results:
        print(row(r, "*" if r is best else "+" if r["meets"] else "~" if r is focus else ""))
    print("\nbaseline: whole-page text, exact Jaccard, no template stripping\n" + HEAD)
    base = baseline(pairs, args.thresholds, args.shingle, whole_page)
    for r in base:
        print(row(r))
    print("\nceiling: the generator's own content region, exact Jaccard\n" + HEAD)
    ceiling = baseline(pairs, args.thresholds, args.shingle, ideal_main)
    for r in ceiling:
        print(row(r))
    print("\n" + (f"* best setting meeting precision >= 0.99 and recall >= 0.95:\n{HEAD}\n"
                  f"{row(focus, '*')}" if best else "no setting meets precision >= 0.99 and "
                  f"recall >= 0.95; the best F1:\n{HEAD}\n{row(focus)}"))  # fmt: skip
    diag = diagnose(dd, pairs, focus, sims[focus["shingle"], focus["num_perm"]])
    print(
        f"\nsimilarity per kind at k={focus['shingle']}, num_perm={focus['num_perm']} "
        f"(errors at threshold {focus['threshold']}):"
    )
    for kind, d in diag["similarity_by_kind"].items():
        label = "dup" if d["duplicate"] else "not dup"
        print(
            f"  {kind:24} {label:8} min {d['min']:.3f}  median {d['median']:.3f}  "
            f"max {d['max']:.3f}  errors {d['errors']}"
        )
    report = {
        "source": source, "seed": args.seed, "machine": machine(), "code": code(ROOT),
        "dedup_py_sha256": None if args.standin else dedup_sha,
        "dataset": {k: {"duplicate": d, "pairs": n} for k, (d, n) in KINDS.items()},
        "template_share_short_news": share,
        "settings": results, "baseline": base, "ceiling": ceiling, "best": best,
        "focus": focus, **diag,
    }  # fmt: skip
    if dedup_sha and dedup_py.exists() and not args.standin:
        now = hashlib.sha256(dedup_py.read_bytes()).hexdigest()[:16]
        report["dedup_py_changed_during_run"] = now != dedup_sha
        if now != dedup_sha:
            print(
                f"WARNING: govsi/dedup/signature.py changed during the run ({dedup_sha} -> {now})"
            )
    print()
    write_result(args.out, report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
