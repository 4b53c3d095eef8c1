"""A web whose pages are cheap to send and costly to read, beside a small ordinary site.

- ``www.poplava.gov.si``: the ordinary site. Its robots.txt names two sitemaps: one that
  inflates to 50 MB of empty ``<url/>`` (50 KB gzipped, made when first asked for), and
  an ordinary one listing a page only the sitemap knows. Its home page links a 30 MiB
  page of one word repeated (``a a a …``, 30 KB gzipped), a 30 MiB page of 1.4 M links
  (``<a href="/o-nas">``, 60 KB gzipped) and the two hosts below.
- ``glave.gov.si`` and ``polja.gov.si``: a raw HTTP server (``HeaderFlood``) whose home
  page sends 25 MB of header continuation lines, or 10 000 headers, before a small body;
  it counts the bytes it got to send before the client hung up.
"""

from __future__ import annotations

import socket
import threading
import zlib
from collections.abc import Iterator
from functools import cache

from testkit.listeners import TcpListener
from testkit.simweb.server import Host, Resource, SimWeb, html

P = "http://www.poplava.gov.si"
GLAVE, POLJA = "glave.gov.si", "polja.gov.si"
SEEDS = [f"{P}/"]
EMPTY_SITEMAP_BYTES = 50 * 2**20
WORD_PAGE_BYTES = 30 * 2**20
ANCHOR = b'<a href="/o-nas">y</a>'
FLOOD_BYTES = 25 * 2**20
FLOOD_HEADERS = 10_000
ORDINARY = [f"{P}/", f"{P}/o-nas", f"{P}/samo-v-zemljevidu", f"{P}/beseda", f"{P}/znacke"]


def gzipped(head: bytes, filler: bytes, size: int, tail: bytes = b"") -> bytes:
    """``head`` + ``filler`` repeated to ``size`` bytes + ``tail``, gzipped a megabyte at a
    time (50 MB of filler never exists whole)."""

    def pieces() -> Iterator[bytes]:
        yield head
        block = filler * (2**20 // len(filler))
        for _ in range(size // len(block)):
            yield block
        yield tail

    packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    return b"".join([*(packer.compress(p) for p in pieces()), packer.flush()])


@cache
def _empty_sitemap() -> Resource:
    body = gzipped(b"<urlset>", b"<url/>", EMPTY_SITEMAP_BYTES, b"</urlset>")
    return Resource(body, 200, {"Content-Type": "application/x-gzip"})


@cache
def _word_page() -> Resource:
    body = gzipped(b"<html><body><main><p>", b"a ", WORD_PAGE_BYTES, b"</p></main></body></html>")
    return Resource(
        body, 200, {"Content-Type": "text/html; charset=utf-8", "Content-Encoding": "gzip"}
    )


@cache
def _anchor_page() -> Resource:
    body = gzipped(b"<html><body>", ANCHOR, WORD_PAGE_BYTES, b"</body></html>")
    return Resource(
        body, 200, {"Content-Type": "text/html; charset=utf-8", "Content-Encoding": "gzip"}
    )


def _page(title: str, links: list[str]) -> Resource:
    body = " ".join(f'<a href="{href}">{href}</a>' for href in links)
    return html(f"<html><head><title>{title}</title></head><body><h1>{title}</h1>"
                f"<p>{title}: besedilo strani.</p>{body}</body></html>")  # fmt: skip


def _poplava() -> Host:
    sitemap = f"<urlset><url><loc>{P}/samo-v-zemljevidu</loc></url></urlset>".encode()
    resources = {
        "/robots.txt": Resource(
            f"User-agent: *\nAllow: /\nSitemap: {P}/prazen.xml.gz\nSitemap: {P}/sitemap.xml\n"
            .encode(), 200, {"Content-Type": "text/plain"},
        ),
        "/sitemap.xml": Resource(sitemap, 200, {"Content-Type": "application/xml"}),
        "/": _page("Poplava", ["/o-nas", "/beseda", "/znacke", f"http://{GLAVE}/", f"http://{POLJA}/"]),
        "/o-nas": _page("O nas", ["/"]),
        "/samo-v-zemljevidu": _page("Samo v zemljevidu", ["/"]),
    }  # fmt: skip
    lazy = {"/prazen.xml.gz": _empty_sitemap, "/beseda": _word_page, "/znacke": _anchor_page}
    return Host("www.poplava.gov.si", 0, resources, dynamic=lambda t: lazy.get(t, lambda: None)())


class HeaderFlood(TcpListener):
    """A raw HTTP/1.1 server on ``ip``:80: robots.txt is a 404; any other page of
    ``glave.gov.si`` gets FLOOD_BYTES of continuation lines, of ``polja.gov.si``
    FLOOD_HEADERS headers, then a small body. ``sent[host]``: the bytes of each flood
    that the client took before hanging up (all of them if it never did)."""

    def __init__(self, ip: str) -> None:
        self.sent: dict[str, int] = {}
        super().__init__(ip, 80)

    def handle(self, conn: socket.socket, peer: tuple[str, int]) -> None:
        threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            conn.settimeout(30)
            request = b""
            while b"\r\n\r\n" not in request and len(request) < 65536:
                data = conn.recv(4096)
                if not data:
                    return
                request += data
            lines = request.decode("latin-1").split("\r\n")
            path = lines[0].split(" ")[1] if len(lines[0].split(" ")) > 1 else "/"
            host = next((ln.split(":", 1)[1].strip().split(":")[0].lower()
                         for ln in lines[1:] if ln.lower().startswith("host:")), "")  # fmt: skip
            if path == "/robots.txt":
                conn.sendall(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n"
                             b"Connection: close\r\n\r\n")  # fmt: skip
                return
            self.sent[host] = 0
            try:
                for piece in self._flood(host):
                    conn.sendall(piece)
                    self.sent[host] += len(piece)
            except OSError:  # the client hung up: what it took is counted
                pass

    @staticmethod
    def _flood(host: str) -> Iterator[bytes]:
        yield b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n"
        if host == GLAVE:
            yield b"X-Poplava: a\r\n"
            line = b" " + b"a" * 62 + b"\r\n"
            block = line * (65536 // len(line))
            for _ in range(FLOOD_BYTES // len(block)):
                yield block
        else:
            for start in range(0, FLOOD_HEADERS, 1000):
                yield b"".join(b"X-Polje-%d: v\r\n" % i for i in range(start, start + 1000))
        yield b"Content-Length: 2\r\nConnection: close\r\n\r\nok"

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self._sock.close()


def build() -> tuple[SimWeb, HeaderFlood]:
    web = SimWeb([_poplava()])
    flood_ip = f"{web.prefix}9"
    web.names[GLAVE] = flood_ip
    web.names[POLJA] = flood_ip
    return web, HeaderFlood(flood_ip)
