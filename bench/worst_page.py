"""The worst page of each kind: what the heaviest input costs each per-page operation that
runs on the reactor thread, in ms per 100 KB, at a few sizes (issue 16: every one linear).

Pages: an onclick of ``window . window . ...`` (with and without a ``location`` at the
end) and an unterminated template literal; nested ``class="content"`` blocks, nested
``id="app"`` roots, nested ``<noscript>`` text, nested ``<svg>`` over a large subtree;
nested link blocks (no content column: every block judged as a menu); runs of removed
siblings with text between them; pages full of ``<main>``/``<article>``; a page of N links,
at the top and under 2000 nested divs; scripts under 2000 nested divs; a robots.txt of
wildcard rules that all apply to the path checked. Operations: ``onclick_targets``,
``parse_html``, ``extract_links`` (with MAX_LINKS_PER_PAGE), ``main_text`` (its parse
included: it consumes the tree), ``needs_browser`` and ``onload_scripts`` (on a parsed
tree), robots.txt ``parse`` and one ``allowed`` check; ``scrapy warc pack``'s ``title_of``
on heads of unclosed ``<title>`` tags.

    PYTHONPATH=. python -m bench.worst_page      # ~1 min; bench/results/worst_page.json

Issue 27's hostile hosts, each crawled for real beside an ordinary site (peak RSS, the
reactor's longest stall, what was recorded): ``bench/hostile_crawl.py``, also run as

    PYTHONPATH=. python -m bench.worst_page --crawl [--only NAME]   # ~8 min

30 MiB hostile pages read as the crawl reads a large page, in a worker process over its
pipes, with the default limits (``bench.lib.worker_pages``): time, worker peak, outcome.

    PYTHONPATH=. python -m bench.worst_page --worker   # ~20 s
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from bench.lib.results import RESULTS, ROOT, write_result
from bench.lib.sysinfo import code, machine
from govsi.archive.pack import title_of
from govsi.render.scripts import needs_browser, onload_scripts
from govsi.robots import rules as robots
from govsi.text.maintext import main_text
from govsi.web.extract import extract_links, onclick_targets, parse_html

MAX_LINKS = 10_000
PAGE = "http://a.gov.si/"
ROBOTS_URL = "https://x.gov.si/robots.txt"
CHECKED_URL = "https://x.gov.si/" + "a" * 200 + "b"  # every rule of _robots applies to it


def _nested(opening: str, n: int, inner: str = "x") -> str:
    return f"<html><body>{opening * n}{inner}{'</div>' * n}</body></html>"


def _links(n: int, depth: int = 0) -> str:
    links = "".join(f'<a href="/p{i}">{i}</a>' for i in range(n))
    return f"<html><body>{'<div>' * depth}{links}</body>"


def _anchors(n: int) -> str:
    return "<html><body>" + "".join(f'<a href="/x{i}">y</a>' for i in range(n)) + "</body></html>"


def _robots(n: int) -> str:
    # 25 000 of these fit in the 500 KiB that robots.parse reads.
    return "User-agent: *\n" + "".join(f"Disallow:/a*{i}*b\n" for i in range(n))


# (prepare the page's text, untimed; the timed operation on what prepare made)
Operation = tuple[Callable[[str], Any], Callable[[Any], Any]]


def _parsed(run: Callable[[Any], Any]) -> Operation:
    """(prepare, run) for an operation on the parsed tree: the parse is not timed."""
    return (lambda text: (text, parse_html(text))), (lambda page: run(page[1]))


def _text(run: Callable[[str], Any]) -> Operation:
    return (lambda text: text), run


def _links_op(cap: int) -> Operation:
    prepare, _ = _parsed(lambda root: None)
    return prepare, lambda page: extract_links(page[0], PAGE, page[1], max_links=cap)


def _onload(root: Any) -> Any:
    return onload_scripts(root, PAGE, lambda src: True)


# (kind, page of size parameter n, operation, (prepare, run), n values)
CASES: list[tuple[str, Callable[[int], str], str, Operation, list[int]]] = [
    ("onclick chain, no location", lambda n: "window . " * n + "locatio", "onclick_targets",
     _text(onclick_targets), [2_000, 8_000, 32_000]),
    ("onclick chain + location", lambda n: "window . " * n + "location='/x'",
     "onclick_targets", _text(onclick_targets), [2_000, 8_000, 32_000]),
    ("onclick unterminated `", lambda n: "location=`" + "a" * n, "onclick_targets",
     _text(onclick_targets), [100_000, 400_000, 1_600_000]),
    ("nested content", lambda n: _nested('<div class="content">', n), "main_text",
     _text(main_text), [500, 2_000, 32_000]),
    ("nested content", lambda n: _nested('<div class="content">', n), "parse_html",
     _text(parse_html), [500, 2_000, 32_000]),
    ("nested link blocks", lambda n: _nested('<div><a href="/x">meni</a> ', n), "main_text",
     _text(main_text), [500, 2_000, 32_000]),
    ("nested svg over 20n <p>", lambda n: "<html><body><div class=content>" + "<svg>" * n
     + "<p>a</p>" * (20 * n), "main_text", _text(main_text), [100, 400, 1_600]),
    ("<script>s</script>slovo x N", lambda n: "<html><body><p>a</p>"
     + "<script>s</script>slovo " * n, "main_text", _text(main_text), [2_500, 10_000, 40_000]),
    ("<nav>s</nav>slovo x N", lambda n: "<html><body><p>a</p>" + "<nav>s</nav>slovo " * n,
     "main_text", _text(main_text), [2_500, 10_000, 40_000]),
    ("<article><main><p role=main> x N", lambda n: "<html><body>"
     + '<article>a</article><main>b</main><p role="main">c</p>' * n, "main_text",
     _text(main_text), [1_250, 5_000, 20_000]),
    ("nested app roots", lambda n: _nested('<div id="app">', n), "needs_browser",
     _parsed(needs_browser), [500, 2_000, 32_000]),
    ("nested noscript text", lambda n: "<html><body>" + "<noscript>besedilo " * n,
     "needs_browser", _parsed(needs_browser), [250, 500, 2_000]),
    ("N scripts under 2000 divs", lambda n: "<html><body>" + "<div>" * 2000
     + "<script>go()</script>" * n, "onload_scripts", _parsed(_onload), [2_500, 10_000, 40_000]),
    ("N links", _links, "extract_links", _links_op(MAX_LINKS), [20_000, 50_000, 200_000]),
    ("N links", _links, "extract_links, no cap", _links_op(0), [20_000, 50_000, 200_000]),
    ("N links under 2000 divs", lambda n: _links(n, 2000), "extract_links, no cap",
     _links_op(0), [20_000, 50_000, 200_000]),
    # Issue 27's open gap: a page of megabytes of tags (30 MiB at the last size) is still
    # parsed, its links extracted and its plan made on the reactor thread.
    ("N anchors (30 MiB at 1.3 M)", _anchors, "parse_html", _text(parse_html),
     [100_000, 400_000, 1_300_000]),
    ("N anchors (30 MiB at 1.3 M)", _anchors, "extract_links", _links_op(MAX_LINKS),
     [100_000, 400_000, 1_300_000]),
    ("N anchors (30 MiB at 1.3 M)", _anchors, "needs_browser", _parsed(needs_browser),
     [100_000, 400_000, 1_300_000]),
    ("robots.txt of N wildcard rules", _robots, "parse",
     _text(lambda t: robots.parse(t, ROBOTS_URL)), [2_500, 10_000, 25_000]),
    # scrapy warc pack's titles: it reads the first 64 K characters (9 300 tags).
    ("<title> x N, never closed", lambda n: "<title>" * n, "title_of", _text(title_of),
     [1_000, 4_000, 9_300]),
    ("<title x N", lambda n: "<title " * n, "title_of", _text(title_of), [1_000, 4_000, 9_300]),
]  # fmt: skip


def _check(rules: robots.RobotsRules) -> bool:
    return rules.allowed(CHECKED_URL, "govsi-crawler")


def _check_first(text: str) -> bool:
    return _check(robots.parse(text, ROBOTS_URL))


def _best_ms(run: Callable[[], Any], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - started)
    return best * 1000


def measure(repeat: int = 3, only: str = "") -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for kind, make, op, (prepare, run), sizes in CASES:
        if only not in f"{kind} {op}":
            continue
        for n in sizes:
            text = make(n)
            page = prepare(text)
            ms = _best_ms(lambda: run(page), repeat)  # noqa: B023 - called at once
            kb = len(text.encode()) / 1024
            rows.append({"page": kind, "n": n, "kb": round(kb, 1), "operation": op,
                         "ms": round(ms, 2), "ms_per_100kb": round(ms / kb * 100, 2)})  # fmt: skip
    # The first allowed() check builds the crawler's policy (filing the rules); then one
    # check against a robots.txt whose every rule applies to the path.
    for n in (2_500, 10_000, 25_000) if only in "robots.txt allowed" else ():
        text = _robots(n)
        kb = len(text.encode()) / 1024
        rules = robots.parse(text, ROBOTS_URL)
        _check(rules)  # the policy is built on first use
        for op, run in (
            ("parse + first allowed", partial(_check_first, text)),
            ("allowed, every rule applies", partial(_check, rules)),
        ):
            ms = _best_ms(run, repeat)
            rows.append({"page": "robots.txt of N wildcard rules", "n": n, "kb": round(kb, 1),
                         "operation": op, "ms": round(ms, 3),
                         "ms_per_100kb": round(ms / kb * 100, 3)})  # fmt: skip
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(RESULTS / "worst_page.json"))
    ap.add_argument("--repeat", type=int, default=3, help="best of this many runs")
    ap.add_argument("--only", default="", help="only the cases whose page or operation has this")
    ap.add_argument("--crawl", action="store_true", help="the hostile hosts, crawled")
    ap.add_argument("--worker", action="store_true", help="30 MiB pages read in a worker")
    args, rest = ap.parse_known_args()
    if args.crawl:
        only = ["--only", args.only] if args.only else []
        cmd = [sys.executable, "-m", "bench.hostile_crawl", *only, *rest]
        return subprocess.run(cmd, check=False).returncode
    if args.worker:
        from bench.lib.worker_pages import worker_rows

        found = worker_rows()
        for w in found:
            print(f"{w['page']:24} {w['mib']:5} MiB {w['seconds']:6} s  worker peak "
                  f"{w['worker_peak_mb']:4} MB  {w['outcome']}")  # fmt: skip
        write_result(RESULTS / "worst_page_worker.json",
                     {"machine": machine(), "code": code(ROOT), "rows": found})  # fmt: skip
        return 0
    rows = measure(args.repeat, args.only)
    print(f"{'page':34} {'operation':28} {'n':>9} {'KB':>8} {'ms':>9} {'ms/100KB':>9}")
    for r in rows:
        print(f"{r['page']:34} {r['operation']:28} {r['n']:>9} {r['kb']:>8} {r['ms']:>9} "
              f"{r['ms_per_100kb']:>9}")  # fmt: skip
    write_result(Path(args.out), {"machine": machine(), "code": code(ROOT), "rows": rows})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
