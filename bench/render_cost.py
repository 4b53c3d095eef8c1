"""What rendering costs a crawl with the default settings (RENDER_JS=auto), against
RENDER_JS=off and a plain Scrapy spider (issue 15). Four parts, each its own web:

- ``polite``: ``bench.lib.webs.many_web`` (100 hosts, delays 1-2 s) with ``--js-share`` of
  its pages giving a link only through a script. Politeness efficiency (ideal polite time /
  first-to-last request, ``bench.lib.politeness``) with the default and with ``off``;
  pages rendered against pages that need it; each page's document requested once.
- ``speed``: ``bench.lib.webs.js_web`` of ``--hosts`` x ``--pages`` with no delay: one host
  whose every page adds a link by script, the others with an inline analytics snippet
  (the same on every host: one script signature, sampled, then fetched plainly). Pages/s
  of the default, ``off``, the plain spider and the typical one, one after the other in
  each of ``--rounds`` rounds, each by Scrapy's ``elapsed_time_seconds`` (spider opened to
  closed; start-up not counted): ratios within each round, their medians reported.
- ``memory``: the same shape of web, but whose only scripts need a user (onclick footers,
  ``javascript:`` links, JSON-LD): peak RSS of the whole crawl (the crawler and every
  process below it, so a browser would count) with the default and with ``off``.
- ``requests``: from the ``polite`` and ``speed`` runs, requests per rendered page
  (documents: 1.0 means none fetched again; sub-resources: the crawl's cache at work).

Each run also reports the CPU it cost (``ProcessMeter``): the crawler's process with start-up,
Chromium with Playwright's driver, and the simulated web's server.

    PYTHONPATH=. python -m bench.render_cost                  # all parts, ~15 min
    PYTHONPATH=. python -m bench.render_cost --parts speed,memory

Writes bench/results/render_cost.json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from bench.lib.measure import ProcessMeter
from bench.lib.plain_spider import start_plain
from bench.lib.politeness import analyse
from bench.lib.results import RESULTS, ROOT, write_result
from bench.lib.sysinfo import code, machine
from bench.lib.webs import js_web, many_web, mix_in_javascript, quiet_web
from govsi.render.engine import find_chromium
from testkit.crawl import query, start_crawl
from testkit.simweb.server import SimWeb


def _host_target(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    return (parts.hostname or "", parts.path + (f"?{parts.query}" if parts.query else ""))


def govsi_run(
    web: SimWeb, seeds: list[str], work: Path, mode: str, **settings: object
) -> dict[str, Any]:
    """One ``scrapy crawl govsi`` with RENDER_JS=``mode``; the rest as given."""
    db = f"sqlite:///{work / 'crawldb.sqlite3'}"
    web.reset_log()
    running = start_crawl(web, db, work, seeds, RENDER_JS=mode, **settings)
    meter = ProcessMeter(running.proc.pid)
    started = time.perf_counter()
    run = running.wait(timeout=3600)
    wall = time.perf_counter() - started
    cpu = meter.stop()
    rows = query(db, "SELECT url, page_type_code, rendered FROM page")
    html_pages = [u for u, t, _ in rows if t in ("HTML", "DUPLICATE")]
    stats = run.stats
    hits = web.requested()
    per_url = Counter((h.host, h.target) for h in hits)
    rendered = {_host_target(u) for u, _, r in rows if r}
    document_hits = sum(n for key, n in per_url.items() if key in rendered)
    return {
        "mode": mode,
        "ok": run.returncode == 0 and "Traceback" not in run.log,
        # Requests for the rendered pages' own URLs, per rendered page: 1.0 = one download.
        "document_requests_per_rendered_page": (
            round(document_hits / len(rendered), 3) if rendered else None
        ),
        "crawl_s": round(float(stats.get("elapsed_time_seconds", wall)), 2),  # type: ignore[arg-type]
        "html_pages": len(html_pages),
        "pages_per_s": round(len(html_pages) / float(stats.get("elapsed_time_seconds", wall)), 1),  # type: ignore[arg-type]
        "rendered": sum(1 for _, _, r in rows if r),
        "urls_requested_twice": sum(1 for n in per_url.values() if n > 1),
        "requests": len(hits),
        "peak_rss_mb": round(meter.peak_rss_mb, 1),
        "crawler_memusage_max_mb": round(float(stats.get("memusage/max", 0)) / 2**20, 1),  # type: ignore[arg-type]
        "cpu": cpu,
        "render_stats": {k: v for k, v in stats.items() if str(k).startswith("govsi/render")},
        "hits": hits,
    }


def plain_run(
    web: SimWeb, seeds: list[str], work: Path, *, typical: bool = False
) -> dict[str, Any]:
    """The plain spider (``bench.lib.plain_spider``), or the typical breadth-first one."""
    web.reset_log()
    work.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    proc = start_plain(web.hosts_map(), seeds, str(work), typical=typical,
                       CONCURRENT_REQUESTS=16, ROBOTSTXT_OBEY=True)  # fmt: skip
    meter = ProcessMeter(proc.pid)
    proc.wait(3600)
    wall = time.perf_counter() - started
    # The same clock as govsi's figures: Scrapy's elapsed_time_seconds, from the spider's
    # opening to its closing (the process's start-up, about 0.7 s here, is not in it).
    stats = json.loads((work / "stats.json").read_text())
    crawl_s = float(stats.get("elapsed_time_seconds") or wall)
    pages = {(h.host, h.target) for h in web.requested() if h.status == 200}
    pages = {p for p in pages if not p[1].endswith((".css", ".woff2", ".txt"))}
    mode = "typical scrapy" if typical else "plain scrapy"
    return {"mode": mode, "ok": proc.returncode == 0, "crawl_s": round(crawl_s, 2),
            "wall_s": round(wall, 2), "html_pages": len(pages),
            "pages_per_s": round(len(pages) / crawl_s, 1), "cpu": meter.stop()}  # fmt: skip


def cpu_ms_per_page(run: dict[str, Any]) -> float:
    """CPU per page of the crawl's process and everything below it (not the web's)."""
    return round(1000 * cpu_s_per_page(run), 2)


def cpu_s_per_page(run: dict[str, Any], parts: tuple[str, ...] = ()) -> float:
    """CPU seconds per page of the run's ``parts`` (its ``cpu`` keys), by default of every
    process but the web's server."""
    cpu = run["cpu"]
    names = parts or [k for k in cpu if k != "web_server_s" and k.endswith("_s")]
    return float(sum(cpu[k] for k in names)) / max(1, int(run["html_pages"]))


def part_polite(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    bw = many_web(args.polite_hosts)
    need = mix_in_javascript(bw, args.js_share)
    bw.web.start()
    out: dict[str, Any] = {"pages_needing_a_browser": need, "pages_in_web": len(bw.pages)}
    try:
        for mode in ("auto", "off"):
            r = govsi_run(bw.web, bw.seeds, work / f"polite-{mode}", mode,
                          DEFAULT_CRAWL_DELAY=bw.default_delay, CONCURRENT_REQUESTS=16)  # fmt: skip
            polite = analyse(r.pop("hits"), bw)
            r["efficiency"] = polite["efficiency"]
            r["violations"] = polite["violations_host"] + polite["violations_ip"]
            r["first_to_last_request_s"] = polite["first_to_last_request_s"]
            r["ideal_s"] = polite["ideal_s"]
            out[mode] = r
            print(f"polite {mode:>4}: efficiency {r['efficiency']:.3f}  span "
                  f"{r['first_to_last_request_s']:.1f} s (ideal {r['ideal_s']:.1f})  "
                  f"pages {r['html_pages']}  rendered {r['rendered']} (need {need})  "
                  f"violations {r['violations']}  twice {r['urls_requested_twice']}",
                  flush=True)  # fmt: skip
    finally:
        bw.web.stop()
    out["efficiency_ratio"] = round(out["auto"]["efficiency"] / out["off"]["efficiency"], 3)
    return out


def unthrottled(web: SimWeb, seeds: list[str], work: Path, mode: str) -> dict[str, Any]:
    r = govsi_run(web, seeds, work, mode, DEFAULT_CRAWL_DELAY=0, CONCURRENT_REQUESTS=16)
    r.pop("hits")
    return r


SPEED_RUNS = ("auto", "off", "plain", "typical")


def part_speed(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    """``--rounds`` rounds of the four crawls, one after the other in each; every ratio is
    taken within a round (the machine's speed drifts from minute to minute), and the
    figures reported are the medians over the rounds."""
    web, seeds, js_only = js_web(args.hosts, args.pages, args.page_chars)
    web.start()
    rounds: list[dict[str, Any]] = []
    try:
        for n in range(args.rounds):
            runs: dict[str, Any] = {}
            for mode in ("auto", "off"):
                r = runs[mode] = unthrottled(web, seeds, work / f"speed-{n}-{mode}", mode)
                print(f"speed  {mode:>5}: {r['pages_per_s']:6.1f} pages/s  {r['html_pages']} pages "
                      f"in {r['crawl_s']} s  rendered {r['rendered']} (need {len(js_only)})  "
                      f"twice {r['urls_requested_twice']}  CPU {r['cpu']}", flush=True)  # fmt: skip
            for name, typical in (("plain", False), ("typical", True)):
                r = runs[name] = plain_run(web, seeds, work / f"speed-{n}-{name}", typical=typical)
                print(f"speed {name:>6}: {r['pages_per_s']:6.1f} pages/s  {r['html_pages']} pages "
                      f"in {r['crawl_s']} s (process {r['wall_s']} s)  CPU {r['cpu']}",
                      flush=True)  # fmt: skip
            rounds.append(runs)
    finally:
        web.stop()
    out: dict[str, Any] = {"pages_needing_a_browser": len(js_only), "rounds": rounds}
    # The last round's runs in full, as before rounds; the medians below are the figures.
    out.update(rounds[-1])

    def median_of(value: Callable[[dict[str, Any]], float]) -> float:
        return round(statistics.median(value(runs) for runs in rounds), 3)

    def of_run(name: str, value: Callable[[dict[str, Any]], float]) -> Callable[..., float]:
        return lambda runs: value(runs[name])

    out["pages_per_s"] = {m: median_of(of_run(m, lambda r: r["pages_per_s"])) for m in SPEED_RUNS}
    # CPU per page of the process and everything below it (worker pool, browser).
    out["cpu_ms_per_page"] = {m: median_of(of_run(m, cpu_ms_per_page)) for m in SPEED_RUNS}
    out["cpu_default_vs_typical"] = median_of(
        lambda r: cpu_ms_per_page(r["auto"]) / cpu_ms_per_page(r["typical"])
    )
    out["default_vs_plain"] = median_of(
        lambda r: r["auto"]["pages_per_s"] / r["plain"]["pages_per_s"]
    )
    out["off_vs_plain"] = median_of(lambda r: r["off"]["pages_per_s"] / r["plain"]["pages_per_s"])

    def over_off(parts: tuple[str, ...]) -> Callable[[dict[str, Any]], float]:
        return lambda r: cpu_s_per_page(r["auto"], parts) / cpu_s_per_page(r["off"], parts) - 1

    # Issue 30: what rendering costs the crawler per page over ``off`` (its process alone,
    # and with the helpers working for it: the worker pool and crawldb's writer).
    helpers = ("crawler_s", "worker_pool_s", "crawldb_writer_s")
    for name, parts in (("crawler", ("crawler_s",)), ("crawler_and_helpers", helpers)):
        out[f"render_cost_to_{name}"] = median_of(over_off(parts))
    print(f"speed medians of {len(rounds)} rounds: default/plain {out['default_vs_plain']}, "
          f"off/plain {out['off_vs_plain']}, CPU default/typical "
          f"{out['cpu_default_vs_typical']}; CPU ms/page {out['cpu_ms_per_page']}; rendering's "
          f"cost over off: crawler {out['render_cost_to_crawler']:+.1%}, with its helpers "
          f"{out['render_cost_to_crawler_and_helpers']:+.1%}")  # fmt: skip
    return out


def part_memory(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    web, seeds = quiet_web(args.hosts, args.pages)
    web.start()
    out: dict[str, Any] = {}
    try:
        for mode in ("auto", "off"):
            r = out[mode] = unthrottled(web, seeds, work / f"memory-{mode}", mode)
            print(
                f"memory {mode:>4}: peak RSS {r['peak_rss_mb']:.0f} MB (crawler alone "
                f"{r['crawler_memusage_max_mb']:.0f} MB)  {r['html_pages']} pages  "
                f"rendered {r['rendered']}  browser starts "
                f"{r['render_stats'].get('govsi/render/browser/starts', 0)}",
                flush=True,
            )
    finally:
        web.stop()
    out["peak_ratio"] = round(out["auto"]["peak_rss_mb"] / out["off"]["peak_rss_mb"], 3)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--parts", default="polite,speed,memory")
    ap.add_argument("--hosts", type=int, default=60, help="speed and memory webs")
    ap.add_argument("--pages", type=int, default=40, help="pages per host, speed and memory")
    ap.add_argument(
        "--page-chars",
        type=int,
        default=0,
        help="speed: a template of this many characters and a menu of links to "
        "every page of the host on each page (0: 2 KB pages of 3 links)",
    )
    ap.add_argument("--rounds", type=int, default=3, help="speed: rounds of the four crawls")
    ap.add_argument("--polite-hosts", type=int, default=100)
    ap.add_argument("--js-share", type=float, default=0.05)
    args = ap.parse_args()
    results: dict[str, Any] = {"argv": vars(args), "machine": machine(), "code": code(ROOT),
                               "chromium": find_chromium()}  # fmt: skip
    parts = {"polite": part_polite, "speed": part_speed, "memory": part_memory}
    with tempfile.TemporaryDirectory(prefix="govsi-render-cost-") as tmp:
        for name in args.parts.split(","):
            results[name] = parts[name](args, Path(tmp))
    ok = all(r.get("ok", True) for p in parts if p in results
             for r in results[p].values() if isinstance(r, dict))  # fmt: skip
    write_result(RESULTS / "render_cost.json", results)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
