"""30 MiB hostile pages read the way the crawl reads a large page: handed to a worker
process (``govsi.workers.pool.WorkerPool``, over its pipes) and read whole by
``read_html`` with its render plan, its yield and its duplicate question, under the default
limits (MAX_PARSE_TAGS, MAX_LINKS_PER_PAGE, WORKER_JOB_TIMEOUT). For each: wall time, the
worker's peak RSS (VmHWM, sampled), and what came back."""

from __future__ import annotations

import threading
import time
from typing import Any

from bench.lib.measure import memory_mb
from govsi.page.reading import PlanInputs, read_html
from govsi.settings import MAX_LINKS_PER_PAGE, MAX_PARSE_TAGS, WORKER_JOB_TIMEOUT
from govsi.web.scope import Scope
from govsi.workers.pool import WorkerPool

MIB = 2**20
UNITS = {
    "handlers and scripts": '<div onclick="x()" onload="y()"><script>a()</script></div>',
    "text of one word": "a ",
    "app roots with noscript": '<div id="app"><noscript>omogočite javascript</noscript></div>',
    "links and pictures": '<p>beseda <a href="/p/1">l</a><img src="/i/1.png"></p>',
    # Every element an app-root candidate (``needs_browser`` checks each one's names).
    "attributes everywhere": '<i class="c" data-x="1">w</i>',
}


def _page(unit: str, size: int) -> str:
    return "<html><head></head><body>" + unit * (size // len(unit) + 1) + "</body></html>"


def _outcome(result: Any) -> str:
    if hasattr(result, "value"):  # a Failure
        return f"failed: {result.value!r}"
    yielded = result.yielded.text_chars if result.yielded else None
    return (f"{len(result.found.links)} links, {result.cut_tags} tags cut, needs {result.needs}, "
            f"{yielded} text chars")  # fmt: skip


def worker_rows(size: int = 30 * MIB) -> list[dict[str, Any]]:
    lock = threading.Lock()

    def call(fn: Any, *args: Any) -> None:
        with lock:
            fn(*args)

    rows = []
    for name, unit in UNITS.items():
        html = _page(unit, size)
        pool = WorkerPool(1, WORKER_JOB_TIMEOUT, call)
        box: list[Any] = []
        started = time.monotonic()
        pool.run(read_html, "http://a.gov.si/", html, "http://a.gov.si/",
                 max_links=MAX_LINKS_PER_PAGE, max_tags=MAX_PARSE_TAGS,
                 plan=PlanInputs(("gov.si",), True), yielded=True,
                 measures={"num_perm": 128, "shingle_size": 5, "bands": 16, "rows": 8},
                 keyed=True, scope=Scope(("gov.si",), 2000)).addBoth(box.append)  # fmt: skip
        peak = 0.0
        while not box:
            process = pool._places[0].process  # the bench looks inside: no public handle
            mem = memory_mb(process.pid) if process is not None else None
            peak = max(peak, mem[1] if mem else 0.0)
            time.sleep(0.05)
        pool.close()
        rows.append({"page": name, "mib": round(len(html) / MIB, 1),
                     "seconds": round(time.monotonic() - started, 2),
                     "worker_peak_mb": round(peak), "outcome": _outcome(box[0])})  # fmt: skip
    return rows
