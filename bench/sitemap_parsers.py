"""Should the sitemap reader (``govsi.web.sitemaps.parse_sitemap``) be a maintained library?
Runs sitemap cases against govsi's reader and against each candidate used the way govsi
would use it: a response's URL, Content-Type and body in, the page URLs and child sitemaps
out, kept only when absolute http(s) (govsi's filter, applied to every parser alike).

Candidates: Scrapy's ``scrapy.utils.sitemap.Sitemap`` with what ``SitemapSpider`` does
before it (``_get_sitemap_body``: gzip by magic bytes through ``scrapy.utils.gz.gunzip``
bounded at 50 MB, else XML by Content-Type or a ``.xml`` URL), and ultimate-sitemap-parser
(``usp``: its ``SitemapFetcher`` with an in-memory web client that serves the case and
answers any other URL, such as a child sitemap, with a 404: nothing leaves the machine).

Each case runs in a process of its own: CPU seconds, peak RSS growth past the body and the
imports (Linux: VmHWM, reset before reading), and right (the URLs expected, in order),
wrong or raised. A 30 MB URL is no URL (the protocol's bound is 2 048 characters); of a
file of 1 000 000 entries, the protocol's first 50 000 must be listed, more may be.

    pip install --target /tmp/sitemap_libs ultimate-sitemap-parser   # the candidate
    PYTHONPATH=. python -m bench.sitemap_parsers --libs /tmp/sitemap_libs   # ~1 min

A candidate that cannot be imported is left out.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.lib.results import RESULTS, ROOT, write_result
from bench.lib.sysinfo import code, machine

NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
SECRET_FILE = Path("/tmp/govsi_bench_sitemap_secret.txt")  # what an external entity names
SECRET = "XXESECRET"
MAX_BYTES = 50 * 1024 * 1024  # the protocol's bound, and what govsi inflates at most
ENTRIES = 1_000_000
FIRST = 50_000  # the protocol's bound per file: what a reader must at least list


def urlset(locs: list[str], ns: str | None = NS, head: str = '<?xml version="1.0"?>') -> bytes:
    xmlns = f' xmlns="{ns}"' if ns else ""
    entries = "".join(f"<url><loc>{loc}</loc></url>" for loc in locs)
    return f"{head}<urlset{xmlns}>{entries}</urlset>".encode()


PAGES = [f"https://www.gov.si/p/{i}" for i in range(3)]
OK = ["https://www.gov.si/ok"]


@dataclass
class Case:
    name: str
    body: Callable[[], bytes]
    urls: list[str] = field(default_factory=list)  # expected page URLs, in order
    sitemaps: list[str] = field(default_factory=list)  # expected child sitemaps
    url: str = "https://www.gov.si/sitemap.xml"
    content_type: str = "application/xml"
    heavy: bool = False  # its cost is reported
    prefix: bool = False  # right when the expected URLs come first (more may follow)


def _laughs() -> bytes:
    entities = "".join(
        (f'<!ENTITY l{i} "{f"&l{i - 1};" * 10}">' if i else '<!ENTITY l0 "lol">') for i in range(10)
    )
    return (
        f'<?xml version="1.0"?><!DOCTYPE urlset [{entities}]><urlset xmlns="{NS}">'
        f"<url><loc>https://www.gov.si/ok</loc></url><url><loc>https://www.gov.si/&l9;</loc>"
        f"</url></urlset>"
    ).encode()


def _xxe() -> bytes:
    SECRET_FILE.write_text(SECRET)
    return (
        f'<?xml version="1.0"?><!DOCTYPE urlset [<!ENTITY x SYSTEM "file://{SECRET_FILE}">]>'
        f'<urlset xmlns="{NS}"><url><loc>https://www.gov.si/ok</loc></url>'
        f"<url><loc>https://www.gov.si/&x;</loc></url></urlset>"
    ).encode()


def _bomb() -> bytes:
    """A sitemap listing three URLs, then 1 GB of blanks inside the urlset: ~1 MB gzipped."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    parts = [packer.compress(urlset(PAGES)[: -len(b"</urlset>")])]
    blanks = b" " * (1 << 20)
    parts += [packer.compress(blanks) for _ in range(1024)]
    parts.append(packer.compress(b"</urlset>") + packer.flush())
    return b"".join(parts)


def _many() -> bytes:
    return urlset([f"https://a.si/{i}" for i in range(ENTRIES)])


def cases() -> list[Case]:
    rss_items = "".join(f"<item><title>t</title><link>{u}</link></item>" for u in PAGES)
    atom = "".join(
        f'<entry><title>t</title><link rel="alternate" href="{u}"/></entry>' for u in PAGES
    )
    index = "".join(f"<sitemap><loc>https://www.gov.si/s{i}.xml</loc></sitemap>" for i in range(2))
    cut = urlset(PAGES)
    return [
        Case("sitemaps.org urlset", lambda: urlset(PAGES), PAGES),
        Case("sitemaps.org index",
             lambda: f'<?xml version="1.0"?><sitemapindex xmlns="{NS}">{index}</sitemapindex>'
             .encode(), sitemaps=[f"https://www.gov.si/s{i}.xml" for i in range(2)]),
        Case("Google 0.84 namespace",
             lambda: urlset(PAGES, "http://www.google.com/schemas/sitemap/0.84"), PAGES),
        Case("no namespace", lambda: urlset(PAGES, None), PAGES),
        Case("misspelt namespace",
             lambda: urlset(PAGES, "http://www.sitemap.org/schemas/sitemap/0.9/"), PAGES),
        Case("gzip, .xml URL", lambda: gzip.compress(urlset(PAGES)), PAGES),
        Case("gzip, wrong Content-Type", lambda: gzip.compress(urlset(PAGES)), PAGES,
             url="https://www.gov.si/sitemap", content_type="text/html"),
        Case("plain text", lambda: "\n".join(PAGES).encode() + b"\n", PAGES,
             url="https://www.gov.si/sitemap.txt", content_type="text/plain"),
        Case("RSS 2.0", lambda: f'<?xml version="1.0"?><rss version="2.0"><channel>'
             f"{rss_items}</channel></rss>".encode(), PAGES,
             url="https://www.gov.si/rss", content_type="application/rss+xml"),
        Case("Atom", lambda: f'<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom">'
             f"{atom}</feed>".encode(), PAGES,
             url="https://www.gov.si/atom", content_type="application/atom+xml"),
        Case("whitespace around <loc>",
             lambda: urlset([f"\n   {u}  \n" for u in PAGES]), PAGES),
        Case("relative, non-http",
             lambda: urlset(["/rel", "p/2", "ftp://www.gov.si/x", "mailto:a@gov.si",
                             "javascript:alert(1)", *OK]), OK),
        Case("BOM", lambda: b"\xef\xbb\xbf" + urlset(PAGES), PAGES),
        Case("blanks before <?xml", lambda: b"\n\n  " + urlset(PAGES), PAGES),
        Case("cut file", lambda: cut[: cut.index(PAGES[2].encode()) + 15], PAGES[:2]),
        Case("HTML as a sitemap", lambda: b"<!DOCTYPE html><html><body><a href="
             b'"https://www.gov.si/a">a</a><loc>https://www.gov.si/b</loc></body></html>',
             url="https://www.gov.si/sitemap.xml", content_type="text/html"),
        Case("billion laughs", _laughs, OK, heavy=True),
        Case("external entity", _xxe, OK, heavy=True),
        Case("gzip bomb (1 GB)", _bomb, PAGES, url="https://www.gov.si/sitemap.xml.gz",
             content_type="application/gzip", heavy=True),
        Case("30 MB <loc>",
             lambda: urlset([*OK, "https://www.gov.si/" + "a" * 30_000_000]), OK, heavy=True),
        Case(f"{ENTRIES:,} entries".replace(",", " "), _many,
             [f"https://a.si/{i}" for i in range(FIRST)], heavy=True, prefix=True),
    ]  # fmt: skip


def absolute(urls: list[str]) -> list[str]:
    """govsi's filter (absolute http(s), stripped), in order, without repeats."""
    from govsi.web.sitemaps import _absolute

    kept = (_absolute(u) for u in urls)
    return list(dict.fromkeys(u for u in kept if u))


def read_govsi(case: Case, body: bytes) -> tuple[list[str], list[str]]:
    from govsi.web.sitemaps import parse_sitemap

    read = parse_sitemap(body, case.url)
    return read.urls, read.sitemaps


def read_scrapy(case: Case, body: bytes) -> tuple[list[str], list[str]]:
    from scrapy.http import Headers, Request
    from scrapy.responsetypes import responsetypes
    from scrapy.spiders import SitemapSpider
    from scrapy.utils.sitemap import Sitemap

    spider = SitemapSpider(name="bench")
    spider._max_size = MAX_BYTES  # govsi's bound, not Scrapy's 1 GB DOWNLOAD_MAXSIZE
    spider._warn_size = MAX_BYTES
    headers = Headers({"Content-Type": case.content_type})
    cls = responsetypes.from_args(headers=headers, url=case.url, body=body)
    response = cls(url=case.url, headers=headers, body=body, request=Request(case.url))
    sitemap_body = spider._get_sitemap_body(response)
    if not sitemap_body:
        return [], []
    sitemap = Sitemap(sitemap_body)
    locs = [entry["loc"] for entry in sitemap if "loc" in entry]
    if sitemap.type == "sitemapindex":
        return [], locs
    if sitemap.type == "urlset":
        return locs, []
    return [], []


def read_usp(case: Case, body: bytes) -> tuple[list[str], list[str]]:
    from usp.fetch_parse import SitemapFetcher
    from usp.web_client.abstract_client import (
        AbstractWebClient,
        AbstractWebClientResponse,
        AbstractWebClientSuccessResponse,
        WebClientErrorResponse,
    )

    class Served(AbstractWebClientSuccessResponse):
        def status_code(self) -> int:
            return 200

        def status_message(self) -> str:
            return "OK"

        def header(self, case_insensitive_name: str) -> str | None:
            return case.content_type if case_insensitive_name.lower() == "content-type" else None

        def raw_data(self) -> bytes:
            return body

        def url(self) -> str:
            return case.url

    class Missing(WebClientErrorResponse):
        pass

    class Local(AbstractWebClient):
        def set_max_response_data_length(self, max_response_data_length: int | None) -> None:
            pass

        def get(self, url: str) -> AbstractWebClientResponse:
            return Served() if url == case.url else Missing("404", retryable=False)

    tree = SitemapFetcher(case.url, 0, web_client=Local()).sitemap()
    return [p.url for p in tree.all_pages()], [s.url for s in tree.sub_sitemaps]


READERS: dict[str, Callable[[Case, bytes], tuple[list[str], list[str]]]] = {
    "govsi": read_govsi,
    "scrapy": read_scrapy,
    "usp": read_usp,
}


def _status_kb(key: str) -> int:
    found = re.search(rf"^{key}:\s+(\d+) kB", Path("/proc/self/status").read_text(), re.M)
    return int(found.group(1)) if found else 0


# What each reader imports, imported before the measurement starts.
IMPORTS = {
    "govsi": ["govsi.web.sitemaps"],
    "scrapy": ["scrapy.http", "scrapy.responsetypes", "scrapy.spiders", "scrapy.utils.sitemap"],
    "usp": ["usp.fetch_parse", "usp.web_client.abstract_client", "govsi.web.sitemaps"],
}


def one(reader: str, name: str, body_file: str) -> dict[str, Any]:
    """Run in a child: one case with one reader, its body read from a file (made by the
    parent, so that making it leaves no high-water mark here)."""
    import importlib
    import logging

    logging.disable(logging.CRITICAL)  # usp logs every URL it skips
    for module in IMPORTS[reader]:
        importlib.import_module(module)
    case = next(c for c in cases() if c.name == name)
    body = Path(body_file).read_bytes()
    # Linux: writing 5 to clear_refs resets the peak RSS (VmHWM) to the RSS now.
    Path("/proc/self/clear_refs").write_text("5")
    before = _status_kb("VmRSS")
    started = time.process_time()
    try:
        urls, children = READERS[reader](case, body)
    except Exception as exc:  # a raise is an outcome here
        verdict, note = "raised", f"{type(exc).__name__}: {str(exc)[:80]}"
    else:
        urls, children = absolute(urls), absolute(children)
        got = urls[: len(case.urls)] if case.prefix else urls
        right = got == case.urls and children == case.sitemaps
        verdict = "right" if right else "wrong"
        shown = [u[:40] + ("..." if len(u) > 40 else "") for u in urls[:3]]
        note = f"{len(urls)} URLs {shown}, {len(children)} sitemaps"
        if any(SECRET in u or "lol" in u for u in urls):
            note += ", ENTITY EXPANDED"
    seconds = time.process_time() - started
    grown = (_status_kb("VmHWM") - before) // 1024
    return {"reader": reader, "case": name, "verdict": verdict, "cpu_s": round(seconds, 2),
            "peak_growth_mb": grown, "heavy": case.heavy, "note": note}  # fmt: skip


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(RESULTS / "sitemap_parsers.json"))
    ap.add_argument("--libs", default="", help="where ultimate-sitemap-parser is installed")
    ap.add_argument("--one", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(one(*args.one)))
        return 0
    env = {**os.environ, "PYTHONPATH": ":".join([str(ROOT), *([args.libs] if args.libs else [])])}
    readers = ["govsi", "scrapy"]
    probe = subprocess.run([sys.executable, "-c", "import usp.fetch_parse"], check=False,
                           env=env, capture_output=True)  # fmt: skip
    if probe.returncode == 0:
        readers.append("usp")
    rows = []
    body_file = Path(tempfile.mkdtemp(prefix="sitemap_parsers_")) / "body"
    for case in cases():
        body_file.write_bytes(case.body())
        for reader in readers:
            cmd = [sys.executable, "-m", "bench.sitemap_parsers", "--one", reader, case.name,
                   str(body_file)]  # fmt: skip
            out = subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=600,
                                 env=env)  # fmt: skip
            if out.returncode:
                died = f"process died ({out.returncode}): {out.stderr[-120:]!r}"
                row = {"reader": reader, "case": case.name, "verdict": "raised", "cpu_s": None,
                       "peak_growth_mb": None, "heavy": case.heavy, "note": died}  # fmt: skip
            else:
                row = json.loads(out.stdout.splitlines()[-1])
            rows.append(row)
            cost = f"{row['cpu_s']:6} s +{row['peak_growth_mb']:4} MB" if case.heavy else " " * 17
            print(f"{case.name:26} {reader:7} {row['verdict']:7} {cost}  {row['note'][:90]}",
                  flush=True)  # fmt: skip
    body_file.unlink()
    body_file.parent.rmdir()
    SECRET_FILE.unlink(missing_ok=True)
    print()
    for reader in readers:
        mine = [r["verdict"] for r in rows if r["reader"] == reader]
        print(f"{reader:7} right {mine.count('right'):2}  wrong {mine.count('wrong'):2}  "
              f"raised {mine.count('raised'):2}  of {len(mine)}")  # fmt: skip
    write_result(Path(args.out), {"machine": machine(), "code": code(ROOT), "rows": rows})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
