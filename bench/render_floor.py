"""The least a render costs on this machine: Chromium alone, nothing else running.

Renders ``--pages`` of ``bench.lib.webs.js_web``'s app-host pages (a script adds a link on
DOMContentLoaded), ``--at-once`` at a time, each tab reused for the next page as govsi
does (``--new-pages``: a new tab per page), its document fulfilled from memory and every
other request aborted. Each page goes the way govsi's renders go, without
scrapy-playwright: committed, then one message waiting in the page for its load
(``govsi.render.routes.LOADED``), ``--quiet`` seconds (RENDER_SETTLE_QUIET), and one
message taking its DOM (``govsi.render.renderer.SNAPSHOT``). The document is handed over
with govsi's headers (``govsi.render.fence.page_headers``), so the browser refuses
pictures, fonts and stylesheet files itself; ``--routed``: without that policy, each is
asked for and refused by the route, as before. ``--images`` and ``--stylesheets`` add
that many of each to every page (a ministry's page shows dozens of pictures);
``--page-chars`` puts ``render_cost``'s site template of that size around each page (its
48 KB pages with 80 links: ``--page-chars 40000``).
Reports wall time and CPU per render: the machine's busy CPU less this process's own
(``system``: renderer processes that exit, as a closed tab's do, are counted), that of
the live Chromium and driver processes (``browser``, also by kind of process), and this
process's own (``client``: Playwright's client and the routes, which in a crawl run on
the reactor's thread). The floor any crawl that renders these pages pays, whatever the
crawler itself costs.

    PYTHONPATH=. python -m bench.render_floor            # ~15 s
    PYTHONPATH=. python -m bench.render_floor --images 30 --stylesheets 5 [--routed]
    PYTHONPATH=. python -m bench.render_floor --page-chars 40000
    PYTHONPATH=. python -m bench.render_floor -- --renderer-process-limit=1

Switches after ``--`` are passed to Chromium.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import statistics
import time
from typing import Any

from bench.lib.measure import cpu_seconds, processes_with, system_cpu
from bench.lib.webs import ADD, js_page, site_template
from govsi.render.engine import find_chromium
from govsi.render.fence import chromium_args, page_headers
from govsi.render.renderer import SNAPSHOT
from govsi.render.routes import LOADED
from govsi.settings import RENDER_SETTLE_QUIET


def browser_cpu_by_kind() -> dict[str, float]:
    """User + system CPU of the machine's live Chromium and node processes, by kind:
    ``browser``, ``renderer``, ``gpu-process``, ``utility`` (the network service...),
    ``zygote``, and ``driver`` (Playwright's node)."""
    spent: dict[str, float] = {}
    for pid, cmd in processes_with((b"chrom", b"node")):
        kind = re.search(rb"--type=([a-z-]+)", cmd)
        if kind is not None:
            name = kind.group(1).decode()
        else:
            name = "driver" if b"node" in cmd.split(b"\0", 1)[0] else "browser"
        spent[name] = spent.get(name, 0.0) + cpu_seconds(pid)
    return spent


async def measure(
    pages: int,
    at_once: int,
    new_pages: bool = False,
    switches: tuple[str, ...] = (),
    quiet: float = RENDER_SETTLE_QUIET,
    images: int = 0,
    stylesheets: int = 0,
    routed: bool = False,
    page_chars: int = 0,
) -> dict[str, Any]:
    from playwright.async_api import async_playwright

    chromium = find_chromium()
    if chromium is None:
        raise SystemExit("no Chromium")

    def extras(i: int) -> str:
        pictures = "".join(f'<img src="/slike/{i}-{k}.png" alt="">' for k in range(images))
        styles = "".join(f'<link rel="stylesheet" href="/{k}.css">' for k in range(stylesheets))
        return pictures + styles

    template = site_template(40, page_chars) if page_chars else ""
    bodies = [
        js_page(f"s0 p{i}", f'<a href="/p{i + 1}">p</a>' + ADD.format(n=i) + extras(i), template)
        for i in range(pages)
    ]
    served = [("Content-Type", "text/html; charset=utf-8")]
    headers = dict(served) if routed else page_headers(served)
    refused: dict[str, int] = {}
    async with async_playwright() as p:
        browser = await p.chromium.launch(
            executable_path=chromium,
            chromium_sandbox=os.geteuid() != 0,
            headless=True,
            args=chromium_args("127.0.0.1:9", list(switches)),
        )
        context = await browser.new_context(service_workers="block", accept_downloads=False)

        async def render(page: Any, i: int) -> None:
            url = f"http://s0.gov.si/p{i}"
            page.govsi_url = url
            await page.goto(url, wait_until="commit")
            await page.evaluate(LOADED)
            await asyncio.sleep(quiet)
            html = (await page.evaluate(SNAPSHOT, 10**8))[2]
            assert f"/js-{i}" in html, "the script did not run"

        async def answer(route: Any) -> None:
            url = route.request.frame.page.govsi_url
            if route.request.is_navigation_request() and route.request.url == url:
                await route.fulfill(
                    status=200,
                    headers=headers,
                    body=bodies[int(url.rsplit("p", 1)[1])],
                )
            else:
                kind = route.request.resource_type
                refused[kind] = refused.get(kind, 0) + 1
                await route.abort()

        async def worker(first: int) -> None:
            page = None
            for i in range(first, pages, at_once):
                if page is None:
                    page = await context.new_page()
                    await page.route("**/*", answer)
                await render(page, i)
                if new_pages:
                    await page.close()
                    page = None

        busy0, own0 = system_cpu()[0], cpu_seconds(os.getpid())
        cpu0, t0 = browser_cpu_by_kind(), time.perf_counter()
        await asyncio.gather(*(worker(k) for k in range(at_once)))
        wall = time.perf_counter() - t0
        by_kind = {k: v - cpu0.get(k, 0.0) for k, v in browser_cpu_by_kind().items()}
        cpu = sum(by_kind.values())
        own = cpu_seconds(os.getpid()) - own0
        system = system_cpu()[0] - busy0 - own
        await browser.close()
    return {
        "pages": pages,
        "at_once": at_once,
        "tabs": "new per page" if new_pages else "reused",
        "switches": list(switches),
        "images": images,
        "stylesheets": stylesheets,
        "routed": routed,
        "page_bytes": round(statistics.mean(len(b.encode()) for b in bodies)),
        # What reached the routes, to be refused there, by kind.
        "refused_by_routes": refused,
        "wall_s": round(wall, 2),
        "wall_per_render_ms": round(wall / pages * 1000),
        "system_cpu_per_render_ms": round(system / pages * 1000),
        # This process: Playwright's client and the routes, as the crawler's thread runs them.
        "client_cpu_per_render_ms": round(own / pages * 1000),
        # Renderer processes that exited are not counted here.
        "browser_cpu_per_render_ms": round(cpu / pages * 1000),
        "browser_cpu_per_render_ms_by_kind": {
            kind: round(spent / pages * 1000, 1) for kind, spent in sorted(by_kind.items())
        },
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pages", type=int, default=80)
    ap.add_argument("--at-once", type=int, default=4)
    ap.add_argument("--new-pages", action="store_true")
    ap.add_argument("--quiet", type=float, default=RENDER_SETTLE_QUIET)
    ap.add_argument("--images", type=int, default=0)
    ap.add_argument("--stylesheets", type=int, default=0)
    ap.add_argument("--routed", action="store_true")
    ap.add_argument("--page-chars", type=int, default=0)
    ap.add_argument("switches", nargs="*", help="Chromium switches (after --)")
    args = ap.parse_args()
    switches = tuple(args.switches)
    print(asyncio.run(measure(args.pages, args.at_once, args.new_pages, switches, args.quiet,
                              args.images, args.stylesheets, args.routed,
                              args.page_chars)))  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
