"""The real gov.si pages of ``tests/data/realpages`` served on the simulated web, for
crawling them end to end.

Every page is served, byte for byte as stored, at its original URL on its original host:
www.e-prostor.gov.si and evem.gov.si over http, podatki.gov.si and e-uprava.gov.si over
https (their scheme in 2019); the other scheme of each answers a 301 to the same path on
the right one, as the sites did. Each host has a robots.txt that allows everything. Links
stay as in the pages: a link to a page not in the corpus answers 404, on these hosts and
on every other .gov.si host a page links to (they share one address). Hosts outside
.gov.si that the pages link to resolve to the trap address, so a request there is
recorded rather than lost.

A query string is matched the way the sites' servers read it, decoded and in any order
(``a=1&b=x+y`` is ``b=x%20y&a=1``); a path is matched with its percent-escapes decoded.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable
from urllib.parse import parse_qsl, unquote, urljoin, urlsplit

from testkit.realpages import RealPage, pages
from testkit.simweb.server import Host, Resource, SimWeb, _Handler, _Server, redirect

SCHEME = {
    "www.e-prostor.gov.si": "http",
    "evem.gov.si": "http",
    "podatki.gov.si": "https",
    "e-uprava.gov.si": "https",
}
# The sites' front pages, as stored in the corpus.
SEEDS = [
    "http://www.e-prostor.gov.si/",
    "http://evem.gov.si/",
    "https://podatki.gov.si/",
    "https://e-uprava.gov.si/",
]
ROBOTS = Resource(b"User-agent: *\nDisallow:\n", 200, {"Content-Type": "text/plain"})
CONTENT_TYPE = "text/html; charset=utf-8"
_HREF = re.compile(rb"""(?:href|src)\s*=\s*["']?\s*(https?://[^"'\s>]+)""", re.IGNORECASE)


def target_of(url: str) -> str:
    """The request target of a URL: its path and query."""
    s = urlsplit(url)
    return (s.path or "/") + (f"?{s.query}" if s.query else "")


def normal_target(target: str) -> tuple[str, tuple[tuple[str, str], ...]]:
    path, _, query = target.split("#")[0].partition("?")
    return unquote(path), tuple(sorted(parse_qsl(query, keep_blank_values=True)))


def linked_hosts(corpus: Iterable[RealPage]) -> set[str]:
    """Every host an absolute link or source in the pages names."""
    hosts: set[str] = set()
    for p in corpus:
        for m in _HREF.finditer(p.body):
            host = urlsplit(urljoin(p.url, m.group(1).decode("utf-8", "replace"))).hostname
            if host and re.fullmatch(r"[a-z0-9.-]+", host):
                hosts.add(host)
    return hosts


_here = threading.local()


class _SchemeHandler(_Handler):
    def _serve(self, head: bool) -> None:
        _here.scheme = "https" if self.server.server_address[1] == 443 else "http"
        super()._serve(head)


class _SchemeServer(_Server):
    def __init__(self, addr: tuple[str, int], web: SimWeb) -> None:
        self.web = web
        super(_Server, self).__init__(addr, _SchemeHandler)


class RealWeb(SimWeb):
    """A ``SimWeb`` whose every host listens on both 80 and 443 (see the module)."""

    def __init__(self, hosts: list[Host], outside: list[str], corpus: list[RealPage]) -> None:
        super().__init__(hosts, outside)
        self.corpus = corpus
        self._normal: dict[str, dict[tuple[str, tuple[tuple[str, str], ...]], Resource]] = {}
        for h in hosts:
            self._normal[h.name] = {normal_target(t): r for t, r in h.resources.items()}

    def lookup(self, host: str, target: str) -> Resource:
        scheme = getattr(_here, "scheme", None)
        wanted = SCHEME.get(host)
        if wanted and scheme and scheme != wanted:
            return redirect(f"{wanted}://{host}{target}")
        res = super().lookup(host, target)
        if res.status == 404 and host in self._normal:
            res = self._normal[host].get(normal_target(target), res)
        return res

    def start(self) -> RealWeb:
        context = self._tls_context()
        ips = {self.ip_of(h) for h in self.hosts} | {self.trap_ip}
        for ip in sorted(ips):
            for port in (80, 443):
                self._serve(_SchemeServer((ip, port), self), context if port == 443 else None)
        return self


def build(corpus: Iterable[RealPage] | None = None, allow: Iterable[str] = ()) -> RealWeb:
    """The web of the whole corpus (or of the pages given). With ``allow``, every host's
    robots.txt allows those URLs only: a crawl takes them and refuses the rest unasked."""
    chosen = list(pages() if corpus is None else corpus)
    rules: dict[str, list[str]] = {}
    for url in allow:
        rules.setdefault(urlsplit(url).hostname or "", []).append(f"Allow: {target_of(url)}$")

    def robots(host: str) -> Resource:
        if not allow:
            return ROBOTS
        text = "\n".join(["User-agent: *", *rules.get(host, []), "Disallow: /", ""])
        return Resource(text.encode(), 200, {"Content-Type": "text/plain"})

    served: dict[str, dict[str, Resource]] = {h: {"/robots.txt": robots(h)} for h in SCHEME}
    for p in chosen:
        host = urlsplit(p.url).hostname or ""
        served.setdefault(host, {"/robots.txt": robots(host)})
        served[host][target_of(p.url)] = Resource(p.body, 200, {"Content-Type": CONTENT_TYPE})
    hosts = [Host(name, i, res, tls=SCHEME.get(name) == "https") for i, (name, res) in
             enumerate(sorted(served.items()))]  # fmt: skip
    others = sorted(h for h in linked_hosts(chosen) if h not in served)
    shared = len(hosts)  # one address for every other .gov.si host
    hosts += [Host(name, shared, {"/robots.txt": robots(name)}) for name in others
              if name.endswith(".gov.si")]  # fmt: skip
    outside = [name for name in others if not name.endswith(".gov.si")]
    return RealWeb(hosts, outside, chosen)
