"""Webs where politeness, not CPU, sets the pace, each with the delay every host must be
asked at (deterministic for a seed):

- ``many_web``: about 100 small hosts (8-20 pages each), delays of 1-2 s (robots.txt
  ``Crawl-delay`` per host, 1 s default), hosts in address groups of 1-4.
- ``skewed_web``: one large host with a 1.5 s Crawl-delay and eight small ones (0.5 s
  default), some of the small ones sharing an address, one sharing the large host's.
- ``tree_bench_web``: ``build_web``'s web, every host on an address of its own and asked
  at one delay.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field

from bench.lib.webs.parts import (
    ASCII_WORDS,
    PNG,
    SECTION_SLUGS,
    ascii_text,
    image,
    link_page,
    robots_txt,
    sitemap_xml,
)
from bench.lib.webs.tree import build_web
from testkit.simweb.server import Host, Resource, SimWeb


@dataclass
class BenchWeb:
    """A web, its seeds, and the delay each host must be asked at (the rules measured)."""

    name: str
    web: SimWeb
    seeds: list[str]
    default_delay: float
    # max(default, robots.txt Crawl-delay) for every host of the web
    host_delay: dict[str, float] = field(default_factory=dict)
    # (host, path) of every HTML page
    pages: set[tuple[str, str]] = field(default_factory=set)

    # Scrapy DOWNLOAD_SLOTS giving each host its delay (for the plain spider)
    def slots(self) -> dict[str, dict[str, float]]:
        return {h: {"delay": d} for h, d in self.host_delay.items()}


def _robots(delay: float | None, sitemap: str | None) -> Resource:
    lines = ["User-agent: *", "Disallow: /admin/"]
    if delay is not None:
        lines.append(f"Crawl-delay: {delay:g}")
    if sitemap:
        lines += ["", f"Sitemap: {sitemap}"]
    return robots_txt("\n".join(lines) + "\n")


def _site(
    rng: random.Random,
    host: str,
    n_pages: int,
    root_links: list[str],
    foreign: list[str],
    crawl_delay: float | None,
    robots: bool,
    sitemap: bool,
) -> dict[str, Resource]:
    """A host of ``n_pages`` pages: the root links to all of them (and to ``root_links``),
    every page to the root, three pages of its own and one of ``foreign``; a logo on every
    page, a photo on every third."""
    slugs = SECTION_SLUGS
    paths = ["/"] + [f"/{slugs[k % len(slugs)]}/{rng.choice(ASCII_WORDS)}-{k}/" for k in
                     range(1, n_pages)]  # fmt: skip
    out: dict[str, Resource] = {}
    for k, path in enumerate(paths):
        if k == 0:
            links = paths[1:] + root_links
        else:
            own = rng.sample(paths[1:], min(3, n_pages - 1))
            links = ["/", *own] + ([rng.choice(foreign)] if foreign else [])
        images = ["/logo.png"] + ([f"/slike/foto-{k}.png"] if k % 3 == 2 else [])
        for src in images:
            out[src] = image(PNG)
        out[path] = link_page(f"{host} {k}", ascii_text(rng, 60), links, images)
    if robots:
        smap = f"http://{host}/sitemap.xml" if sitemap else None
        out["/robots.txt"] = _robots(crawl_delay, smap)
        if sitemap:
            out["/sitemap.xml"] = sitemap_xml([f"http://{host}{p}" for p in paths])
    return out


_LAST_LINK = re.compile(r'<li><a href="([^"]+)">[^<]*</a></li></ul>')
_ADD_LINK = (
    "<script>document.addEventListener('DOMContentLoaded', () => {{ const a = "
    "document.createElement('a'); a.href = '{href}'; a.textContent = 'več'; "
    "document.body.appendChild(a); }});</script></ul>"
)


def mix_in_javascript(bw: BenchWeb, share: float, seed: int = 0) -> int:
    """Make ``share`` of the pages (roots aside) give their last link only through a
    script, as pages that need a browser for some of their links; the number changed."""
    rng = random.Random(f"govsi-js-{seed}")
    changed = 0
    for host in bw.web.hosts.values():
        for path, res in host.resources.items():
            if path == "/" or not res.headers.get("Content-Type", "").startswith("text/html"):
                continue
            if rng.random() >= share:
                continue
            text = res.body.decode()
            match = _LAST_LINK.search(text)
            if match is None:
                continue
            script = _ADD_LINK.format(href=match.group(1))
            res.body = (text[: match.start()] + script + text[match.end() :]).encode()
            changed += 1
    return changed


def _bench(name: str, hosts: list[Host], seeds: list[str], default: float,
           delays: dict[str, float | None]) -> BenchWeb:  # fmt: skip
    web = SimWeb(hosts)
    bw = BenchWeb(name, web, seeds, default)
    for h in hosts:
        bw.host_delay[h.name] = max(default, delays.get(h.name) or 0.0)
        for path, res in h.resources.items():
            if res.headers.get("Content-Type", "").startswith("text/html"):
                bw.pages.add((h.name, path))
    return bw


def many_web(n_hosts: int = 100, seed: int = 0) -> BenchWeb:
    rng = random.Random(f"govsi-many-{seed}")
    names = [f"{rng.choice(['urad', 'agencija', 'zavod', 'uprava'])}-{i:03d}.gov.si"
             for i in range(n_hosts)]  # fmt: skip
    # Address groups of 1-4 hosts, in order.
    ip_of: list[int] = []
    group = 0
    while len(ip_of) < n_hosts:
        ip_of += [group] * rng.choice([1, 1, 2, 2, 3, 4])
        group += 1
    delays: dict[str, float | None] = {}
    hosts: list[Host] = []
    for i, name in enumerate(names):
        roll = rng.random()
        robots = roll >= 0.2  # a fifth answer robots.txt with 404
        delay = None if roll < 0.4 else (1.5 if roll < 0.7 else 2.0)
        delays[name] = delay
        children = [f"http://{names[j]}/" for j in range(6 * i + 3, 6 * i + 9) if j < n_hosts]
        others = [f"http://{names[j]}/" for j in rng.sample(range(n_hosts), 2) if j != i]
        foreign = [f"http://{names[j]}/" for j in rng.sample(range(n_hosts), 3) if j != i]
        res = _site(rng, name, rng.randint(8, 20), children + others, foreign, delay,
                    robots, sitemap=i % 10 == 5)  # fmt: skip
        hosts.append(Host(name, ip_of[i], res))
    seeds = [f"http://{n}/" for n in names[:3]]
    return _bench("many", hosts, seeds, 1.0, delays)


def skewed_web(seed: int = 0, big_pages: int = 64, big_delay: float = 1.5) -> BenchWeb:
    rng = random.Random(f"govsi-skewed-{seed}")
    big = "portal.gov.si"
    small = [f"{w}.gov.si" for w in ("sod", "zrc", "arso", "jak", "nijz", "fu", "ess", "sova")]
    # portal and sod share an address; zrc+arso, jak+nijz+fu; ess and sova alone.
    small_ip = [0, 1, 1, 2, 2, 2, 3, 4]
    hosts = [Host(big, 0, {})]
    delays: dict[str, float | None] = {big: big_delay}
    roots = [f"http://{s}/" for s in small]
    for k, name in enumerate(small):
        res = _site(rng, name, rng.randint(5, 10), [roots[(k + 1) % len(small)]],
                    [f"http://{big}/"], None, robots=k % 2 == 0, sitemap=False)  # fmt: skip
        hosts.append(Host(name, small_ip[k], res))
        delays[name] = None
    # The large host: the root links to 8 sections, each section to its children.
    paths = ["/"] + [f"/{SECTION_SLUGS[s % len(SECTION_SLUGS)]}-{s}/" for s in range(8)]
    while len(paths) < big_pages:
        parent = paths[1 + (len(paths) - 9) // 7]
        paths.append(f"{parent}{rng.choice(ASCII_WORDS)}-{len(paths)}/")
    res: dict[str, Resource] = {"/robots.txt": _robots(big_delay, None)}
    res["/logo.png"] = image(PNG)
    for k, path in enumerate(paths):
        kids = [p for p in paths if p != path and p.startswith(path) and p.count("/") ==
                path.count("/") + 1]  # fmt: skip
        links = kids + (roots if k == 0 else ["/", rng.choice(paths)])
        res[path] = link_page(f"portal {k}", ascii_text(rng, 80), links, ["/logo.png"])
    hosts[0] = Host(big, 0, res)
    return _bench("skewed", hosts, [f"http://{big}/"], 0.5, delays)


def tree_bench_web(hosts: int, pages: int, delay: float) -> BenchWeb:
    """``build_web(hosts, pages)`` as a BenchWeb whose every host is asked at ``delay``."""
    web, seeds = build_web(hosts, pages)
    names = [s.split("/")[2] for s in seeds]
    page_paths = {
        (name, path)
        for name in names
        for path, res in web.hosts[name].resources.items()
        if "html" in str(res.headers.get("Content-Type", "text/html"))
    }
    return BenchWeb("soak", web, seeds, delay, dict.fromkeys(names, delay), page_paths)
