"""What a crawl of a generated web (``webs.build_web``) must have done: every page, image
and robots.txt requested, nothing robots.txt disallows, one HTML row per page."""

from __future__ import annotations

from collections import Counter
from urllib.parse import urlsplit

from bench.lib.webs import DISALLOWED
from testkit.crawl import query
from testkit.simweb.server import SimWeb

Expected = dict[str, set[tuple[str, str]]]


def expected(web: SimWeb) -> Expected:
    """(host, path) of every page, image and robots.txt the crawl must request once, and
    of the sitemaps robots.txt files name, which it may request (once)."""
    kinds = ("pages", "images", "robots", "sitemaps")
    out: Expected = {k: set() for k in kinds}
    for name, host in web.hosts.items():
        out["robots"].add((name, "/robots.txt"))
        for path, res in host.resources.items():
            ctype = res.headers.get("Content-Type", "")
            if ctype.startswith("text/html"):
                out["pages"].add((name, path))
            elif ctype.startswith("image/"):
                out["images"].add((name, path))
            elif path == "/robots.txt":
                for line in res.body.decode().splitlines():
                    if line.lower().startswith("sitemap:"):
                        url = urlsplit(line.split(":", 1)[1].strip())
                        out["sitemaps"].add((url.hostname or "", url.path))
    return out


def disallowed_requests(web: SimWeb, counts: Counter[tuple[str, str]]) -> list[str]:
    """A problem if any (host, target) requested is one its robots.txt disallows."""
    robots_hosts = {n for n, h in web.hosts.items() if "/robots.txt" in h.resources}
    forbidden = [k for k in counts if k[0] in robots_hosts and k[1].startswith(DISALLOWED)]
    return [f"robots.txt-disallowed URLs requested: {forbidden[:5]}"] if forbidden else []


def check_db(db_url: str, exp: Expected) -> tuple[list[str], dict[str, int]]:
    """Problems with crawldb's HTML rows (one per page, status 200), and its row counts."""
    rows = query(db_url, "SELECT url, http_status_code FROM page WHERE page_type_code = 'HTML'")
    counts = {
        t: int(query(db_url, f"SELECT count(*) FROM {t}")[0][0])
        for t in ("site", "page", "link", "image")
    }
    sql = "SELECT count(*) FROM image WHERE data IS NOT NULL"
    counts["image_with_data"] = int(query(db_url, sql)[0][0])
    want = {f"http://{h}{p}" for h, p in exp["pages"]}
    got = Counter(url for url, _ in rows)
    problems: list[str] = []
    if missing := sorted(want - got.keys()):
        problems.append(f"{len(missing)} pages without an HTML row, e.g. {missing[:5]}")
    if extra := sorted(got.keys() - want):
        problems.append(f"{len(extra)} unexpected HTML rows, e.g. {extra[:5]}")
    if dup := sorted(u for u, n in got.items() if n > 1):
        problems.append(f"{len(dup)} pages with several HTML rows, e.g. {dup[:5]}")
    if bad := sorted(u for u, s in rows if s != 200):
        problems.append(f"{len(bad)} HTML rows with a status other than 200, e.g. {bad[:5]}")
    counts["html_rows"] = len(rows)
    return problems, counts
