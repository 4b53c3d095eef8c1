"""Copies among the real gov.si pages of ``tests/data/realpages``, as govsi judges them.

For every page: its main text (``govsi.text.maintext``), exact key and MinHash signature
(``govsi.dedup.signature``). Then:

- exact-copy groups (equal exact and copy keys, what would be stored as DUPLICATE):
  how many, how many pages, how many are byte copies, and how alike the *whole* texts of
  each group's pages are (exact 5-shingle Jaccard); a group whose whole texts differ much is
  printed, with both pages' titles, to be read: is it one page to a reader?
- near copies at each threshold (estimated Jaccard of the main texts' signatures against
  every page before it, as pages are met in URL order): how many pages would be flagged;
- the empty main texts of pages with text (``--words`` or more words in all).

With ``--crawl``, the corpus is also crawled end to end on the simulated web (default
settings but ``DEFAULT_CRAWL_DELAY``; SQLite) and crawldb's rows are counted: pages stored
whole, DUPLICATEs and whether each is an exact copy, flagged near copies, empty page texts.

    PYTHONPATH=. python -m bench.real_duplicates
    PYTHONPATH=. python -m bench.real_duplicates --part heldout
    PYTHONPATH=. python -m bench.real_duplicates --crawl      # ~2 min more
"""

from __future__ import annotations

import argparse
import re
from collections import defaultdict
from typing import Any

import numpy as np

from bench.lib.results import RESULTS, ROOT, write_result
from bench.lib.sysinfo import code, machine
from govsi.dedup.signature import (
    KEY_VERSION,
    copy_key,
    exact_key_of,
    shingles,
    signature_values,
)
from govsi.text.maintext import main_text, whole_text
from testkit import realpages

TITLE = re.compile(r"<title[^>]*>(.*?)</title>", re.IGNORECASE | re.DOTALL)
THRESHOLDS = (0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9)


def jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a | b else 1.0


def title(html: str) -> str:
    m = TITLE.search(html)
    return " ".join(m.group(1).split())[:80] if m else ""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--part", choices=("tuning", "heldout"), default=None)
    ap.add_argument("--words", type=int, default=30, help="a page of this many words has text")
    ap.add_argument("--crawl", action="store_true", help="crawl the corpus end to end too")
    args = ap.parse_args()
    pages = sorted(realpages.pages(part=args.part), key=lambda p: p.url)
    rows: list[dict[str, Any]] = []
    for p in pages:
        html = p.html
        text = main_text(html)
        whole = whole_text(html)
        key = exact_key_of(text, html)
        rows.append({
            "url": p.url, "site": p.site, "body": p.body, "title": title(html), "text": text,
            "key": (key, copy_key(html)), "same_text": key,
            "sig": signature_values(text), "whole": whole,
        })  # fmt: skip
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    same_text: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        groups[r["key"]].append(r)
        same_text[r["same_text"]].append(r)
    copies = [g for g in groups.values() if len(g) > 1]
    in_copies = sum(len(g) - 1 for g in copies)
    byte_copies = sum(1 for g in copies for r in g[1:] if r["body"] == g[0]["body"])
    worst: list[tuple[float, str, str, str, str]] = []
    for g in copies:
        first = shingles(g[0]["whole"])
        for r in g[1:]:
            score = jaccard(first, shingles(r["whole"]))
            worst.append((score, g[0]["url"], r["url"], g[0]["title"], r["title"]))
    worst.sort()
    print(f"{len(rows)} real pages (part: {args.part or 'all'}), key version {KEY_VERSION}")
    print(f"exact copies (DUPLICATE): {in_copies} pages in {len(copies)} groups, "
          f"{byte_copies} of them byte copies")  # fmt: skip
    alike = sum(len(g) - 1 for g in same_text.values() if len(g) > 1)
    print(f"the same main text (kept whole, flagged 1.0 unless an exact copy): {alike} pages")
    if worst:
        print(f"  whole-text Jaccard of a copy with its original: min {worst[0][0]:.3f}, "
              f"median {worst[len(worst) // 2][0]:.3f}")  # fmt: skip
        for score, a, b, ta, tb in worst[:8]:
            print(f"  {score:.3f}  {a}  [{ta}]\n         {b}  [{tb}]")
    # Near copies: each page against the pages before it, as a crawl meets them.
    sigs = [(i, r["sig"]) for i, r in enumerate(rows) if r["sig"] is not None]
    matrix = np.array([s for _, s in sigs], dtype=np.uint32)
    flagged = {t: 0 for t in THRESHOLDS}
    best_scores: list[float] = []
    for k in range(1, len(sigs)):
        scores = (matrix[:k] == matrix[k]).mean(axis=1)
        best = float(scores.max())
        best_scores.append(best)
        for t in THRESHOLDS:
            flagged[t] += best >= t
    print("near copies flagged (best estimated Jaccard of the main text with an earlier page):")
    for t in THRESHOLDS:
        print(f"  >= {t:.2f}: {flagged[t]} pages")
    by_site: dict[str, int] = defaultdict(int)
    empty = []
    for r in rows:
        if not r["text"] and len(r["whole"].split()) >= args.words:
            empty.append(r["url"])
            by_site[r["site"]] += 1
    print(f"empty main text on pages with >= {args.words} words: {len(empty)} {dict(by_site)}")
    crawled = crawl(rows) if args.crawl else None
    write_result(RESULTS / "real_duplicates.json", {
        "crawl": crawled,
        "machine": machine(), "code": code(ROOT), "part": args.part, "pages": len(rows),
        "key_version": KEY_VERSION, "exact_copy_pages": in_copies, "exact_groups": len(copies),
        "byte_copies": byte_copies, "least_alike_copies": worst[:20],
        "near_flagged": {str(t): n for t, n in flagged.items()}, "empty_main_text": empty,
    })  # fmt: skip


def crawl(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The corpus crawled end to end (see the module's docstring), crawldb's rows counted."""
    import tempfile
    from pathlib import Path
    from urllib.parse import urlsplit

    from testkit.crawl import query, run_crawl
    from testkit.simweb import realweb
    from testkit.simweb.expected import E2E_SETTINGS

    def served(url: str) -> tuple[str, tuple[str, tuple[tuple[str, str], ...]]]:
        # The corpus page the simulated web serves at ``url`` (queries in any order).
        return urlsplit(url).hostname or "", realweb.normal_target(realweb.target_of(url))

    keys = {served(r["url"]): r["key"] for r in rows}
    web = realweb.build().start()
    with tempfile.TemporaryDirectory() as tmp:
        db_url = f"sqlite:///{Path(tmp) / 'crawldb.sqlite3'}"
        try:
            run = run_crawl(web, db_url, Path(tmp) / "run", realweb.SEEDS, timeout=900,
                            DEFAULT_CRAWL_DELAY=0.01, **E2E_SETTINGS)  # fmt: skip
        finally:
            web.stop()
        got = query(db_url, "SELECT p.url, p.page_type_code, p.html_content IS NOT NULL, o.url, "
                            "p.near_duplicate_of IS NOT NULL, t.text IS NOT NULL "
                            "FROM page p LEFT JOIN page o ON o.id = p.duplicate_of "
                            "LEFT JOIN page_text t ON t.page_id = p.id "
                            "WHERE p.http_status_code = 200")  # fmt: skip
    html = [g for g in got if g[1] == "HTML"]
    copies = [g for g in got if g[1] == "DUPLICATE"]
    exact = [g for g in copies if keys.get(served(g[0])) == keys.get(served(g[3])) is not None]
    result = {
        "returncode": run.returncode, "fetched_200": len(got),
        "corpus_pages_fetched": len({served(g[0]) for g in got} & keys.keys()),
        "html": len(html), "html_with_content": sum(1 for g in html if g[2]),
        "duplicates": len(copies), "duplicates_exact_copies": len(exact),
        "near_flagged": sum(1 for g in html if g[4]),
        "html_without_text": sum(1 for g in html if not g[5]),
    }  # fmt: skip
    print("crawled end to end:", ", ".join(f"{k} {v}" for k, v in result.items()))
    return result


if __name__ == "__main__":
    main()
