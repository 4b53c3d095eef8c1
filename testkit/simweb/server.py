"""A simulated web on loopback: many host names, each served on port 80 (or 443 with a
self-signed certificate) of its own 127.x.y.z address, some addresses shared by several
hosts. The crawler reaches it through ``testkit.simweb.resolver.SimWebResolver`` set as
Scrapy's ``TWISTED_DNS_RESOLVER``; every request served is recorded for the tests."""

from __future__ import annotations

import datetime as dt
import random
import socket
import ssl
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


@dataclass
class Resource:
    body: bytes = b""
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    # Send the body in pieces with a pause between them, so that a client that stops
    # reading after the headers can be seen to have stopped.
    chunk: int = 0
    pause: float = 0.0
    # Repeat the body for ever, with no Content-Length, until the client hangs up.
    endless: bool = False
    # Send the headers, then nothing for this many seconds (a server that hangs).
    stall: float = 0.0

    def not_modified(self, if_none_match: str | None, if_modified_since: str | None) -> bool:
        """Whether a conditional request gets a 304 for this resource, as nginx decides:
        If-None-Match first, else If-Modified-Since equal to Last-Modified exactly."""
        if self.status != 200:
            return False
        if if_none_match is not None:
            return if_none_match == self.headers.get("ETag")
        return if_modified_since is not None and if_modified_since == self.headers.get(
            "Last-Modified"
        )


def html(text: str, status: int = 200, charset: str = "utf-8", **headers: str) -> Resource:
    ctype = f"text/html; charset={charset}" if charset else "text/html"
    return Resource(text.encode(charset or "utf-8"), status, {"Content-Type": ctype, **headers})


def redirect(location: str, status: int = 301) -> Resource:
    return Resource(b"", status, {"Location": location})


@dataclass
class Host:
    name: str
    ip_index: int  # hosts with the same index share an IP address
    resources: dict[str, Resource]
    tls: bool = False
    # Pages made up on request (endless traps): the request target in, a page or None out.
    dynamic: Callable[[str], Resource | None] | None = None


@dataclass
class Hit:
    time: float
    ip: str
    host: str
    method: str
    target: str
    status: int
    bytes_sent: int
    user_agent: str
    # The request's headers as sent (names as the client wrote them).
    headers: dict[str, str] = field(default_factory=dict)

    def header(self, name: str) -> str | None:
        wanted = name.lower()
        return next((v for k, v in self.headers.items() if k.lower() == wanted), None)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def __init__(self, addr: tuple[str, int], web: SimWeb) -> None:
        self.web = web
        super().__init__(addr, _Handler)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # As nginx and Apache do: headers and body go out in two writes, and with Nagle's
    # algorithm the body would wait for the client's delayed ACK (40 ms per response).
    disable_nagle_algorithm = True
    server: _Server

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_HEAD(self) -> None:
        self._serve(head=True)

    def do_GET(self) -> None:
        self._serve(head=False)

    def _serve(self, head: bool) -> None:
        web = self.server.web
        host = (self.headers.get("Host") or "").split(":")[0].lower()
        ip = self.server.server_address[0]
        res = web.lookup(host, self.path)
        if res.not_modified(
            self.headers.get("If-None-Match"), self.headers.get("If-Modified-Since")
        ):
            kept = {k: v for k, v in res.headers.items() if k in ("ETag", "Last-Modified")}
            res = Resource(b"", 304, kept)
        # Logged on arrival, so the log has request times (what politeness is about) and
        # a request whose response never ends is in it; bytes_sent grows as it is sent.
        hit = Hit(
            time.time(),
            ip,
            host,
            self.command,
            self.path,
            res.status,
            0,
            self.headers.get("User-Agent", ""),
            dict(self.headers.items()),
        )
        web.record(hit)
        sent = 0
        try:
            self.send_response(res.status)
            if res.endless:
                headers = {"Connection": "close", **res.headers}
            elif res.status == 304:
                headers = dict(res.headers)  # no body, so no length
            else:
                headers = {"Content-Length": str(len(res.body)), **res.headers}
            for k, v in headers.items():
                self.send_header(k, v)
            self.end_headers()
            if res.stall:
                self.wfile.flush()
                time.sleep(res.stall)
            if res.endless and not head:
                self.close_connection = True
                while True:
                    self.wfile.write(res.body)
                    sent += len(res.body)
            elif not head:
                step = res.chunk or len(res.body) or 1
                for i in range(0, len(res.body), step):
                    self.wfile.write(res.body[i : i + step])
                    self.wfile.flush()
                    sent += len(res.body[i : i + step])
                    hit.bytes_sent = sent
                    if res.pause:
                        time.sleep(res.pause)
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError, OSError):
            self.close_connection = True
        finally:
            hit.bytes_sent = sent


NOT_FOUND = Resource(
    b"<html><body>Not found</body></html>", 404, {"Content-Type": "text/html; charset=utf-8"}
)


class SimWeb:
    def __init__(self, hosts: list[Host], outside: list[str] = ()) -> None:  # type: ignore[assignment]
        self.hosts = {h.name: h for h in hosts}
        self.outside = list(outside)
        # More names and the addresses they resolve to (hosts the web does not serve).
        self.names: dict[str, str] = {}
        # A random 127.a.b.0/24 per instance keeps parallel test sessions apart.
        a, b = random.randint(1, 250), random.randint(1, 250)
        self.prefix = f"127.{a}.{b}."
        self.hits: list[Hit] = []
        self._lock = threading.Lock()
        self._servers: list[_Server] = []
        self._threads: list[threading.Thread] = []
        self._tmp = Path(tempfile.mkdtemp(prefix="govsi-simweb-"))

    # -- addresses ------------------------------------------------------------------------
    def ip_of(self, host: str) -> str:
        return f"{self.prefix}{self.hosts[host].ip_index + 1}"

    @property
    def network(self) -> str:
        """The web's own addresses, for ALLOWED_PRIVATE_NETWORKS: loopback like any
        other, refused by the crawler's address guard unless allowed."""
        return f"{self.prefix}0/24"

    @property
    def trap_ip(self) -> str:
        # Hosts outside .gov.si resolve here, so a request to one is recorded, not lost.
        return f"{self.prefix}250"

    def hosts_map(self) -> dict[str, str]:
        mapping = {name: self.ip_of(name) for name in self.hosts}
        mapping.update({name: self.trap_ip for name in self.outside})
        mapping.update(self.names)
        return mapping

    # -- serving --------------------------------------------------------------------------
    def lookup(self, host: str, target: str) -> Resource:
        h = self.hosts.get(host)
        if h is None:
            return NOT_FOUND
        res = h.resources.get(target)
        if res is None and "?" not in target:
            res = h.resources.get(target.split("#")[0])
        if res is None and h.dynamic is not None:
            res = h.dynamic(target)
        return res or NOT_FOUND

    def record(self, hit: Hit) -> None:
        with self._lock:
            self.hits.append(hit)

    def start(self) -> SimWeb:
        binds: set[tuple[str, int, bool]] = set()
        for h in self.hosts.values():
            binds.add((self.ip_of(h.name), 443 if h.tls else 80, h.tls))
        binds.add((self.trap_ip, 80, False))
        binds.add((self.trap_ip, 443, True))
        context = self._tls_context()
        for ip, port, tls in sorted(binds):
            self._serve(_Server((ip, port), self), context if tls else None)
        return self

    def _serve(self, server: _Server, context: ssl.SSLContext | None) -> None:
        """Serve ``server`` in a thread of its own, over TLS with ``context`` if given."""
        if context is not None:
            server.socket = context.wrap_socket(server.socket, server_side=True)
        t = threading.Thread(target=server.serve_forever, daemon=True)
        t.start()
        self._servers.append(server)
        self._threads.append(t)

    def stop(self) -> None:
        # Each shutdown waits for its server's next poll: all of them at once, not in turn.
        stopping = [threading.Thread(target=s.shutdown) for s in self._servers]
        for t in stopping:
            t.start()
        for t in stopping:
            t.join()
        for s in self._servers:
            s.server_close()

    def _tls_context(self) -> ssl.SSLContext:
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import NameOID

        key = ec.generate_private_key(ec.SECP256R1())
        names = [x509.DNSName(n) for n in self.hosts] + [x509.DNSName(n) for n in self.outside]
        subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "simweb.gov.si")])
        now = dt.datetime.now(dt.UTC)
        cert = (
            x509.CertificateBuilder()
            .subject_name(subject)
            .issuer_name(subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(days=1))
            .not_valid_after(now + dt.timedelta(days=30))
            .add_extension(x509.SubjectAlternativeName(names), critical=False)
            .sign(key, hashes.SHA256())
        )
        cert_path, key_path = self._tmp / "cert.pem", self._tmp / "key.pem"
        cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        key_path.write_bytes(
            key.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.TraditionalOpenSSL,
                serialization.NoEncryption(),
            )
        )
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(cert_path, key_path)
        return ctx

    # -- what tests ask ---------------------------------------------------------------------
    def requested(self, predicate: Callable[[Hit], bool] | None = None) -> list[Hit]:
        with self._lock:
            hits = list(self.hits)
        return [h for h in hits if predicate is None or predicate(h)]

    def urls_requested(self) -> list[str]:
        out = []
        for h in self.requested():
            scheme = "https" if h.host in self.hosts and self.hosts[h.host].tls else "http"
            out.append(f"{scheme}://{h.host}{h.target}")
        return out

    def reset_log(self) -> None:
        with self._lock:
            self.hits.clear()


def port_is_free(ip: str, port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind((ip, port))
        except OSError:
            return False
        return True
