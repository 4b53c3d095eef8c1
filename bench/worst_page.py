"""The worst page of each kind: what the heaviest input costs each per-page operation that
runs on the reactor thread, in ms per 100 KB, at a few sizes (issue 16: every one linear).

Pages: an onclick of ``window . window . ...`` (with and without a ``location`` at the
end), nested ``class="content"`` blocks, nested ``id="app"`` roots, nested link blocks
(no content column: every block judged as a menu), a page of N links, and a robots.txt of
wildcard rules that all apply to the path checked. Operations: ``onclick_targets``,
``parse_html``, ``extract_links`` (with MAX_LINKS_PER_PAGE), ``main_text``,
``needs_browser``, robots.txt ``parse`` and one ``allowed`` check.

    PYTHONPATH=. python -m bench.worst_page      # ~1 min; bench/results/worst_page.json
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.sysinfo import code, machine
from govsi import robots
from govsi.dedup import main_text
from govsi.extract import extract_links, onclick_targets, parse_html
from govsi.render.scripts import needs_browser

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
MAX_LINKS = 10_000


def _nested(opening: str, n: int, inner: str = "x") -> str:
    return f"<html><body>{opening * n}{inner}{'</div>' * n}</body></html>"


def _links(n: int) -> str:
    return "<html><body>" + "".join(f'<a href="/p{i}">{i}</a>' for i in range(n)) + "</body>"


def _robots(n: int) -> str:
    return "User-agent: *\n" + "".join(f"Disallow: /a*b*c{i}*d\n" for i in range(n))


# (kind, page of size parameter n, operation on the page's text, n values)
CASES: list[tuple[str, Callable[[int], str], str, Callable[[str], Any], list[int]]] = [
    ("onclick chain, no location", lambda n: "window . " * n + "locatio", "onclick_targets",
     onclick_targets, [2_000, 8_000, 32_000]),
    ("onclick chain + location", lambda n: "window . " * n + "location='/x'",
     "onclick_targets", onclick_targets, [2_000, 8_000, 32_000]),
    ("nested content", lambda n: _nested('<div class="content">', n), "main_text",
     main_text, [2_000, 8_000, 32_000]),
    ("nested content", lambda n: _nested('<div class="content">', n), "parse_html",
     parse_html, [2_000, 8_000, 32_000]),
    ("nested app roots", lambda n: _nested('<div id="app">', n), "needs_browser",
     lambda t: needs_browser(parse_html(t)), [2_000, 8_000, 32_000]),
    ("nested link blocks", lambda n: _nested('<div><a href="/x">meni</a> ', n), "main_text",
     main_text, [2_000, 8_000, 32_000]),
    ("N links", _links, "extract_links",
     lambda t: extract_links(t, "http://a.gov.si/", max_links=MAX_LINKS), [20_000, 50_000,
                                                                             200_000]),
    ("N links", _links, "extract_links, no cap",
     lambda t: extract_links(t, "http://a.gov.si/"), [20_000, 50_000, 200_000]),
    ("robots.txt of N wildcard rules", _robots, "parse",
     lambda t: robots.parse(t, "https://x.gov.si/robots.txt"), [2_500, 10_000, 25_000]),
]  # fmt: skip


def _best_ms(run: Callable[[], Any], repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - started)
    return best * 1000


def measure() -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for kind, make, op, run, sizes in CASES:
        for n in sizes:
            text = make(n)
            ms = _best_ms(lambda: run(text))  # noqa: B023 - called at once
            kb = len(text.encode()) / 1024
            rows.append({"page": kind, "n": n, "kb": round(kb, 1), "operation": op,
                         "ms": round(ms, 2), "ms_per_100kb": round(ms / kb * 100, 2)})  # fmt: skip
    # One allowed() check against a robots.txt whose every rule applies to the path.
    for n in (2_500, 10_000, 25_000):
        text = _robots(n)
        rules = robots.parse(text, "https://x.gov.si/robots.txt")
        url = "https://x.gov.si/" + "a" * 200 + "b"
        rules.allowed(url, "govsi-crawler")  # the policy is built on first use
        ms = _best_ms(lambda: rules.allowed(url, "govsi-crawler"))  # noqa: B023
        kb = len(text.encode()) / 1024
        rows.append({"page": "robots.txt of N wildcard rules", "n": n, "kb": round(kb, 1),
                     "operation": "allowed (every rule applies)", "ms": round(ms, 3),
                     "ms_per_100kb": round(ms / kb * 100, 3)})  # fmt: skip
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(RESULTS / "worst_page.json"))
    args = ap.parse_args()
    rows = measure()
    print(f"{'page':32} {'operation':30} {'n':>8} {'KB':>8} {'ms':>9} {'ms/100KB':>9}")
    for r in rows:
        print(f"{r['page']:32} {r['operation']:30} {r['n']:>8} {r['kb']:>8} {r['ms']:>9} "
              f"{r['ms_per_100kb']:>9}")  # fmt: skip
    RESULTS.mkdir(exist_ok=True)
    Path(args.out).write_text(
        json.dumps({"machine": machine(), "code": code(ROOT), "rows": rows}, indent=1)
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
