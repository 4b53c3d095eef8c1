"""The hostile cases of issue 27, each crawled for real beside an ordinary site: what one
hostile host costs the whole crawl.

Each case is one ``scrapy crawl govsi`` with the default settings (but for the simulated
web's name resolution and ``DEFAULT_CRAWL_DELAY=0``, which only makes the hostile host hit
harder) of two hosts: ``www.mirno.gov.si``, an ordinary site of 30 pages, and the case's
hostile host, linked from the ordinary home page. Figures per case:

- the crawler's peak RSS (VmHWM of its process), and its children's (Chromium, the
  driver, the worker process; sampled), in MB; a crawler over ``--kill-mb`` is killed
  (the code before the fix can take the machine down);
- the longest reactor stall and the stalls over 1 s (``govsi/reactor/*`` stats, the
  loop-lag probe of ``govsi/health/stalls.py``);
- whether the ordinary site was stored whole, the crawl's elapsed time, and what was
  recorded for the hostile input (its page row, the stats it raised).

    PYTHONPATH=. python -m bench.hostile_crawl [--only NAME] [-s NAME=VALUE ...]   # ~14 min

The "before" figures come from this ``bench/`` copied into a worktree of the old commit
(``git worktree add /tmp/old 20e70c8``) and run there; the document bombs' also with
``-s WORKER_MEMORY_LIMIT=0``. Documents' text rows (``page_text``) are shown as well.
"""

from __future__ import annotations

import argparse
import gzip
import inspect
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.lib.measure import memory_mb
from bench.lib.results import RESULTS, ROOT, write_result
from bench.lib.sysinfo import code, machine
from bench.lib.webs import robots_txt
from govsi import settings as project
from testkit.crawl import descendants, query, start_crawl
from testkit.listeners import UdpCounter
from testkit.simweb.server import Host, Resource, SimWeb, html

ORDINARY = "www.mirno.gov.si"
ORDINARY_PAGES = 30
LONG = "a" * 1500
IMAGE_VARIANTS = 2_000


def _page(title: str, links: list[str], body: str = "", head: str = "") -> Resource:
    anchors = " ".join(f'<a href="{href}">{href}</a>' for href in links)
    return html(
        f"<html><head><title>{title}</title>{head}</head><body><h1>{title}</h1>"
        f"<p>{title}: besedilo strani.</p>{body}{anchors}</body></html>"
    )


def _ordinary(hostile_root: str) -> Host:
    last = ORDINARY_PAGES - 2
    pages = {
        f"/p{i}": _page(f"Stran {i}", [f"/p{i + 1}"] if i < last else []) for i in range(last + 1)
    }
    pages["/"] = _page("Mirno", ["/p0", hostile_root])
    pages["/robots.txt"] = robots_txt("User-agent: *\nAllow: /\n")
    return Host(ORDINARY, 0, pages)


def _gz(data: bytes) -> bytes:
    return gzip.compress(data, compresslevel=9, mtime=0)


@dataclass
class Case:
    name: str
    what: str
    hosts: Callable[[Case], list[Host]]
    root: str  # the hostile host's first URL, linked from the ordinary home page
    settings: dict[str, str] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)
    udp_port: int = 0


def one_word(case: Case) -> list[Host]:
    # 30 MiB of "a a a ...": about 30 KB on the wire, under DOWNLOAD_MAXSIZE unpacked.
    body = b"<html><body><p>" + b"a " * (15 * 1024 * 1024) + b"</p></body></html>"
    page = Resource(_gz(body), 200, {"Content-Type": "text/html; charset=utf-8",
                                     "Content-Encoding": "gzip"})  # fmt: skip
    return [Host("beseda.gov.si", 1, {"/": page})]


TAGS_ANCHORS = 1_300_000


def anchors(case: Case) -> list[Host]:
    # 30 MiB of 1.3 M distinct <a href>: a million-element tree. nofollow, so that the
    # 10 000 links taken are read, not crawled.
    body = (b'<html><head><meta name="robots" content="nofollow"></head><body>'
            + b"".join(b'<a href="/x%d">y</a>' % i for i in range(TAGS_ANCHORS))
            + b"</body></html>")  # fmt: skip
    page = Resource(_gz(body), 200, {"Content-Type": "text/html; charset=utf-8",
                                     "Content-Encoding": "gzip"})  # fmt: skip
    return [Host("znacke.gov.si", 1, {"/": page})]


def robots_fetches(case: Case) -> list[Host]:
    # As many wildcard rules as fit in the 500 KiB a robots.txt is read to, each one
    # applying to every long path below; a page whose script fetches 2 000 long URLs.
    rules, n = ["User-agent: *"], 0
    while sum(map(len, rules)) + len(rules) < 500_000:
        rules.append(f"Disallow:/a*{n:x}*q")
        n += 1
    script = (
        "<script>for (let i = 0; i < 2000; i++) fetch('/" + LONG + "' + i + 'z')"
        ".catch(() => 0);</script>"
    )
    root = _page("Pravila", [], body='<div id="app"></div>' + script)
    return [Host("pravila.gov.si", 1, {"/": root, "/robots.txt": robots_txt("\n".join(rules))})]


def sitemap(case: Case) -> list[Host]:
    # 50 MB of empty <url/> elements: about 50 KB gzipped.
    xml = (b'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
           + b"<url/>" * (50_000_000 // 6) + b"</urlset>")  # fmt: skip
    res = {
        "/": _page("Zemljevid", []),
        "/robots.txt": robots_txt(
            "User-agent: *\nSitemap: http://zemljevid.gov.si/sitemap.xml.gz\n"
        ),
        "/sitemap.xml.gz": Resource(_gz(xml), 200, {"Content-Type": "application/x-gzip"}),
    }
    return [Host("zemljevid.gov.si", 1, res)]


def headers(case: Case) -> list[Host]:
    # 25 MB of one header's continuation lines.
    value = "a" + "\r\n a" * (25_000_000 // 4)
    res = {"/": Resource(b"<html><body>x</body></html>", 200,
                         {"Content-Type": "text/html", "X-Dolgo": value})}  # fmt: skip
    return [Host("glave.gov.si", 1, res)]


def webrtc(case: Case) -> list[Host]:
    # A STUN server on a loopback address outside the web's network: private, refused.
    script = (
        "<script>const pc = new RTCPeerConnection({iceServers: [{urls: "
        f"'stun:127.0.0.1:{case.udp_port}'}}]}}); pc.createDataChannel('x');"
        "pc.createOffer().then(o => pc.setLocalDescription(o));</script>"
    )
    root = _page("WebRTC", [], body='<div id="app"></div>' + script)
    return [Host("webrtc.gov.si", 1, {"/": root})]


def image_variants(case: Case) -> list[Host]:
    png = bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
        "1f15c4890000000d49444154789c6360000002000100e221bc330000000049454e44ae426082"
    )
    logo = Resource(png, 200, {"Content-Type": "image/png"})
    imgs = "".join(f'<img src="/logo.png?v={i}">' for i in range(IMAGE_VARIANTS))
    host = Host("slike.gov.si", 1, {"/": _page("Slike", [], body=imgs), "/logo.png": logo})
    host.dynamic = lambda target: logo if target.startswith("/logo.png?") else None
    return [host]


APP_PAGES = 12
APP_HOSTS, APP_HOST_PAGES = 12, 3


def _app_page(n: int) -> Resource:
    # A page an app shell renders from a 30 MiB JSON island (a few KB gzipped): it needs a
    # browser, and waits for its turn in memory.
    island = b'{"d":"' + b"a" * (30 * 1024 * 1024) + b'"}'
    body = (b'<html><head><script>addEventListener("load", () => document.getElementById'
            b'("app").textContent = "aplikacija")</script></head><body><div id="app"></div>'
            b'<script type="application/json">' + island
            + b"%d</script></body></html>" % n)  # fmt: skip
    return Resource(_gz(body), 200, {"Content-Type": "text/html; charset=utf-8",
                                     "Content-Encoding": "gzip"})  # fmt: skip


def app_pages(case: Case) -> list[Host]:
    # One host's pages, fetched one at a time.
    links = [f"/a{i}" for i in range(APP_PAGES)]
    page = _app_page(0)
    res = {"/": _page("Aplikacije", links), **{link: page for link in links}}
    return [Host("aplikacije.gov.si", 1, res)]


def app_site(case: Case) -> list[Host]:
    # The same pages on many hosts of one site, which the crawl fetches at once.
    hosts = [Host("aplikacije.gov.si", 1, {"/": _page("Vse", [
        f"http://app{k}.aplikacije.gov.si/" for k in range(APP_HOSTS)])})]  # fmt: skip
    for k in range(APP_HOSTS):
        links = [f"/a{i}" for i in range(APP_HOST_PAGES)]
        # Text of its own, or the home pages are copies and their links not followed.
        words = " ".join(f"beseda{k}x{j}" for j in range(200))
        page = _app_page(k)
        res = {"/": _page(f"Aplikacije {k}", links, body=words), **{link: page for link in links}}
        hosts.append(Host(f"app{k}.aplikacije.gov.si", 2 + k, res))
    return hosts


DEAD_SUBDOMAINS = 10_000


def dead_zone(case: Case) -> list[Host]:
    # A page linking 10 000 hosts of a zone whose nameserver never answers. The crawler
    # resolves with its production resolver; bench/deadzone/sitecustomize.py answers.
    links = [f"http://s{i}.mrtva.gov.si/" for i in range(DEAD_SUBDOMAINS)]
    return [Host("povezave.gov.si", 1, {"/": _page("Povezave", links)})]


def pdf_bomb(case: Case) -> list[Host]:
    # One page of 1 MB: a gigabyte of spaces once unpacked, which pdfium holds whole.
    from testkit.simweb.documents import pdf_bomb as bomb

    res = {
        "/": _page("Dokumenti", ["/bomba.pdf"]),
        "/bomba.pdf": Resource(bomb(1_000_000), 200, {"Content-Type": "application/pdf"}),
    }
    return [Host("dokumenti.gov.si", 1, res)]


def docx_bomb(case: Case) -> list[Host]:
    # 60 MB unpacked (90 KB): 10 million empty runs in one paragraph, under the unpack bound.
    from testkit.simweb.documents import tree_bomb_docx

    docx = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
    res = {
        "/": _page("Dokumenti", ["/drevo.docx"]),
        "/drevo.docx": Resource(tree_bomb_docx(60 * 2**20), 200, {"Content-Type": docx}),
    }
    return [Host("dokumenti.gov.si", 1, res)]


def failed_sandbox(case: Case) -> list[Host]:
    # A Chromium that starts only without its sandbox (as where user namespaces are off).
    from govsi.render.engine import find_chromium

    folder = Path(tempfile.mkdtemp(prefix="govsi-fake-chromium-"))
    folder.chmod(0o755)
    fake = folder / "chromium"
    fake.write_text(
        '#!/bin/sh\ncase " $* " in *" --no-sandbox "*) exec '
        f'{find_chromium()} "$@";; esac\necho "no sandbox here" >&2; exit 1\n'
    )
    fake.chmod(0o755)
    case.settings["CHROMIUM_PATH"] = str(fake)
    root = _page("Aplikacija", [], body='<div id="app"></div><script>document.title="x"</script>')
    return [Host("aplikacija.gov.si", 1, {"/": root})]


CASES = [
    Case("one-word page", "a 30 MiB page of one word (30 KB gzipped)", one_word,
         "http://beseda.gov.si/"),
    Case("tag page", f"a 30 MiB page of {TAGS_ANCHORS} <a href> (nofollow)", anchors,
         "http://znacke.gov.si/"),
    Case("robots x fetches", "~30 000 wildcard robots rules, a page fetching 2 000 long URLs",
         robots_fetches, "http://pravila.gov.si/"),
    Case("sitemap", "a 50 MB sitemap of empty elements (50 KB gzipped)", sitemap,
         "http://zemljevid.gov.si/"),
    Case("headers", "25 MB of header continuation lines", headers, "http://glave.gov.si/"),
    Case("webrtc", "a STUN probe to 127.0.0.1 from a rendered page", webrtc,
         "http://webrtc.gov.si/"),
    Case("image variants", f"{IMAGE_VARIANTS} <img src=/logo.png?v=N>", image_variants,
         "http://slike.gov.si/"),
    Case("app pages", f"{APP_PAGES} pages of an empty app root and a 30 MiB JSON island",
         app_pages, "http://aplikacije.gov.si/"),
    Case("app site", f"{APP_HOSTS} hosts of {APP_HOST_PAGES} such pages", app_site,
         "http://aplikacije.gov.si/"),
    Case("dead DNS zone", f"a page linking {DEAD_SUBDOMAINS} hosts whose DNS never answers",
         dead_zone, "http://povezave.gov.si/",
         # The production resolver (the default), over bench/deadzone's socket functions.
         settings={"TWISTED_DNS_RESOLVER": getattr(project, "TWISTED_DNS_RESOLVER",
                                                   "scrapy.resolver.CachingThreadedResolver")},
         env={"PYTHONPATH": f"{ROOT / 'bench' / 'deadzone'}{os.pathsep}{ROOT}"}),
    Case("PDF bomb", "a one-page PDF of 1 MB, a gigabyte of spaces unpacked", pdf_bomb,
         "http://dokumenti.gov.si/"),
    Case("DOCX bomb", "a DOCX of 90 KB, 10 million empty runs (60 MB) unpacked", docx_bomb,
         "http://dokumenti.gov.si/"),
    Case("failed sandbox", "a Chromium whose sandbox cannot start", failed_sandbox,
         "http://aplikacija.gov.si/"),
    Case("http_proxy", "http_proxy set in the environment", lambda c: [], "http://10.0.0.1/secret",
         env={"http_proxy": "http://127.0.0.1:9"}),
]  # fmt: skip


def _watch(pid: int, kill_mb: float, box: dict[str, Any], done: threading.Event) -> None:
    while not done.wait(0.2):
        mem = memory_mb(pid)
        if mem is None:
            continue
        box["crawler_peak_mb"] = max(box.get("crawler_peak_mb", 0.0), mem[1])
        below = [m for kid in descendants(pid) if (m := memory_mb(kid))]
        box["children_peak_mb"] = max(box.get("children_peak_mb", 0.0), sum(m[0] for m in below))
        if mem[0] > kill_mb:
            box["killed_at_mb"] = round(mem[0])
            os.kill(pid, 9)
            return


def run_case(
    case: Case, kill_mb: float, timeout: float, settings: dict[str, str] | None = None
) -> dict[str, Any]:
    udp = UdpCounter()
    case.udp_port = udp.port
    web = SimWeb([_ordinary(case.root), *case.hosts(case)]).start()
    work = Path(tempfile.mkdtemp(prefix="govsi-hostile-"))
    db_url = f"sqlite:///{work / 'crawldb.sqlite3'}"
    extra: dict[str, Any] = {
        "RENDER_JS": "auto",
        "DOWNLOAD_TIMEOUT": 60,
        **case.settings,
        **(settings or {}),
    }
    if "env" in inspect.signature(start_crawl).parameters:
        extra["env"] = case.env
    saved = {k: os.environ.get(k) for k in case.env}
    os.environ.update(case.env)  # for a tree whose start_crawl takes no env (older code)
    try:
        started = time.monotonic()
        running = start_crawl(web, db_url, work, [f"http://{ORDINARY}/"], **extra)
    finally:
        for k, v in saved.items():
            os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v)
    box: dict[str, Any] = {}
    done = threading.Event()
    watcher = threading.Thread(target=_watch, args=(running.proc.pid, kill_mb, box, done))
    watcher.start()
    try:
        run = running.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        running.proc.kill()
        run = running.wait(timeout=60)
        box["timed_out"] = True
    done.set()
    watcher.join()
    elapsed = time.monotonic() - started
    web.stop()
    result: dict[str, Any] = {
        "case": case.name,
        "what": case.what,
        "returncode": run.returncode,
        "elapsed_s": round(elapsed, 1),
        "crawler_peak_rss_mb": round(box.get("crawler_peak_mb", 0.0)),
        "children_peak_rss_mb": round(box.get("children_peak_mb", 0.0)),
        "killed_at_mb": box.get("killed_at_mb"),
        "timed_out": box.get("timed_out", False),
        "max_stall_s": run.stats.get("govsi/reactor/max_stall_seconds"),
        "stalls_over_1s": run.stats.get("govsi/reactor/stalls_over_warn"),
        "udp_packets": udp.close(),
        "requests": len(web.requested()),
        "stats": {
            k: v
            for k, v in run.stats.items()
            if k.startswith(("govsi/", "downloader/exception_type", "retry/"))
            and not k.startswith("govsi/reactor/")
        },
        "log_errors": [
            line[:300] for line in run.log.splitlines() if " ERROR" in line or " CRITICAL" in line
        ][:10],
    }
    try:
        rows = query(db_url, "SELECT url, page_type_code, http_status_code, fetch_error FROM page")
    except Exception as exc:  # a killed crawl may leave no schema
        rows, result["db_error"] = [], str(exc)
    stored = {r[0] for r in rows if r[0].startswith(f"http://{ORDINARY}/") and r[1] == "HTML"}
    result["ordinary_stored"] = f"{len(stored)}/{ORDINARY_PAGES}"
    result["hostile_rows"] = [
        {"url": r[0][:120], "type": r[1], "status": r[2], "error": (r[3] or "")[:200]}
        for r in rows
        if not r[0].startswith(f"http://{ORDINARY}/")
    ][:8]
    try:
        texts = query(db_url, "SELECT p.url, t.status, t.reason FROM page_text t "
                              "JOIN page p ON p.id = t.page_id WHERE t.kind <> 'HTML'")  # fmt: skip
    except Exception:  # a killed crawl, or a crawldb without page_text
        texts = []
    result["document_texts"] = [
        {"url": r[0][:120], "status": r[1], "reason": (r[2] or "")[:200]} for r in texts
    ][:8]
    return result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="", help="only the cases whose name has this")
    ap.add_argument("--kill-mb", type=float, default=6000)
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--out", default=str(RESULTS / "hostile_crawl.json"))
    ap.add_argument("-s", dest="settings", action="append", default=[], metavar="NAME=VALUE",
                    help="a setting for every case's crawl")  # fmt: skip
    args = ap.parse_args(argv)
    settings = dict(item.split("=", 1) for item in args.settings)
    rows = []
    for case in CASES:
        if args.only and args.only not in case.name:
            continue
        row = run_case(case, args.kill_mb, args.timeout, settings)
        row["settings"] = settings
        print(json.dumps(row, ensure_ascii=False), flush=True)
        rows.append(row)
    write_result(Path(args.out), {"machine": machine(), "code": code(ROOT), "rows": rows})
    return 0


if __name__ == "__main__":
    sys.exit(main())
