"""A web that tries to make the crawler misbehave, beside a small ordinary site.

- ``www.zlo.gov.si``: the ordinary site that must be stored whole. Its home page links
  every hostile host, a host whose name resolves to a private address, and its robots.txt
  names a sitemap listing one page only the sitemap knows.
- ``zasebni.gov.si`` resolves to a loopback address outside ALLOWED_PRIVATE_NETWORKS,
  where a listener counts connections; ``metapodatki.gov.si`` to 169.254.169.254.
- ``preusmeri.gov.si``: its robots.txt redirects out of scope; a page's meta refresh
  points out of scope, another's to one of its own pages.
- ``karte.gov.si``: its sitemap is an HTML page whose meta refresh points out of scope;
  a second sitemap lists 100 000 URLs of ``www.zlo.gov.si``.
- ``dogodki.gov.si``: an endless calendar (each month links the previous and the next),
  an endless redirect chain on one path, and a 300-page news archive that is real
  pagination (each page brings new articles).
- ``tezki.gov.si``: the pages that cost a careless parser the most: a 72 KB onclick of
  ``window . window . …``, 180 KB of nested ``class="content"`` blocks and of nested
  ``id="app"`` roots, 200 000 links, a PDF whose Content-Length is not ASCII digits, and
  the documents of ``HEAVY_DOCUMENTS``.
- ``pocasi.gov.si``: ``Crawl-delay: 99999999``.
"""

from __future__ import annotations

import re
import socket

from testkit.listeners import TcpListener
from testkit.simweb.documents import make_doc, make_pdf, pdf_bomb, tree_bomb_docx, zip_bomb_docx
from testkit.simweb.server import Host, Resource, SimWeb, html, redirect

Z, ZS, MD, PR, K, D, T, PO = (
    "http://www.zlo.gov.si",
    "http://zasebni.gov.si",
    "http://metapodatki.gov.si",
    "http://preusmeri.gov.si",
    "http://karte.gov.si",
    "http://dogodki.gov.si",
    "http://tezki.gov.si",
    "http://pocasi.gov.si",
)
OUTSIDE = "zunaj.example.com"
SEEDS = [f"{Z}/"]
CALENDAR_START = 600
ARCHIVE_PAGES = 300
ARTICLES_PER_PAGE = 2
SITEMAP_ENTRIES = 100_000
HEAVY = ["/onclick", "/vsebina", "/aplikacija", "/povezave"]
# Documents whose text costs a careless reader the most: a DOCX of 300 MB unpacked (a
# zip bomb of 300 KB), a PDF of 10 000 pages, a DOC whose compound file is broken; a PDF
# bomb (one page of 1 MB, a gigabyte of spaces unpacked: pdfium takes it whole) and a DOCX
# of 60 MB unpacked (90 KB) that is 10 million empty runs in one paragraph.
BOMB_UNPACKED = 300 * 2**20
PDF_BOMB_BYTES = 1_000_000
TREE_BOMB_UNPACKED = 60 * 2**20
HEAVY_DOCUMENTS = ["/bomba.docx", "/tisoc-strani.pdf", "/pokvarjen.doc", "/bomba.pdf",
                   "/drevo.docx"]  # fmt: skip

# What the crawl must store as HTML 200: the ordinary site, and the pages of the hostile
# hosts that are ordinary pages.
ORDINARY = [f"{Z}/", f"{Z}/o-nas", f"{Z}/kontakt", f"{Z}/samo-v-zemljevidu"]


def page(title: str, links: list[str], extra: str = "") -> Resource:
    body = " ".join(f'<a href="{href}">{href}</a>' for href in links)
    head = f"<head><title>{title}</title>{extra}</head>"
    return html(f"<html>{head}<body><h1>{title}</h1><p>{title}: besedilo.</p>{body}</body></html>")


def robots(*lines: str) -> Resource:
    return Resource("\n".join(lines).encode(), 200, {"Content-Type": "text/plain"})


def refresh(url: str) -> str:
    return f'<meta http-equiv="refresh" content="0; url={url}">'


def _zlo() -> Host:
    return Host("www.zlo.gov.si", 0, {
        "/robots.txt": robots("User-agent: *", "Allow: /", f"Sitemap: {Z}/sitemap.xml"),
        "/sitemap.xml": Resource(
            f'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
            f"<url><loc>{Z}/samo-v-zemljevidu</loc></url></urlset>".encode(),
            200, {"Content-Type": "application/xml"},
        ),
        "/": page("Zlo", [
            "/o-nas", "/kontakt", f"{ZS}/", f"{MD}/latest/meta-data/", f"{PR}/", f"{K}/",
            f"{D}/", f"{T}/", f"{PO}/",
        ]),
        "/o-nas": page("O nas", ["/", "/kontakt"]),
        "/kontakt": page("Kontakt", ["/", "/o-nas"]),
        "/samo-v-zemljevidu": page("Samo v zemljevidu", ["/"]),
    })  # fmt: skip


def _preusmeri() -> Host:
    return Host("preusmeri.gov.si", 1, {
        "/robots.txt": redirect(f"http://{OUTSIDE}/robots.txt"),
        "/": page("Preusmeri", ["/osvezi-ven", "/osvezi-noter"]),
        "/osvezi-ven": page("Osveži ven", [], refresh(f"http://{OUTSIDE}/ujet")),
        "/osvezi-noter": page("Osveži noter", [], refresh("/cilj")),
        "/cilj": page("Cilj", ["/"]),
    })  # fmt: skip


def _karte() -> Host:
    big = "".join(f"<url><loc>{Z}/iz-karte/{i}</loc></url>" for i in range(SITEMAP_ENTRIES))
    return Host("karte.gov.si", 2, {
        "/robots.txt": robots("User-agent: *", "Allow: /", f"Sitemap: {K}/sitemap.xml",
                              f"Sitemap: {K}/velik.xml"),
        "/sitemap.xml": html(f"<html><head>{refresh(f'http://{OUTSIDE}/sitemap.xml')}</head>"
                             "<body>Premaknjeno</body></html>"),
        "/velik.xml": Resource(
            ('<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
             f"{big}</urlset>").encode(), 200, {"Content-Type": "application/xml"},
        ),
        "/": page("Karte", []),
    })  # fmt: skip


def _dogodki_dynamic(target: str) -> Resource | None:
    if m := re.fullmatch(r"/koledar\?mesec=(-?\d+)", target):
        n = int(m.group(1))
        return page(f"Koledar {n}", ["/", f"/koledar?mesec={n - 1}", f"/koledar?mesec={n + 1}"])
    if m := re.fullmatch(r"/preusmeritev\?n=(\d+)", target):
        return redirect(f"/preusmeritev?n={int(m.group(1)) + 1}", 302)
    if m := re.fullmatch(r"/novice\?stran=(\d+)", target):
        n = int(m.group(1))
        articles = [f"/novice/{n}-{i}" for i in range(ARTICLES_PER_PAGE)]
        more = [f"/novice?stran={n + 1}"] if n < ARCHIVE_PAGES else []
        return page(f"Novice {n}", ["/", *articles, *more])
    if m := re.fullmatch(r"/novice/(\d+)-(\d+)", target):
        return page(f"Članek {m.group(1)}-{m.group(2)}", ["/"])
    return None


def _dogodki() -> Host:
    return Host("dogodki.gov.si", 3, {
        "/": page("Dogodki", [f"/koledar?mesec={CALENDAR_START}", "/preusmeritev?n=0",
                              "/novice?stran=1"]),
    }, dynamic=_dogodki_dynamic)  # fmt: skip


def _tezki() -> Host:
    onclick = "window . " * 9000 + "location.href='/po-kliku'"
    nested_content = '<div class="content">' * 7500 + "besedilo" + "</div>" * 7500
    nested_app = '<div id="app">' * 9000 + "besedilo" + "</div>" * 9000
    links = "".join(f'<a href="http://{OUTSIDE}/{i}">{i}</a>' for i in range(200_000))
    return Host("tezki.gov.si", 4, {
        "/": page("Težki", [*HEAVY, *HEAVY_DOCUMENTS, "/dokument.pdf"]),
        "/onclick": html(f'<html><body><h1>Onclick</h1><a onclick="{onclick}">x</a></body></html>'),
        "/po-kliku": page("Po kliku", ["/"]),
        "/vsebina": html(f"<html><body><h1>Vsebina</h1>{nested_content}</body></html>"),
        "/aplikacija": html(f"<html><body><h1>Aplikacija</h1>{nested_app}</body></html>"),
        "/povezave": html(f"<html><body><h1>Povezave</h1>{links}</body></html>"),
        # "²" (latin-1 0xB2) is a digit to str.isdigit(), not to int().
        "/dokument.pdf": Resource(b"%PDF-1.4\n%%EOF\n", 200,
                                  {"Content-Type": "application/pdf", "Content-Length": "²"}),
        "/bomba.docx": Resource(zip_bomb_docx(BOMB_UNPACKED)),
        "/tisoc-strani.pdf": Resource(make_pdf([f"Stran {i}" for i in range(10_000)])),
        "/pokvarjen.doc": Resource(make_doc([("Besedilo", True)])[:3000]),
        "/bomba.pdf": Resource(pdf_bomb(PDF_BOMB_BYTES)),
        "/drevo.docx": Resource(tree_bomb_docx(TREE_BOMB_UNPACKED)),
    })  # fmt: skip


def _pocasi() -> Host:
    return Host("pocasi.gov.si", 5, {
        "/robots.txt": robots("User-agent: *", "Crawl-delay: 99999999", "Allow: /"),
        "/": page("Počasi", ["/stran"]),
        "/stran": page("Stran", ["/"]),
    })  # fmt: skip


class Listener(TcpListener):
    """A TCP listener on the private address ``zasebni.gov.si`` resolves to: every
    connection that reaches it is counted (none may)."""

    def __init__(self, ip: str, port: int = 80) -> None:
        self.connections: list[tuple[str, int]] = []
        super().__init__(ip, port)

    def handle(self, conn: socket.socket, peer: tuple[str, int]) -> None:
        self.connections.append(peer)
        conn.close()


def build() -> tuple[SimWeb, Listener]:
    web = SimWeb([_zlo(), _preusmeri(), _karte(), _dogodki(), _tezki(), _pocasi()],
                 outside=[OUTSIDE])  # fmt: skip
    # Loopback, like the web, but outside its /24 (what ALLOWED_PRIVATE_NETWORKS allows).
    a, b = web.prefix.split(".")[1:3]
    private_ip = f"127.{a}.{int(b) % 250 + 1}.9"
    web.names["zasebni.gov.si"] = private_ip
    web.names["metapodatki.gov.si"] = "169.254.169.254"
    return web, Listener(private_ip)
