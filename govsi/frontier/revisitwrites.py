"""What the scheduler's revisits write to crawldb, in batches off the reactor: revisits
robots.txt now forbids (the page keeps its copy and gets the reason), claims let go (a
budget, a host given up on, a picture robots.txt forbids), and sitemap lastmods that make
stored pages due. A host with lastmods not written yet waits (``waits``): they may make more
of its pages due in this run, which must not end before (``pending``).

It calls nobody back: ``flush`` returns the write under way, and its caller (the
scheduler's ``Revisits``) chains what follows onto it.
"""

from __future__ import annotations

import logging
from datetime import datetime

from scrapy.statscollectors import StatsCollector
from twisted.internet.defer import Deferred
from twisted.internet.threads import deferToThread
from twisted.python.failure import Failure

from govsi.store.revisits import RevisitRows

__all__ = ["WRITE_BATCH", "RevisitWrites"]

logger = logging.getLogger(__name__)

# Refusals and lastmods are written in batches of this many (or at the next tick).
WRITE_BATCH = 200
_Writes = tuple[dict[str, list[str]], list[str], list[tuple[str, datetime]]]


class RevisitWrites:
    """The writes buffered; ``full`` says a batch is ready, ``flush`` writes it."""

    def __init__(self, rows: RevisitRows, stats: StatsCollector) -> None:
        self.rows = rows
        self.stats = stats
        self._refused: dict[str, list[str]] = {}
        self._let_go: list[str] = []
        self._lastmods: list[tuple[str, datetime]] = []
        # Hosts whose lastmods are not written yet, each with a URL of it.
        self._lastmod_hosts: dict[str, str] = {}
        # Hosts with a lastmod buffered since the last take: a write under way does not
        # settle them.
        self._buffered_hosts: set[str] = set()
        self._writing = False

    def refused(self, url: str, reason: str) -> None:
        """A page robots.txt now forbids."""
        self._refused.setdefault(reason, []).append(url)

    def let_go(self, url: str) -> None:
        self._let_go.append(url)

    def lastmod(self, url: str, host: str, when: datetime) -> None:
        self._lastmods.append((url, when))
        self._lastmod_hosts.setdefault(host, url)
        self._buffered_hosts.add(host)

    def full(self) -> bool:
        """A batch's worth is buffered (lastmods, or refusals and claims let go)."""
        unsent = len(self._let_go) + sum(map(len, self._refused.values()))
        return len(self._lastmods) >= WRITE_BATCH or unsent >= WRITE_BATCH

    def waits(self, host: str) -> bool:
        return host in self._lastmod_hosts

    def pending(self) -> bool:
        return bool(self._lastmod_hosts)

    def write_now(self) -> None:
        """What is buffered, written now (blocking: the crawl is over)."""
        self._write(*self._take())

    def flush(self) -> Deferred[dict[str, str] | None] | None:
        """What is buffered, written in a thread; None when nothing is, or a write is under
        way. The write fires with the hosts whose lastmods made pages due now (each with a
        URL of it; none: ``{}``), or None when it failed (logged, counted)."""
        if self._writing or not (self._refused or self._let_go or self._lastmods):
            return None
        self._writing = True
        writes = self._take()
        # Until written, these hosts' revisits wait (a lastmod may make more of them due).
        hosts = dict(self._lastmod_hosts)
        d = deferToThread(self._write, *writes)
        written: Deferred[dict[str, str] | None] = d.addCallbacks(
            self._written, self._write_failed, (hosts,), {}, (hosts,)
        )
        return written

    def _take(self) -> _Writes:
        taken = (self._refused, self._let_go, self._lastmods)
        self._refused, self._let_go, self._lastmods = {}, [], []
        self._buffered_hosts = set()
        return taken

    def _write(
        self,
        refused: dict[str, list[str]],
        let_go: list[str],
        lastmods: list[tuple[str, datetime]],
    ) -> int:
        for reason, urls in refused.items():
            self.rows.refused(urls, reason)
        if let_go:
            self.rows.let_go(let_go)
        return self.rows.sitemap_lastmods(lastmods) if lastmods else 0

    def _written(self, due_now: int, hosts: dict[str, str]) -> dict[str, str]:
        self._writing = False
        self._settle(hosts)
        if not due_now:
            return {}
        self.stats.inc_value("govsi/revisit/sitemap_lastmod", due_now)
        return hosts

    def _settle(self, hosts: dict[str, str]) -> None:
        """``hosts``' lastmods written (or given up), but for those with another buffered."""
        for host in hosts.keys() - self._buffered_hosts:
            self._lastmod_hosts.pop(host, None)

    def _write_failed(self, failure: Failure, hosts: dict[str, str]) -> None:
        self._writing = False
        self._settle(hosts)
        logger.warning("recording revisits not sent failed (%s); they are due again next run",
                       failure.getErrorMessage())  # fmt: skip
        self.stats.inc_value("govsi/revisit/write_failed")
