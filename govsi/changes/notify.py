"""Scrapy extension ``ChangesNotify``: after a crawl, each saved filter's new changes sent
where the user asks (CHANGES_NOTIFY; off when it is empty).

A saved filter is a name and ``ChangeFilter.from_params``'s parameters (``q=uredba&type=pdf``).
When the crawl's engine has stopped (crawldb's last write done), each filter's changes
since its high-water mark (``marks``: the last change sent, kept in crawldb, claimed by one
worker at a time) become one message (``message``: a title with the count, the newest
CHANGES_NOTIFY_MAX entries, links to scrapy serve's Changes page and Atom feed when
CHANGES_NOTIFY_LINK_BASE is set), sent through Apprise (``sending``) to the URLs in the
environment variable CHANGES_NOTIFY_URLS_ENV names, in a thread, within
CHANGES_NOTIFY_TIMEOUT. The mark moves only after every service took the message; a
failure is logged (never a URL) and counted (``govsi/notify/...``), and its changes are
sent again after the next crawl. Nothing here can fail the crawl's close.

Changes are looked for from the start of the last run that sent (or from this run's,
whichever is earlier), at most CHANGES_SCAN_MAX rows a filter (then the count says "+").
"""

from __future__ import annotations

import contextlib
import logging
import os
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Final
from urllib.parse import parse_qsl

from scrapy import signals
from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured
from scrapy.settings import BaseSettings
from scrapy.statscollectors import StatsCollector
from sqlalchemy import Engine
from twisted.internet.defer import Deferred
from twisted.internet.threads import deferToThread

from govsi.changes import marks
from govsi.changes.config import ChangesConfig
from govsi.changes.filters import ChangeFilter
from govsi.changes.message import build_message, changes_links
from govsi.changes.query import ChangeEntry, find_changes
from govsi.store import database

if TYPE_CHECKING:
    from govsi.changes.sending import Targets

__all__ = ["ChangesNotify", "NotifyConfig", "Outcome", "SavedFilter", "saved_filters"]

logger = logging.getLogger(__name__)

# Changes read per statement while a filter's new ones are counted.
PAGE: Final = 200
# How long a claim on a filter's mark lasts: past the slowest listing and send, so that
# another worker takes a mark over only from a worker that died holding it.
CLAIM: Final = timedelta(hours=1)
STAT: Final = "govsi/notify/"


def _now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


@dataclass(frozen=True, slots=True)
class SavedFilter:
    name: str
    params: tuple[tuple[str, str], ...]  # ChangeFilter.from_params's, as given

    def mapping(self) -> dict[str, str]:
        return dict(self.params)


def _params(value: object) -> dict[str, str]:
    """A filter's parameters: a query string (a key given twice: its values joined with
    commas) or a mapping of strings."""
    if isinstance(value, str):
        params: dict[str, str] = {}
        for key, item in parse_qsl(value.lstrip("?"), strict_parsing=False):
            params[key] = f"{params[key]},{item}" if key in params else item
        return params
    if isinstance(value, Mapping) and all(isinstance(v, str) for v in value.values()):
        return {str(k): v for k, v in value.items()}
    raise ValueError("say its filter as a query string (q=uredba&type=pdf) or a JSON object")


def saved_filters(
    value: Mapping[str, object], now: datetime
) -> tuple[list[SavedFilter], list[str]]:
    """CHANGES_NOTIFY's filters that ``ChangeFilter.from_params`` reads, and a message for
    each of the others (pure)."""
    found, errors = [], []
    for name, spec in value.items():
        label = " ".join(str(name).split())
        try:
            if not label:
                raise ValueError("a saved filter needs a name")
            params = _params(spec)
            ChangeFilter.from_params(params, now)
        except ValueError as e:
            errors.append(f"CHANGES_NOTIFY filter {label[:100]!r} left out: {e}")
            continue
        found.append(SavedFilter(label, tuple(sorted(params.items()))))
    return found, errors


@dataclass(frozen=True, slots=True)
class NotifyConfig:
    filters: tuple[SavedFilter, ...] = ()  # CHANGES_NOTIFY
    urls_env: str = "GOVSI_NOTIFY_URLS"  # CHANGES_NOTIFY_URLS_ENV: the variable's name
    max_entries: int = 10  # CHANGES_NOTIFY_MAX
    timeout: float = 60.0  # CHANGES_NOTIFY_TIMEOUT
    link_base: str = ""  # CHANGES_NOTIFY_LINK_BASE

    @classmethod
    def from_settings(cls, s: BaseSettings, now: datetime) -> NotifyConfig:
        """The settings read once; filters that cannot be read are logged and left out."""
        try:
            value = s.getdict("CHANGES_NOTIFY")
        except ValueError as e:
            logger.error("CHANGES_NOTIFY is not a JSON object of saved filters (%s): "
                         "changes notifications are off", e)  # fmt: skip
            value = {}
        filters, errors = saved_filters(value, now)
        for error in errors:
            logger.error("%s", error)
        return cls(
            tuple(filters),
            s.get("CHANGES_NOTIFY_URLS_ENV") or "",
            max(1, s.getint("CHANGES_NOTIFY_MAX")),
            max(0.0, s.getfloat("CHANGES_NOTIFY_TIMEOUT")),
            (s.get("CHANGES_NOTIFY_LINK_BASE") or "").strip(),
        )


@dataclass(frozen=True, slots=True)
class Outcome:
    """What became of one filter: ``found`` new changes (``complete`` False: at least),
    ``sent`` or not (``failed``: the services that did not take it); ``held``: another
    worker was sending it, nothing looked at."""

    name: str
    found: int = 0
    complete: bool = True
    sent: bool = False
    held: bool = False
    failed: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class _Unsent:
    newest: list[ChangeEntry]
    total: int
    top: int  # the highest id among them
    complete: bool


def _unsent(
    engine: Engine, flt: ChangeFilter, after: int, keep: int, config: ChangesConfig
) -> _Unsent:
    """The changes under ``flt`` with an id above ``after``: the newest ``keep`` with
    their excerpts, how many, the highest id; reading at most CHANGES_SCAN_MAX."""
    # Counted without excerpts (a diff each: most of a list's cost), then the newest
    # ``keep`` listed again with theirs.
    counting = replace(config, excerpt_max_chars=1, excerpt_timeout=0.0)
    wanted: set[int] = set()
    total, top, scanned, before = 0, after, 0, None
    complete = False
    while True:
        page = find_changes(engine, flt, limit=PAGE, before=before, config=counting)
        for entry in page.entries:
            if entry.id > after:
                total += 1
                top = max(top, entry.id)
                if len(wanted) < keep:
                    wanted.add(entry.id)
        scanned += page.scanned
        if page.next_before is None:
            complete = True
            break
        if scanned >= config.scan_max:
            break
        before = page.next_before
    return _Unsent(_listed(engine, flt, wanted, config), total, top, complete)


def _listed(
    engine: Engine, flt: ChangeFilter, ids: set[int], config: ChangesConfig
) -> list[ChangeEntry]:
    """The changes ``ids`` under ``flt`` with their excerpts, newest first (the newest of
    the filter's changes: read from the top, ``len(ids)`` at a time, until all are found)."""
    found: list[ChangeEntry] = []
    before = None
    while len(found) < len(ids):
        page = find_changes(engine, flt, limit=max(len(ids), 10), before=before, config=config)
        found += [e for e in page.entries if e.id in ids]
        if page.next_before is None:
            break
        before = page.next_before
    return found


class ChangesNotify:
    def __init__(
        self,
        config: NotifyConfig,
        crawldb_url: str,
        targets: Targets,
        stats: StatsCollector,
        changes: ChangesConfig,
    ) -> None:
        self.config = config
        self.crawldb_url = crawldb_url
        self.targets = targets
        self.stats = stats
        self.changes = changes
        self.holder = uuid.uuid4().hex
        self.started = _now()

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> ChangesNotify:
        s = crawler.settings
        config = NotifyConfig.from_settings(s, _now())
        if not config.filters:
            raise NotConfigured("CHANGES_NOTIFY names no saved filter")
        url = database.crawldb_url_of(s)
        if database.in_memory(url):
            logger.error("changes notifications are off: crawldb is in memory, so no "
                         "notification could remember what it sent")  # fmt: skip
            raise NotConfigured("crawldb in memory")
        # Imported here: a crawl that sends nothing never loads Apprise and its modules.
        from govsi.changes.sending import Targets

        targets = Targets.from_environment(config.urls_env, os.environ)
        if targets is None:
            raise NotConfigured("no Apprise URL in the environment")
        assert crawler.stats is not None
        ext = cls(config, url, targets, crawler.stats, ChangesConfig.from_settings(s))
        crawler.signals.connect(ext.spider_opened, signal=signals.spider_opened)
        # engine_stopped: after every spider_closed handler, crawldb's last flush included.
        crawler.signals.connect(ext.engine_stopped, signal=signals.engine_stopped)
        return ext

    def spider_opened(self) -> Deferred[None]:
        self.started = _now()
        d: Deferred[None] = deferToThread(self._open_marks)
        return d.addErrback(self._open_failed)

    def _open_marks(self) -> None:
        engine = database.make_engine(self.crawldb_url)
        try:
            marks.open_marks(engine, (f.name for f in self.config.filters), self.started)
        finally:
            engine.dispose()

    def _open_failed(self, failure: object) -> None:
        # Each filter's mark is made at its first notification then, from this run's start.
        error = type(getattr(failure, "value", failure)).__name__
        logger.warning("changes notifications: the saved filters' marks were not made as the "
                       "crawl started (%s)", error)  # fmt: skip

    def engine_stopped(self) -> Deferred[None]:
        d: Deferred[list[Outcome]] = deferToThread(self.notify_all, _now())
        return d.addCallbacks(self._record, self._failed)

    def notify_all(self, now: datetime) -> list[Outcome]:
        """Each saved filter's new changes sent (blocking: a thread's work)."""
        engine = database.make_engine(self.crawldb_url)
        try:
            return [self._notify_safely(engine, f, now) for f in self.config.filters]
        finally:
            engine.dispose()

    def _notify_safely(self, engine: Engine, saved: SavedFilter, now: datetime) -> Outcome:
        try:
            return self.notify(engine, saved, now)
        except Exception as e:  # one filter's failure leaves the others
            logger.error("changes notification %r not sent (%s while its changes were "
                         "listed); they wait for the next crawl", saved.name,
                         type(e).__name__)  # fmt: skip
            with contextlib.suppress(Exception):  # else the claim expires (CLAIM)
                marks.settle(engine, saved.name, self.holder, None)
            return Outcome(saved.name, failed=(f"crawldb: {type(e).__name__}",))

    def notify(self, engine: Engine, saved: SavedFilter, now: datetime) -> Outcome:
        """One filter: claim its mark, list its new changes, send them, settle the mark."""
        c = self.config
        mark = marks.claim(engine, saved.name, self.holder, now, now + CLAIM, self.started)
        if mark is None:
            return Outcome(saved.name, held=True)
        flt = ChangeFilter.from_params(saved.mapping(), now)
        since = min(mark.floor, self.started)
        flt = replace(flt, since=max(flt.since, since) if flt.since else since)
        found = _unsent(engine, flt, mark.last_id, c.max_entries, self.changes)
        if not found.total:
            marks.settle(engine, saved.name, self.holder, marks.Mark(mark.last_id, self.started))
            return Outcome(saved.name)
        page, feed = changes_links(c.link_base, flt.to_params(), saved.mapping())
        message = build_message(saved.name, found.newest, found.total, complete=found.complete,
                                page_link=page, feed_link=feed)  # fmt: skip
        sent = self.targets.send(message, c.timeout)
        marks.settle(engine, saved.name, self.holder,
                     marks.Mark(found.top, self.started) if sent.ok else None)  # fmt: skip
        return Outcome(saved.name, found.total, found.complete, sent.ok, failed=sent.failed)

    def _record(self, outcomes: list[Outcome]) -> None:
        for o in outcomes:
            count = f"{o.found}{'' if o.complete else '+'}"
            if o.held:
                self.stats.inc_value(STAT + "held")
                logger.info("changes notification %r: its mark is held by another worker "
                            "sending it (or was unreadable); this crawl's changes go with the "
                            "next notification", o.name)  # fmt: skip
            elif o.sent:
                self.stats.inc_value(STAT + "sent")
                self.stats.inc_value(STAT + "changes_sent", o.found)
                logger.info("changes notification %r: %s changes sent", o.name, count)
            elif o.failed:
                self.stats.inc_value(STAT + "failed")
                if o.found:
                    logger.error("changes notification %r: %s changes not sent (%s); they are "
                                 "sent again after the next crawl", o.name, count,
                                 "; ".join(o.failed))  # fmt: skip
            else:
                logger.info("changes notification %r: no new changes", o.name)

    def _failed(self, failure: object) -> None:
        self.stats.inc_value(STAT + "failed")
        logger.error("changes notifications not sent: %s; the changes are sent after the "
                     "next crawl", type(getattr(failure, "value", failure)).__name__)  # fmt: skip
