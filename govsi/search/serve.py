"""``scrapy serve``'s search page: a query box, ranked results with marked snippets, facets
by type and host, paging, and each result's stored copy as crawled. A read-only local web
server (GET and HEAD only); everything a page shows is escaped, and the stored copies are
served sandboxed (``Content-Security-Policy: sandbox``: no script, an origin of their own),
since titles, texts and pages are hostile input."""

from __future__ import annotations

import logging
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup, escape
from sqlalchemy import Engine, bindparam, text

from govsi.search.config import SearchConfig
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


def _environment() -> Environment:
    return Environment(
        loader=PackageLoader("govsi.search", "templates"),
        autoescape=select_autoescape(["html", "j2"]),
    )


class SearchSite:
    """The pages of the search site, as functions of the request (testable without a
    server): ``page(query_string)`` and ``copy(page_id)``."""

    def __init__(self, engine: Engine, config: SearchConfig) -> None:
        self.engine = engine
        self.config = config
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
        context: dict[str, Any] = {"query": query, "page": page, "results": None}
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


class _Handler(BaseHTTPRequestHandler):
    site: SearchSite
    server_version = "govsi-search"

    def do_GET(self) -> None:
        self._answer(body=True)

    def do_HEAD(self) -> None:
        self._answer(body=False)

    def _answer(self, body: bool) -> None:
        url = urlsplit(self.path)
        try:
            if url.path == "/":
                self._send(HTTPStatus.OK, "text/html; charset=utf-8",
                           self.site.page(url.query), PAGE_POLICY, body)  # fmt: skip
                return
            if url.path.startswith("/copy/") and url.path[6:].isdigit():
                found = self.site.copy(int(url.path[6:]))
                if found is not None:
                    self._send(HTTPStatus.OK, found[0], found[1], COPY_POLICY, body)
                    return
            self._send(HTTPStatus.NOT_FOUND, "text/plain; charset=utf-8", "not found",
                       PAGE_POLICY, body)  # fmt: skip
        except Exception:
            logger.exception("search page %s failed", self.path[:200])
            self._send(HTTPStatus.INTERNAL_SERVER_ERROR, "text/plain; charset=utf-8",
                       "the search failed; see the log", PAGE_POLICY, body)  # fmt: skip

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


def make_server(site: SearchSite, host: str, port: int) -> ThreadingHTTPServer:
    """A server of ``site`` on ``host:port`` (``serve_forever`` runs it)."""
    handler = type("Handler", (_Handler,), {"site": site})
    return ThreadingHTTPServer((host, port), handler)
