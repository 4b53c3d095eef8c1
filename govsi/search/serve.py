"""``scrapy serve``'s search page: a query box, ranked results with marked snippets, facets
by type and host, paging, and each result's stored copy as crawled. A read-only local web
server (GET and HEAD only); everything a page shows is escaped, and the stored copies are
served sandboxed (``Content-Security-Policy: sandbox``: no script, an origin of their own),
since titles, texts and pages are hostile input.

The server answers only requests for itself (``hostnames.host_verdict``: 400 without a
``Host``, 421 for another name, so DNS rebinding finds nothing), reads each request whole
within ``timeout`` seconds or closes the connection, serves at most ``connections`` at once
(one more is closed at once), listens on IPv4 or IPv6, and answers 404 to any path but its
own or an extra route's (``make_server``'s ``routes``: other pages served the same way,
such as the Changes page, without this module knowing them). It never writes the index
(``SearchIndex.open`` reads it; an index deleted or of another version under it is a 503
that says so). A client that goes away is a line in the debug log, never a traceback.
"""

from __future__ import annotations

import contextlib
import io
import logging
import re
import socket
import sys
import threading
import time
from collections.abc import Callable, Sequence
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup, escape
from sqlalchemy import Engine, bindparam, text

from govsi.search.config import SearchConfig
from govsi.search.hostnames import host_verdict
from govsi.search.index import SearchIndexError
from govsi.search.results import search_page
from govsi.search.snippets import Pieces

logger = logging.getLogger(__name__)

PER_PAGE = 10
MAX_QUERY = 500
# The search page needs no script at all; styles are inline in its one template.
PAGE_POLICY = (
    "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; "
    "base-uri 'none'; frame-ancestors 'none'"
)
# A stored copy: shown as it was crawled, never run.
COPY_POLICY = "sandbox; default-src 'none'; style-src 'unsafe-inline'; img-src data:"
# A stored copy's path: a page id crawldb can hold (a 64-bit integer), else not found.
_COPY_PATH = re.compile(r"/copy/([0-9]{1,18})")
# An extra route: (path, query string, the Host the client named, already checked) to
# (status, content type, body) with the page policy, or None when the path is not its.
Route = Callable[[str, str, str], "tuple[int, str, str] | None"]
# What a client that went away, or never finished its request, raises.
_GONE = (ConnectionError, TimeoutError)


def _environment() -> Environment:
    return Environment(
        loader=PackageLoader("govsi.search", "templates"),
        autoescape=select_autoescape(["html", "j2"]),
    )


class SearchSite:
    """The pages of the search site, as functions of the request (testable without a
    server): ``page(query_string)`` and ``copy(page_id)``. ``links``: (label, path) pairs
    the page's header links to, such as an extra route's page."""

    def __init__(
        self, engine: Engine, config: SearchConfig, links: Sequence[tuple[str, str]] = ()
    ) -> None:
        self.engine = engine
        self.config = config
        self.links = tuple(links)
        self.template = _environment().get_template("search.html.j2")
        # Tantivy's reader and the state file are opened per search; one at a time keeps
        # the SQLite state connection to one thread.
        self._lock = threading.Lock()

    def page(self, query_string: str) -> str:
        args = parse_qs(query_string)
        query = (args.get("q") or [""])[0][:MAX_QUERY].strip()
        try:
            page = max(1, min(1000, int((args.get("page") or ["1"])[0])))
        except ValueError:
            page = 1
        context: dict[str, Any] = {
            "query": query, "page": page, "results": None, "links": self.links
        }  # fmt: skip
        if query:
            with self._lock:
                found = search_page(self.engine, self.config, query, page, PER_PAGE)
            results = found.results
            context.update(
                results=results,
                snippets={pid: _marked(p) for pid, p in found.snippets.items()},
                titles={pid: _marked(p) for pid, p in found.titles.items()},
                facet_links={
                    name: {v: _link(f"{query} {_filter(name, v)}") for v, _ in values}
                    for name, values in results.facets.items()
                },
                previous=_link(query, page - 1) if page > 1 else None,
                next=_link(query, page + 1) if page * PER_PAGE < results.total else None,
            )  # fmt: skip
        return self.template.render(**context)

    def copy(self, page_id: int) -> tuple[str, str] | None:
        """The stored copy of page ``page_id``: (content type, body), HTML as crawled or
        a document's text; None when crawldb has neither."""
        sql = text(
            "SELECT p.html_content, t.text FROM page p LEFT JOIN page_text t "
            "ON t.page_id = p.id WHERE p.id = :id"
        ).bindparams(bindparam("id"))
        with self.engine.connect() as conn:
            row = conn.execute(sql, {"id": page_id}).first()
        if row is None:
            return None
        html, body = row
        if html:
            return "text/html; charset=utf-8", html
        if body:
            return "text/plain; charset=utf-8", body
        return None


def _marked(pieces: Pieces) -> Markup:
    """A snippet as HTML: every piece escaped, the matched ones in ``<mark>``."""
    return Markup("").join(
        Markup("<mark>{}</mark>").format(t) if marked else escape(t) for t, marked in pieces
    )


def _filter(name: str, value: str) -> str:
    return f"type:{value.lower()}" if name == "kind" else f"host:{value}"


def _link(query: str, page: int = 1) -> str:
    params = {"q": query, **({"page": str(page)} if page > 1 else {})}
    return "/?" + urlencode(params)


class _RequestReader(io.RawIOBase):
    """A connection's reads, each waiting at most ``timeout`` seconds and all of them done
    by ``deadline`` (``time.monotonic``): a request sent a byte at a time is cut off too."""

    def __init__(self, connection: socket.socket, timeout: float) -> None:
        self.connection = connection
        self.timeout = timeout
        self.deadline = time.monotonic() + timeout

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("the request was not read in time")
        self.connection.settimeout(min(left, self.timeout))
        return self.connection.recv_into(buffer)


class _Handler(BaseHTTPRequestHandler):
    site: SearchSite
    routes: tuple[Route, ...]
    bind_host: str
    timeout = 10.0  # make_server's
    server_version = "govsi-search"

    def setup(self) -> None:
        super().setup()
        timeout = self.timeout if self.timeout is not None else _Handler.timeout
        self.rfile = io.BufferedReader(_RequestReader(self.connection, timeout))

    def do_GET(self) -> None:
        self._answer(body=True)

    def do_HEAD(self) -> None:
        self._answer(body=False)

    def _answer(self, body: bool) -> None:
        self.connection.settimeout(self.timeout)  # the answer's writes: each as long
        verdict = host_verdict(self._host(), self.bind_host)
        try:
            if verdict == "bad":
                self._send(HTTPStatus.BAD_REQUEST, "text/plain; charset=utf-8",
                           "one Host header, please", PAGE_POLICY, body)  # fmt: skip
                return
            if verdict == "other":
                self._send(HTTPStatus.MISDIRECTED_REQUEST, "text/plain; charset=utf-8",
                           "not this server's name", PAGE_POLICY, body)  # fmt: skip
                return
            self._found(urlsplit(self.path), self._host() or "", body)
        except _GONE as e:
            logger.debug("search page %s: the client went away (%s)", self.path[:200], e)
        except SearchIndexError as e:
            # The index gone or replaced under a running server: said, never made again.
            logger.error("search page: %s", e)
            with contextlib.suppress(*_GONE):
                self._send(HTTPStatus.SERVICE_UNAVAILABLE, "text/plain; charset=utf-8",
                           str(e), PAGE_POLICY, body)  # fmt: skip
        except Exception:
            logger.exception("search page %s failed", self.path[:200])
            with contextlib.suppress(*_GONE):
                self._send(HTTPStatus.INTERNAL_SERVER_ERROR, "text/plain; charset=utf-8",
                           "the page failed; see the log", PAGE_POLICY, body)  # fmt: skip

    def _host(self) -> str | None:
        hosts = self.headers.get_all("Host") or []
        return hosts[0] if len(hosts) == 1 else None  # none, or two: not a request

    def _found(self, url: Any, host: str, body: bool) -> None:
        if url.path == "/":
            self._send(HTTPStatus.OK, "text/html; charset=utf-8",
                       self.site.page(url.query), PAGE_POLICY, body)  # fmt: skip
            return
        for route in self.routes:
            if (routed := route(url.path, url.query, host)) is not None:
                status, ctype, content = routed
                self._send(HTTPStatus(status), ctype, content, PAGE_POLICY, body)
                return
        copy = _COPY_PATH.fullmatch(url.path)
        found = self.site.copy(int(copy.group(1))) if copy else None
        if found is not None:
            self._send(HTTPStatus.OK, found[0], found[1], COPY_POLICY, body)
            return
        self._send(HTTPStatus.NOT_FOUND, "text/plain; charset=utf-8", "not found",
                   PAGE_POLICY, body)  # fmt: skip

    def _send(self, status: HTTPStatus, ctype: str, content: str, policy: str, body: bool) -> None:
        data = content.encode("utf-8", "replace")
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Content-Security-Policy", policy)
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")
        self.end_headers()
        if body:
            self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        logger.info("%s %s", self.address_string(), format % args)


class _Server(ThreadingHTTPServer):
    """Python's threading server with a bound on the connections served at once, and one
    log line for a connection that failed."""

    slots: threading.BoundedSemaphore
    connections: int

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self.slots.acquire(blocking=False):
            logger.info("%d connections open: one more from %s closed",
                        self.connections, client_address[0])  # fmt: skip
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self.slots.release()  # its thread never started
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.slots.release()

    def handle_error(self, request: Any, client_address: Any) -> None:
        error = sys.exc_info()[1]
        if isinstance(error, _GONE):
            logger.debug("connection from %s: %s", client_address[0], error)
        else:
            logger.error("connection from %s failed", client_address[0], exc_info=True)


def make_server(
    site: SearchSite,
    host: str,
    port: int,
    timeout: float = 10.0,
    connections: int = 16,
    routes: Sequence[Route] = (),
) -> ThreadingHTTPServer:
    """A server of ``site`` on ``host:port`` (an IPv4 or IPv6 address, or a name; port 0:
    any free one), ``serve_forever`` runs it: each request read within ``timeout`` seconds,
    at most ``connections`` at once. ``routes``: asked in order for a path that is not the
    search page's, under the same checks. OSError when it cannot listen there."""
    family = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM,
                                flags=socket.AI_PASSIVE)[0][0]  # fmt: skip
    handler = type("Handler", (_Handler,), {
        "site": site, "routes": tuple(routes), "bind_host": host, "timeout": timeout
    })  # fmt: skip

    class Server(_Server):
        address_family = family

    Server.connections = max(1, connections)
    Server.slots = threading.BoundedSemaphore(Server.connections)
    return Server((host, port), handler)


def server_url(server: ThreadingHTTPServer) -> str:
    """The address ``server`` listens on, as a URL (an IPv6 address in brackets)."""
    host, port = server.server_address[:2]
    host = host.decode() if isinstance(host, bytes) else host
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/"
