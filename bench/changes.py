"""What the changes (govsi/changes) cost, and why their diff is diff-match-patch:

- ``quality``: real gov.si main texts (tests/data/realpages) each edited the way pages
  change (a paragraph added, one removed, a sentence rewritten, dates and numbers changed),
  diffed word by word by diff-match-patch (``word_diff``, no deadline met) and by difflib's
  SequenceMatcher over the same words (autojunk on, its default, and off): the words each
  marks changed against the words the edits touched (Myers' diff is minimal; more is a
  noisier diff), and the time per pair;
- ``adversarial``: 200 000-character inputs (repeated words shifted, two alphabets of
  repeated words, random words of ten and of 300, distinct words reversed, one giant
  word, binary-looking text, control characters, 3.5 M characters cut): seconds and
  peak RSS above the process's start of each, every one in a fresh process killed at
  ``--limit`` seconds;
- ``scan``: a search-word filter's cost per 1 000 candidate changes read (``find_changes``
  over an SQLite crawldb of ``--changes`` changes whose texts are real main texts, a query
  that matches none, so that every candidate is read and matched);
- ``listing``: a page of 50 and the next under each filter without search words (SQL and
  the texts read; excerpts' diffs off: CHANGES_EXCERPT_BUDGET 0) from ``--listed`` changes.

    PYTHONPATH=. python -m bench.changes                     # ~3 min
    PYTHONPATH=. python -m bench.changes --parts scan --changes 5000

Writes bench/results/changes.json.
"""

from __future__ import annotations

import argparse
import difflib
import random
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from bench.lib.results import RESULTS, write_run

PARTS = ("quality", "adversarial", "scan", "listing")
N = 200_000


def main_texts(most: int) -> list[str]:
    from govsi.text.maintext import main_text
    from testkit.realpages import pages

    texts = [main_text(p.html) for p in pages()]
    return [t for t in texts if len(t.split()) >= 50][:most]


def edited(text: str, donor: str, rng: random.Random) -> tuple[str, int]:
    """``text`` changed as pages change, and how many words the edits touched."""
    paras = text.split("\n")
    touched = 0
    for _ in range(rng.randint(1, 4)):
        edit = rng.choice(("add", "remove", "rewrite", "numbers"))
        i = rng.randrange(len(paras))
        if edit == "add":
            added = " ".join(donor.split()[: rng.randint(5, 60)])
            paras.insert(i, added)
            touched += len(added.split())
        elif edit == "remove" and len(paras) > 1:
            touched += len(paras.pop(i).split())
        elif edit == "rewrite":
            words = paras[i].split()
            if words:
                j = rng.randrange(len(words))
                k = rng.randint(1, 8)
                new = donor.split()[:k]
                touched += min(k, len(words) - j) + len(new)
                paras[i] = " ".join(words[:j] + new + words[j + k :])
        else:
            words = paras[i].split()
            for j, w in enumerate(words):
                if any(c.isdigit() for c in w) or rng.random() < 0.05:
                    words[j] = str(rng.randint(1, 2030))
                    touched += 2
            paras[i] = " ".join(words)
    return "\n".join(paras), touched


def changed_words(ops: list[tuple[str, str]]) -> int:
    return sum(len(text.split()) for op, text in ops if op != "equal")


def by_difflib(before: str, after: str, autojunk: bool) -> list[tuple[str, str]]:
    from govsi.changes.diff import tokens

    a, b = tokens(before), tokens(after)
    ops: list[tuple[str, str]] = []
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=autojunk)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            ops.append(("equal", "".join(a[i1:i2])))
            continue
        if i2 > i1:
            ops.append(("delete", "".join(a[i1:i2])))
        if j2 > j1:
            ops.append(("insert", "".join(b[j1:j2])))
    return ops


def by_dmp(before: str, after: str) -> list[tuple[str, str]]:
    from govsi.changes.diff import word_diff

    return list(word_diff(before, after, timeout=0).ops)


def quality(pairs: int) -> list[dict[str, Any]]:
    rng = random.Random(52)
    texts = main_texts(pairs + 1)
    cases = [(t, *edited(t, texts[(i + 1) % len(texts)], rng)) for i, t in enumerate(texts)]
    rows = []
    for name, diff in (
        ("diff-match-patch", by_dmp),
        ("difflib autojunk", lambda a, b: by_difflib(a, b, True)),
        ("difflib", lambda a, b: by_difflib(a, b, False)),
    ):
        marked = truth = 0
        started = time.perf_counter()
        for before, after, touched in cases:
            ops = diff(before, after)
            assert "".join(t for op, t in ops if op != "insert") == before
            assert "".join(t for op, t in ops if op != "delete") == after
            marked += changed_words(ops)
            truth += touched
        seconds = time.perf_counter() - started
        row = {"diff": name, "pairs": len(cases), "words_marked": marked, "words_edited": truth,
               "ms_per_pair": 1000 * seconds / len(cases)}  # fmt: skip
        print(f"{name:18s} {len(cases)} pairs: {marked} words marked changed for {truth} "
              f"edited, {row['ms_per_pair']:.2f} ms per pair", flush=True)  # fmt: skip
        rows.append(row)
    return rows


def adversarial_inputs() -> dict[str, tuple[str, str]]:
    rng = random.Random(52)
    noise = lambda: bytes(rng.randrange(256) for _ in range(N)).decode("latin-1")  # noqa: E731
    return {
        "repeated words, shifted by one": ("in je " * (N // 6), "je in " * (N // 6)),
        "repeated words, two alphabets": ("a b " * (N // 4), "b c " * (N // 4)),
        "random words of ten": (
            " ".join(rng.choice("abcdefghij") for _ in range(N // 2)),
            " ".join(rng.choice("abcdefghij") for _ in range(N // 2)),
        ),
        # ~330 of each word: under autojunk's 1 % of 100 000 tokens, so none is junk
        "random words of 300": (
            " ".join(f"w{rng.randrange(300)}" for _ in range(N // 4)),
            " ".join(f"w{rng.randrange(300)}" for _ in range(N // 4)),
        ),
        "distinct words, reversed": (
            " ".join(f"w{i}" for i in range(N // 8)),
            " ".join(f"w{i}" for i in reversed(range(N // 8))),
        ),
        "one giant word": ("x" * N, "y" * N),
        "binary-looking": (noise(), noise()),
        "control characters": ("\x00\x1b[2J " * (N // 6), "\x1b]52;c;AAAA\x07 " * (N // 14)),
        "3.5 M characters (cut)": ("beseda " * 500_000, "druga " * 500_000),
    }


def _rss_mib(field: str) -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field):
            return int(line.split()[1]) / 1024
    return 0.0


def one_adversarial(name: str, diff: str) -> None:
    """One diff of one input: its seconds and the process's peak RSS above its RSS before
    (tracemalloc would slow the pure-Python diff tenfold and trip its deadline)."""
    before, after = adversarial_inputs()[name]
    rss = _rss_mib("VmRSS")
    started = time.perf_counter()
    if diff == "diff-match-patch":
        from govsi.changes.diff import word_diff

        d = word_diff(before, after)
        note = f"truncated={d.truncated} timed_out={d.timed_out} runs={len(d.ops)}"
    else:
        note = f"runs={len(by_difflib(before[:N], after[:N], diff == 'difflib autojunk'))}"
    seconds = time.perf_counter() - started
    print(f"{seconds:.3f} {_rss_mib('VmHWM') - rss:.1f} {note}")


def adversarial(limit: float) -> list[dict[str, Any]]:
    rows = []
    for name in adversarial_inputs():
        for diff in ("diff-match-patch", "difflib autojunk", "difflib"):
            code = f"from bench.changes import one_adversarial; one_adversarial({name!r}, {diff!r})"
            try:
                cmd = [sys.executable, "-c", code]
                done = subprocess.run(cmd, capture_output=True, text=True, timeout=limit)
                out = done.stdout.split()
                row = {"input": name, "diff": diff, "seconds": float(out[0]),
                       "peak_mib": float(out[1]), "note": " ".join(out[2:])}  # fmt: skip
            except subprocess.TimeoutExpired:
                row = {"input": name, "diff": diff, "seconds": None, "note": f"> {limit} s"}
            print(f"{name:32s} {diff:18s} {row.get('seconds')} s {row.get('peak_mib')} MiB "
                  f"peak RSS above the start  {row['note']}", flush=True)  # fmt: skip
            rows.append(row)
    return rows


def scan(changes: int) -> list[dict[str, Any]]:
    from sqlalchemy import insert

    from govsi.changes.config import ChangesConfig
    from govsi.changes.query import ChangeFilter, find_changes
    from govsi.store import database, schema

    texts = main_texts(2000)
    now = datetime(2026, 11, 29)
    with tempfile.TemporaryDirectory() as tmp:
        engine = database.make_engine(f"sqlite:///{Path(tmp) / 'crawldb.sqlite3'}")
        database.migrate(engine)
        with engine.begin() as conn:
            conn.execute(insert(schema.SITE), [{"id": 1, "domain": "a.gov.si"}])
            conn.execute(insert(schema.PAGE), [
                {"id": i, "site_id": 1, "url": f"https://a.gov.si/p{i}", "page_type_code": "HTML"}
                for i in range(1, changes + 1)
            ])  # fmt: skip
            conn.execute(insert(schema.PAGE_TEXT), [
                {"page_id": i, "kind": "HTML", "status": "ok", "text": texts[i % len(texts)],
                 "extracted_at": now}
                for i in range(1, changes + 1)
            ])  # fmt: skip
            conn.execute(insert(schema.PAGE_CHANGE), [
                {"page_id": i, "visit_time": now - timedelta(minutes=i), "kind": "changed",
                 "title": f"Stran {i}", "text_before": texts[(i + 7) % len(texts)]}
                for i in range(1, changes + 1)
            ])  # fmt: skip
        chars = sum(len(texts[i % len(texts)]) for i in range(1, changes + 1)) / changes
        rows = []
        for query in ("zzzyx", "javna naročila zzzyx"):
            config = ChangesConfig(scan_max=changes)
            for run in ("cold", "warm"):
                started = time.perf_counter()
                page = find_changes(engine, ChangeFilter(query=query), config=config)
                seconds = time.perf_counter() - started
                per = 1e6 * seconds / page.scanned
                print(f"scan {query!r} ({run} caches): {page.scanned} candidates, "
                      f"{seconds:.2f} s, {per:.0f} ms per 1 000 (texts {chars:.0f} characters "
                      "on average)", flush=True)  # fmt: skip
                row = {"query": query, "run": run, "scanned": page.scanned, "seconds": seconds,
                       "ms_per_1000": per, "avg_chars": chars}  # fmt: skip
                rows.append(row)
        started = time.perf_counter()
        plain = find_changes(engine, ChangeFilter(), limit=50)
        print(f"a page of 50 without search words: {time.perf_counter() - started:.3f} s "
              f"({len(plain.entries)} entries with excerpts)", flush=True)  # fmt: skip
        engine.dispose()
    return rows


def listing(changes: int) -> list[dict[str, Any]]:
    from sqlalchemy import insert

    from govsi.changes.config import ChangesConfig
    from govsi.changes.query import ChangeFilter, find_changes
    from govsi.store import database, schema

    now = datetime(2026, 11, 29)
    pages = range(1, changes + 1)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        engine = database.make_engine(f"sqlite:///{Path(tmp) / 'crawldb.sqlite3'}")
        database.migrate(engine)
        with engine.begin() as conn:  # one page in 50 on b.gov.si, one in 7 a PDF
            conn.execute(insert(schema.SITE), [{"id": 1, "domain": "a.gov.si"},
                                               {"id": 2, "domain": "b.gov.si"}])  # fmt: skip
            conn.execute(insert(schema.PAGE), [
                {"id": i, "site_id": 2 if i % 50 == 0 else 1, "url": f"https://a.gov.si/p{i}",
                 "page_type_code": "BINARY" if i % 7 == 0 else "HTML"} for i in pages
            ])  # fmt: skip
            conn.execute(insert(schema.PAGE_DATA), [
                {"page_id": i, "data_type_code": "PDF"} for i in pages if i % 7 == 0
            ])  # fmt: skip
            conn.execute(insert(schema.PAGE_TEXT), [
                {"page_id": i, "kind": "HTML", "status": "ok", "text": f"besedilo {i}",
                 "extracted_at": now} for i in pages
            ])  # fmt: skip
            conn.execute(insert(schema.PAGE_CHANGE), [
                {"page_id": i, "visit_time": now - timedelta(minutes=i), "kind": "changed",
                 "title": f"Stran {i}", "text_before": f"besedilo {i - 1}"} for i in pages
            ])  # fmt: skip
        config = ChangesConfig(excerpt_budget=0)
        filters = {
            "none": ChangeFilter(),
            "since 7 days": ChangeFilter(since=now - timedelta(days=7)),
            "host (1 in 50)": ChangeFilter(hosts=("b.gov.si",)),
            "type pdf (1 in 7)": ChangeFilter(types=("pdf",)),
            "until 30 days ago": ChangeFilter(until=now - timedelta(days=30)),
        }
        for name, flt in filters.items():
            times = []
            before = None
            for _ in range(2):
                started = time.perf_counter()
                page = find_changes(engine, flt, limit=50, before=before, config=config)
                times.append(1000 * (time.perf_counter() - started))
                before = page.next_before
            print(f"listing, filter {name}: first page {times[0]:.0f} ms, next {times[1]:.0f} ms",
                  flush=True)  # fmt: skip
            rows.append({"filter": name, "first_ms": times[0], "next_ms": times[1]})
        engine.dispose()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--parts", default=",".join(PARTS))
    parser.add_argument("--pairs", type=int, default=300, help="real texts edited (quality)")
    parser.add_argument("--limit", type=float, default=60.0, help="seconds per adversarial run")
    parser.add_argument("--changes", type=int, default=3000, help="changes in the scan's crawldb")
    parser.add_argument("--listed", type=int, default=50000, help="changes in the listing's")
    args = parser.parse_args()
    results: list[dict[str, Any]] = []
    parts = args.parts.split(",")
    if "quality" in parts:
        results += [{"part": "quality", **r} for r in quality(args.pairs)]
    if "adversarial" in parts:
        results += [{"part": "adversarial", **r} for r in adversarial(args.limit)]
    if "scan" in parts:
        results += [{"part": "scan", **r} for r in scan(args.changes)]
    if "listing" in parts:
        results += [{"part": "listing", **r} for r in listing(args.listed)]
    write_run(RESULTS / "changes.json", args, results)


if __name__ == "__main__":
    main()
