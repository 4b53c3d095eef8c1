"""``scrapy serve``'s Changes pages: ``/changes`` (a filter form; the filter's changes,
newest first, each with its time, kind, URL, title and the words added and removed;
paging by an id cursor, ``before``), ``/changes/<id>`` (one change's diff of the main
text, inline or side by side with ``view=side``; a side no longer kept, or cut to its
bound, said plainly) and ``/changes.atom`` (the filter's Atom feed, ``atom``).

``ChangesSite.route`` is an extra route of the search page's server
(``search.serve.make_server``'s ``routes``), which checks the ``Host``, reads requests
within a time, bounds connections and sends the page policy (no script); the pages escape
everything (Jinja2 autoescape, control characters made visible by ``showing.shown``).
Read-only: the feed's ids need the crawl id a crawl wrote (``crawl_meta``); without one
the feed is a 503 that says so, never ids that would change.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, Final
from urllib.parse import parse_qsl, quote, urlencode

from jinja2 import Environment, PackageLoader, select_autoescape
from sqlalchemy import Engine, select

from govsi.changes import atom
from govsi.changes.config import DEFAULT_CONFIG, ChangesConfig
from govsi.changes.diffview import inline, side_by_side
from govsi.changes.filters import DOC_TYPES
from govsi.changes.query import ChangeFilter, change_detail, find_changes
from govsi.changes.showing import KIND_LABELS, kind_label, link_target, shown
from govsi.store import schema

__all__ = ["PER_PAGE", "ChangesSite"]

logger = logging.getLogger(__name__)

PER_PAGE: Final = 50  # changes on a page, and entries in a feed
_DETAIL = re.compile(r"/changes/([0-9]{1,18})")
# A crawl id as crawldb's first run makes it (a UUID); anything else is not trusted.
_CRAWL_ID = re.compile(r"[0-9A-Za-z-]{1,64}")
_MAX_FIELDS = 30
_HTML: Final = "text/html; charset=utf-8"
_TEXT: Final = "text/plain; charset=utf-8"
_TITLE_CHARS = 300
_URL_CHARS = 500

Answer = tuple[int, str, str]  # status, content type, body


def _utcnow() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


def _params(query_string: str) -> dict[str, str]:
    """A query string's parameters, the first value of each; more than ``_MAX_FIELDS``:
    none (a bad request is shown the empty filter, never an error)."""
    try:
        pairs = parse_qsl(query_string, max_num_fields=_MAX_FIELDS)
    except ValueError:
        return {}
    params: dict[str, str] = {}
    for key, value in pairs:
        params.setdefault(key, value)
    return params


def _cursor(value: str | None) -> int | None:
    return (
        int(value) if value and value.isascii() and value.isdigit() and len(value) <= 18 else None
    )


def _query(params: dict[str, str], **extra: str) -> str:
    return urlencode({**params, **extra}, quote_via=quote, safe=",")


class ChangesSite:
    """The changes pages as functions of the request (testable without a server)."""

    def __init__(
        self,
        engine: Engine,
        config: ChangesConfig = DEFAULT_CONFIG,
        now: Callable[[], datetime] = _utcnow,
    ) -> None:
        self.engine = engine
        self.config = config
        self.now = now
        env = Environment(
            loader=PackageLoader("govsi.changes", "templates"),
            autoescape=select_autoescape(["html", "j2"]),
        )
        self.list_template = env.get_template("changes.html.j2")
        self.diff_template = env.get_template("change.html.j2")

    def route(self, path: str, query_string: str, host: str) -> Answer | None:
        """The answer to a GET of ``path`` from a client that named this server ``host``;
        None when the path is none of these pages'."""
        if path == "/changes":
            return self.listing(query_string)
        if path == "/changes.atom":
            return self.feed(query_string, host)
        detail = _DETAIL.fullmatch(path)
        if detail is not None:
            return self.detail(int(detail.group(1)), query_string)
        return None

    def _filter(self, params: dict[str, str]) -> tuple[ChangeFilter | None, str]:
        try:
            return ChangeFilter.from_params(params, self.now()), ""
        except ValueError as e:
            return None, str(e)

    def listing(self, query_string: str) -> Answer:
        """The Changes page: the form, then the filter's changes or what is wrong with it."""
        raw = _params(query_string)
        params = atom.canonical_params(raw)
        flt, error = self._filter(params)
        context: dict[str, Any] = {
            "params": params, "error": error, "kinds": KIND_LABELS, "types": DOC_TYPES,
            "feed": "/changes.atom" + (f"?{_query(params)}" if params else ""),
            "entries": [], "next": None, "first": None, "stopped": False, "scanned": 0,
        }  # fmt: skip
        if flt is None:
            return 400, _HTML, self.list_template.render(**context)
        before = _cursor(raw.get("before"))
        found = find_changes(self.engine, flt, limit=PER_PAGE, before=before, config=self.config)
        context.update(
            entries=[self._shown(e) for e in found.entries],
            next=f"/changes?{_query(params, before=str(found.next_before))}"
            if found.next_before is not None else None,
            first="/changes" + (f"?{_query(params)}" if params else "")
            if before is not None else None,
            stopped=found.stopped, scanned=found.scanned,
        )  # fmt: skip
        return 200, _HTML, self.list_template.render(**context)

    @staticmethod
    def _shown(entry: Any) -> dict[str, Any]:
        """A change as the pages show it: every crawled string made safe and bounded."""
        return {
            "id": entry.id,
            "kind": entry.kind,
            "label": kind_label(entry.kind),
            "time": entry.time.strftime("%Y-%m-%d %H:%M"),
            "iso": entry.time.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "url": shown(entry.url, _URL_CHARS),
            "href": link_target(entry.url),
            "title": shown(entry.title, _TITLE_CHARS),
            "host": shown(entry.host, 200),
            "type": shown(entry.doc_type, 20),
            "added": shown(entry.added, 1000),
            "removed": shown(entry.removed, 1000),
        }

    def detail(self, change_id: int, query_string: str) -> Answer:
        """A change's diff page; 404 when crawldb holds no such change."""
        found = change_detail(self.engine, change_id, self.config)
        if found is None:
            return 404, _TEXT, "no such change"
        side = _params(query_string).get("view") == "side"
        diff = found.diff
        context: dict[str, Any] = {
            "params": {},
            "kinds": KIND_LABELS,
            "types": DOC_TYPES,
            "entry": self._shown(found.entry),
            "before_known": found.before_known,
            "after_known": found.after_known,
            "diff": diff,
            "side": side,
            "max_chars": f"{self.config.diff_max_chars:,}".replace(",", " "),
        }
        if diff is not None:
            if side:
                context["before"], context["after"] = side_by_side(diff)
            else:
                context["inline"] = inline(diff)
            context["changed"] = any(op != "equal" for op, _ in diff.ops)
        return 200, _HTML, self.diff_template.render(**context)

    def crawl_id(self) -> str | None:
        """crawldb's crawl id, as its first run wrote it; None when there is none (or
        it is not one)."""
        meta = schema.CRAWL_META
        with self.engine.connect() as conn:
            value = conn.execute(select(meta.c.value).where(meta.c.key == "crawl_id")).scalar()
        return value if isinstance(value, str) and _CRAWL_ID.fullmatch(value) else None

    def feed(self, query_string: str, host: str) -> Answer:
        """The filter's Atom feed, its links under ``http://host``; 400 for a bad filter,
        503 without a crawl id."""
        params = atom.canonical_params(_params(query_string))
        flt, error = self._filter(params)
        if flt is None:
            return 400, _TEXT, error
        crawl_id = self.crawl_id()
        if crawl_id is None:
            logger.error("changes feed: crawldb has no crawl id (crawl_meta); run a crawl first")
            return 503, _TEXT, "crawldb has no crawl id yet (run a crawl first): no stable feed ids"
        found = find_changes(self.engine, flt, limit=PER_PAGE, config=self.config)
        document = atom.feed_document(
            found.entries, crawl_id=crawl_id, params=params, base=f"http://{host}", now=self.now()
        )
        return 200, atom.ATOM_TYPE, document.decode("utf-8")
