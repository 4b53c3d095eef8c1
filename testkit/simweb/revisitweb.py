"""A web that changes between two crawls, for the revisit tests: ``build()`` serves its
first version, ``change(web)`` turns it into the second in place, and the constants below
say what changed.

- ``ministrstvo.gov.si`` sends ETag and Last-Modified and answers conditional requests with
  a bodiless 304 (as nginx: If-None-Match first, If-Modified-Since matched exactly). Its
  second robots.txt forbids ``/arhiv/``, a section the first crawl stored.
- ``urad.gov.si`` sends Last-Modified only and shares ministrstvo's address; its
  Crawl-delay doubles.
- ``agencija.gov.si`` sends no validators, so a revisit downloads everything. It has a
  sitemap that, in the second version, names a page nothing links to, a copy of one of its
  pages (``DUPLICATE``) and a link to a page that is missing in both versions.
- ``aplikacija.gov.si``: app shells filled by a script (``RENDER_JS=auto`` renders them);
  the served HTML of one changes, the other's does not.

In the second version, on each of the first three hosts: some pages' main content changes
(one gains a link to a new page, one loses a link), as many change only in their template
(footer date, view counter, CSRF token, banner), some go (404, 410) and one moves (301 to a
new URL); a quarter of the documents and pictures get new bytes (the same size: told by
their hash, not their length). Every other resource is byte for byte the same.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass, field

from testkit.simweb.server import Host, Resource, SimWeb, redirect

M, U, A, J = "ministrstvo.gov.si", "urad.gov.si", "agencija.gov.si", "aplikacija.gov.si"
SEEDS = [f"http://{M}/", f"http://{A}/"]
LAST_MODIFIED = {1: "Mon, 02 Nov 2026 08:00:00 GMT", 2: "Wed, 25 Nov 2026 08:00:00 GMT"}
CRAWL_DELAY = {1: 0.1, 2: 0.2}  # urad.gov.si's, in each version
# What a rendered page fetches through the crawler (not pages: never stored as such).
SUBRESOURCES = frozenset({(J, "/app.js"), (J, "/api/vsebina")})

WORDS = [
    "občina",
    "uprava",
    "zakon",
    "uredba",
    "minister",
    "vlada",
    "postopek",
    "vloga",
    "obrazec",
    "javni",
    "razpis",
    "sklep",
    "pravilnik",
    "državljan",
    "storitev",
    "podatki",
    "poročilo",
    "odločba",
    "davek",
    "pokojnina",
    "šola",
    "zdravje",
    "promet",
    "okolje",
    "kmetijstvo",
    "kultura",
    "varnost",
    "obramba",
    "pravosodje",
    "gospodarstvo",
]


@dataclass(frozen=True)
class Plan:
    """One host and what its second version does to it (pages are ``/stran/<i>``)."""

    name: str
    ip_index: int
    validators: tuple[str, ...]  # which of "ETag", "Last-Modified" it sends
    pages: int
    main_changed: tuple[int, ...]  # the first gains a link to /nova-stran, the second loses one
    template_changed: tuple[int, ...]
    gone: dict[int, int] = field(default_factory=dict)  # page -> 404 or 410
    moved: tuple[int, ...] = ()  # page -> 301 to /preseljeno/<i>
    documents: tuple[str, ...] = ()  # under /dokumenti/; the first is replaced
    pictures: int = 0  # /slike/s<i>.png, each shown on a page; the first is replaced


PLANS = (
    Plan(M, 0, ("ETag", "Last-Modified"), 30, (0, 1, 2, 3, 4), (5, 6, 7, 8, 9),
         {10: 404, 11: 410}, (12,), ("a.pdf", "b.pdf", "c.docx", "d.pptx"), 4),
    Plan(U, 0, ("Last-Modified",), 20, (0, 1, 2), (3, 4, 5), {6: 404}, (7,),
         ("a.docx", "b.pdf", "c.pdf", "d.doc"), 4),
    Plan(A, 1, (), 12, (0, 1), (2, 3), {4: 410}, (), ("a.pdf", "b.ppt", "c.pdf", "d.pdf"), 4),
)  # fmt: skip
ARCHIVE = tuple(f"/arhiv/{i}" for i in range(3))  # ministrstvo's, forbidden in version 2
SITEMAP_ONLY = "/samo-zemljevid"  # agencija's, named by its second sitemap only
COPY = ("/kopija", "/stran/8")  # agencija's pair of pages with the same content
MISSING = "/manjka"  # agencija's, 404 in both versions
TEXT = "/besedilo.txt"  # agencija's plain text (OTHER), the same in both versions
ENDLESS = "/neskoncno"  # agencija's body without end: a fetch error (ERROR) in both
OLD_ADDRESS = ("/staro", "/stran/9")  # ministrstvo's redirect, the same in both versions
DOC_TYPES = {
    "pdf": ("application/pdf", b"%PDF-1.4\n"),
    "doc": ("application/msword", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"),
    "ppt": ("application/vnd.ms-powerpoint", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"),
    "docx": (
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        b"PK\x03\x04",
    ),
    "pptx": (
        "application/vnd.openxmlformats-officedocument.presentationml.presentation",
        b"PK\x03\x04",
    ),
}
PNG_HEAD = b"\x89PNG\r\n\x1a\n"


def _words(seed: str, n: int) -> str:
    rng = random.Random(seed)
    return " ".join(rng.choice(WORDS) for _ in range(n))


def _main_text(host: str, i: int, version: int) -> str:
    # Each page its own sentences, or the duplicate detector would rightly merge them.
    return "".join(f"<p>{_words(f'{host}/{i}/{version}/{k}', 30)}.</p>" for k in range(3))


def main_text_words(host: str, i: int, version: int) -> str:
    """Page ``/stran/<i>``'s main-text sentences in ``version`` (a main change's own), as
    text: what a diff of its versions compares."""
    return " ".join(f"{_words(f'{host}/{i}/{version}/{k}', 30)}." for k in range(3))


def _template(title: str, main: str, version: int) -> str:
    """A page in the hosts' shared template: the header, menu, banner and footer are the
    template (what the main-text key leaves out); ``version`` varies only them."""
    day, views, token = (2, 1041, "a1b2c3") if version == 1 else (25, 2210, "f9e8d7")
    return (
        f"<!DOCTYPE html><html><head><title>{title}</title></head><body>"
        f'<header><form action="/iskanje"><input type="hidden" name="csrf" value="{token}">'
        f'</form><nav><a href="/">Domov</a></nav></header>'
        f'<aside class="banner">Pasica {views % 7}</aside>'
        f"<main><h1>{title}</h1>{main}</main>"
        f"<footer>Posodobljeno {day}. 11. 2026 · {views} ogledov</footer></body></html>"
    )


def _page_body(plan: Plan, i: int, version: int) -> str:
    main_version = 2 if version == 2 and i in plan.main_changed else 1
    links = [] if (version == 2 and plan.main_changed[1:2] == (i,)) else [(i + 1) % plan.pages]
    main = _main_text(plan.name, i, main_version)
    main += "".join(f'<a href="/stran/{j}">Naprej na {j}</a>' for j in links)
    if version == 2 and plan.main_changed[:1] == (i,):
        main += '<a href="/nova-stran">Novo</a>'
    if plan.pictures and i < plan.pictures:
        main += f'<img src="/slike/s{i}.png" alt="slika {i}">'
    template_version = 2 if version == 2 and i in plan.template_changed else 1
    return _template(f"{plan.name} {i}", main, template_version)


def _binary(seed: str, head: bytes, size: int) -> bytes:
    return head + hashlib.sha256(seed.encode()).digest() * ((size - len(head)) // 32 + 1)


class _Versioned:
    """A host's resources in one version, each with the validators its host sends: the
    ETag is its bytes' digest, Last-Modified the version it first appeared in."""

    def __init__(self, plan: Plan | None, version: int) -> None:
        self.validators = plan.validators if plan else ("ETag", "Last-Modified")
        self.version = version
        self.resources: dict[str, Resource] = {}

    def add(self, path: str, body: bytes, ctype: str, new: bool = False) -> None:
        headers = {"Content-Type": ctype}
        if "ETag" in self.validators:
            headers["ETag"] = f'"{hashlib.sha256(body).hexdigest()[:16]}"'
        if "Last-Modified" in self.validators:
            headers["Last-Modified"] = LAST_MODIFIED[2 if new else 1]
        self.resources[path] = Resource(body, 200, headers)

    def page(self, path: str, text: str, new: bool = False) -> None:
        self.add(path, text.encode(), "text/html; charset=utf-8", new)

    def plain(self, path: str, text: str, status: int = 200, ctype: str = "text/plain") -> None:
        self.resources[path] = Resource(text.encode(), status, {"Content-Type": ctype})


def _host(plan: Plan, version: int) -> dict[str, Resource]:
    out = _Versioned(plan, version)
    v2 = version == 2
    index = "".join(f'<a href="/stran/{i}">Stran {i}</a>' for i in range(plan.pages))
    index += "".join(f'<a href="/dokumenti/{d}">{d}</a>' for d in plan.documents)
    for i in range(plan.pages):
        if v2 and i in plan.gone:
            out.plain(f"/stran/{i}", "<html><body>Ni je več</body></html>", plan.gone[i],
                      "text/html")  # fmt: skip
        elif v2 and i in plan.moved:
            out.resources[f"/stran/{i}"] = redirect(f"http://{plan.name}/preseljeno/{i}")
            out.page(f"/preseljeno/{i}", _page_body(plan, i, 1), new=True)
        else:
            changed = v2 and (i in plan.main_changed or i in plan.template_changed)
            out.page(f"/stran/{i}", _page_body(plan, i, version), new=changed)
    if v2 and plan.main_changed:
        out.page("/nova-stran", _template("Nova stran", _main_text(plan.name, 99, 2), 1), True)
    for k, name in enumerate(plan.documents):
        ctype, head = DOC_TYPES[name.rsplit(".", 1)[1]]
        replaced = v2 and k == 0
        body = _binary(f"{plan.name}/{name}/{2 if replaced else 1}", head, 2000 + 100 * k)
        out.add(f"/dokumenti/{name}", body, ctype, new=replaced)
    for k in range(plan.pictures):
        replaced = v2 and k == 0
        body = _binary(f"{plan.name}/s{k}/{2 if replaced else 1}", PNG_HEAD, 300)
        out.add(f"/slike/s{k}.png", body, "image/png", new=replaced)
    if plan.name == M:
        index += "".join(f'<a href="{p}">Arhiv</a>' for p in ARCHIVE)
        index += f'<a href="{OLD_ADDRESS[0]}">Staro</a><a href="/zasebno/x">Zasebno</a>'
        index += f'<a href="http://{U}/">Urad</a><a href="http://{J}/">Aplikacija</a>'
        for k, path in enumerate(ARCHIVE):
            out.page(path, _template(f"Arhiv {k}", _main_text(M, 50 + k, 1), 1))
        out.resources[OLD_ADDRESS[0]] = redirect(f"http://{M}{OLD_ADDRESS[1]}")
        forbidden = "Disallow: /zasebno/\n" + ("Disallow: /arhiv/\n" if v2 else "")
        out.plain("/robots.txt", f"User-agent: *\n{forbidden}")
    elif plan.name == U:
        out.plain("/robots.txt", f"User-agent: *\nCrawl-delay: {CRAWL_DELAY[version]}\n")
    else:
        index += f'<a href="{COPY[0]}">Kopija</a><a href="{MISSING}">Manjka</a>'
        original = out.resources[COPY[1]]
        out.resources[COPY[0]] = Resource(original.body, 200, dict(original.headers))
        index += f'<a href="{TEXT}">Besedilo</a><a href="{ENDLESS}">Brez konca</a>'
        out.plain(MISSING, "<html><body>Ni strani</body></html>", 404, "text/html")
        out.plain(TEXT, "Navadno besedilo.")
        out.resources[ENDLESS] = Resource(b"<p>" + b"brez konca " * 1000, 200,
                                          {"Content-Type": "text/html"}, endless=True)  # fmt: skip
        named = [f"http://{A}/", *(f"http://{A}/stran/{i}" for i in range(plan.pages))]
        if v2:
            out.page(SITEMAP_ONLY, _template("Samo v zemljevidu", _main_text(A, 77, 2), 1), True)
            named.append(f"http://{A}{SITEMAP_ONLY}")
        urls = "".join(f"<url><loc>{u}</loc></url>" for u in named)
        out.plain("/sitemap.xml", f'<?xml version="1.0" encoding="UTF-8"?><urlset xmlns='
                  f'"http://www.sitemaps.org/schemas/sitemap/0.9">{urls}</urlset>', 200,
                  "application/xml")  # fmt: skip
        out.plain("/robots.txt", f"User-agent: *\nDisallow:\nSitemap: http://{A}/sitemap.xml\n")
    out.page("/", _template(plan.name, f"<p>{_words(plan.name, 20)}</p>{index}", 1))
    return out.resources


APP_JS = """
fetch('/api/vsebina').then(r => r.json()).then(items => {
  const app = document.getElementById('app');
  for (const it of items) {
    const a = document.createElement('a'); a.href = it.href; a.textContent = it.title;
    app.appendChild(a);
  }
});
"""


def _apps(version: int) -> dict[str, Resource]:
    """aplikacija.gov.si: /app and /app2, shells filled by /app.js; /app2's served HTML
    (its introduction) changes in version 2."""
    out = _Versioned(None, version)
    for path, changes in (("/app", False), ("/app2", True)):
        intro = _main_text(J, len(path), 2 if version == 2 and changes else 1)
        shell = f'{intro}<div id="app"></div><script src="/app.js"></script>'
        out.page(path, _template(f"Aplikacija {path}", shell, 1), new=version == 2 and changes)
    out.page("/", _template("Aplikacija", '<a href="/app">A</a><a href="/app2">B</a>', 1))
    out.add("/app.js", APP_JS.encode(), "application/javascript")
    out.add("/api/vsebina", b'[{"href": "/iz-js", "title": "Iz skripte"}]', "application/json")
    out.page("/iz-js", _template("Iz skripte", _main_text(J, 9, 1), 1))
    out.plain("/robots.txt", "User-agent: *\nDisallow:\n")
    return out.resources


def _version(version: int) -> dict[str, dict[str, Resource]]:
    hosts = {plan.name: _host(plan, version) for plan in PLANS}
    hosts[J] = _apps(version)
    return hosts


def build() -> SimWeb:
    first = _version(1)
    ips = {plan.name: plan.ip_index for plan in PLANS} | {J: 2}
    return SimWeb([Host(name, ips[name], resources) for name, resources in first.items()])


def change(web: SimWeb) -> None:
    """Turn ``web`` (``build()``'s) into the second version."""
    for name, resources in _version(2).items():
        web.hosts[name].resources = resources


# -- what changed, (host, path) ------------------------------------------------------------
def _each(pick: str) -> set[tuple[str, str]]:
    out: set[tuple[str, str]] = set()
    for p in PLANS:
        pages = {
            "main": p.main_changed,
            "template": p.template_changed,
            "gone": tuple(p.gone),
            "moved": p.moved,
        }.get(pick, ())
        out |= {(p.name, f"/stran/{i}") for i in pages}
        if pick == "documents" and p.documents:
            out.add((p.name, f"/dokumenti/{p.documents[0]}"))
        if pick == "pictures" and p.pictures:
            out.add((p.name, "/slike/s0.png"))
        if pick == "new":
            out |= {(p.name, f"/preseljeno/{i}") for i in p.moved}
            out |= {(p.name, "/nova-stran")} if p.main_changed else set()
    return out


MAIN_CHANGED = _each("main") | {(J, "/app2")}
TEMPLATE_CHANGED = _each("template")
GONE = _each("gone")
MOVED = _each("moved")
REPLACED_DOCUMENTS = _each("documents")
REPLACED_PICTURES = _each("pictures")
# Every URL whose current version differs from its first (pages and documents).
CHANGED = MAIN_CHANGED | GONE | MOVED | REPLACED_DOCUMENTS
NEW = _each("new") | {(A, SITEMAP_ONLY)}
FORBIDDEN = {(M, p) for p in ARCHIVE}
