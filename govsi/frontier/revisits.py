"""The scheduler's revisits of stored pages and images (REVISIT): which hosts have due
rows, claiming a host's due pages a batch at a time when they can go out, queuing them
behind the host's new pages (the overdue ones among them), and what becomes of a revisit
that may not go.

The rule (docs/stored.md, "Revisits: which and when"):

- A host with due rows is set up at the start of the run like any other: its robots.txt is
  fetched again (never taken from crawldb: ``HostInfo.revisiting``), its sitemaps read, and
  nothing of it is claimed before that is done.
- New pages come first: a host's due pages are claimed once no new page of it is queued,
  in memory or in crawldb, and queued after any it finds later (``REVISIT_DEPTH``).
- Overdue ones are never starved: a revisit due for longer than REVISIT_MIN_INTERVAL is
  claimed while new pages still wait and goes out among them, at its own depth, after the
  pages links found at that depth (as a sitemap's page does).
- Then the host's due images (due with the pages that show them, found in the round
  before those pages' visits are written), in URL order.
- At most REVISIT_HOST_SHARE of the fetches a host's delay allows in a day are revisits,
  every worker's claims counted in crawldb (``govsi.store.hostbudget``), soonest due first:
  the rest stay due for the next run, so revisits never crowd out new pages.
- Everything else is the queue's: per-host and per-address delays, budgets, robots.txt as
  it reads now (a page it forbids keeps its copy and gets the reason).

``Revisits`` is a part the scheduler holds: it writes the revisit fields of the hosts'
``HostInfo`` records it is given, and tells the scheduler what it finds through
``QueueCallbacks``.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Literal

from scrapy import Request
from twisted.internet.threads import deferToThread
from twisted.python.failure import Failure

from govsi.frontier.config import SchedulerConfig
from govsi.frontier.entries import Entry, QueueCallbacks, Workbench
from govsi.frontier.revisitwrites import RevisitWrites
from govsi.requestmeta import KIND_IMAGE, KIND_PAGE, META_LASTMOD, META_URL
from govsi.revisit.due import MODE_OFF, host_revisit_budget, parse_lastmod
from govsi.store.due import CLAIM_LEASE, CLAIM_USE
from govsi.store.extension import CrawlStore
from govsi.store.revisits import Claimed, RevisitRows
from govsi.web.urls import fingerprint, host_of, in_scope

logger = logging.getLogger(__name__)

# The queue key of a revisit that is not overdue: after every new page of its host.
REVISIT_DEPTH = 1_000_000
# A read that failed waits this long before the host's rows are asked for again.
READ_RETRY = 5.0
# Every host with due rows is looked at no more often than this when nothing is ready
# (a host's own releases look at it at once).
POLL_INTERVAL = 1.0
# What a read asks crawldb for: a host's due pages, only its overdue ones, its due images.
_Read = Literal["pages", "overdue", "images"]


def revisit_rows_for(config: SchedulerConfig, store: CrawlStore) -> RevisitRows | None:
    """crawldb's side of this run's revisits (None: REVISIT=off). A revisit is overdue
    once due for REVISIT_MIN_INTERVAL; a worker not seen within LEASE_TTL is gone."""
    if config.revisit == MODE_OFF:
        return None
    return RevisitRows(
        store.engine,
        mode=config.revisit,
        min_interval=config.revisit_min_interval,
        overdue_after=config.revisit_min_interval,
        hub_min_interval=config.revisit_hub_min_interval,
        live_within=config.lease_ttl,
    )


@dataclass
class _Due:
    """One host's revisits in this run."""

    pages: bool = True  # crawldb may hold due pages of it nobody has claimed
    overdue: bool = True  # ... overdue ones
    images: bool = True  # due images after ``image_cursor``
    image_cursor: str = ""
    reading: bool = False
    read_after: float = 0.0
    queued: int = 0  # its revisits in the frontier


class Revisits:
    def __init__(
        self,
        config: SchedulerConfig,
        bench: Workbench,
        *,
        rows: RevisitRows | None,
        callbacks: QueueCallbacks,
    ) -> None:
        self.hosts, self.frontier = bench.hosts, bench.frontier
        self.stats = bench.stats
        self.rows = rows if config.revisit != MODE_OFF else None
        self.mode = config.revisit
        self.cb = callbacks
        self.suffixes = list(config.scope.suffixes)
        self.batch = max(1, config.refill_size)
        self.host_share = config.revisit_host_share
        self._due: dict[str, _Due] = {}
        # Hosts with due rows still to read: those ``poll`` looks at.
        self._active: set[str] = set()
        self._polled_at = float("-inf")
        # Pages and images revisited (or refused) in this round: never again in it.
        self.revisited: set[int] = set()
        # Queued revisits: when their claim was taken (monotonic), by URL.
        self._claimed_at: dict[str, float] = {}
        # Written in batches, in a thread: refusals, claims let go, lastmods.
        self.writes = RevisitWrites(self.rows, self.stats) if self.rows is not None else None

    def open(self, worker: str) -> None:
        """The round starts: every host with due rows is set up (robots.txt first). Called
        again in the run (REVISIT_WAIT's wake), a new round starts: what the last one
        revisited may be due again, and hosts it finished are read again."""
        if self.rows is None:
            return
        self.rows.open(worker)
        self.revisited.clear()
        due = 0
        for host, sample_url, count in self.rows.due_hosts():
            if not in_scope(sample_url, self.suffixes):
                continue
            state = self._track(host, sample_url)
            state.pages = state.overdue = state.images = True
            state.image_cursor = ""
            self._left(host)
            due += count
        self.stats.inc_value("govsi/revisit/due", due)
        self.stats.set_value("govsi/revisit/hosts", len(self._due))
        if due:
            logger.info("revisits (REVISIT=%s): %d stored pages and images due on %d hosts",
                        self.mode, due, len(self._due))  # fmt: skip

    def _track(self, host: str, sample_url: str) -> _Due:
        due = self._due.get(host)
        if due is None:
            due = self._due[host] = _Due()
            self._active.add(host)
            info = self.cb.add_host(host, sample_url)
            info.revisiting = True
            info.revisits_left = True
        return due

    def stop(self) -> None:
        """The run's writes are in: what is buffered is written, and every claim this
        worker still holds goes back (blocking: the crawl is over)."""
        if self.rows is None or self.writes is None:
            return
        try:
            self.writes.write_now()
            released = self.rows.release()
        except Exception as e:
            logger.warning("revisit claims not given back (%s); they run out", e)
            return
        if released:
            self.stats.set_value("govsi/revisit/claims_released", released)

    def has_work(self) -> bool:
        """Due rows still to read for a host this run can serve, or sitemap lastmods not
        written yet: each may make a page due in this run, which must not end before."""
        lastmods = self.writes is not None and self.writes.pending()
        return lastmods or any(self.hosts[h].unavailable is None for h in self._active)

    # -- claiming ---------------------------------------------------------------------------
    def poll(self, now: float) -> None:
        """Claim for every host whose turn it is; write what is buffered."""
        if now - self._polled_at < POLL_INTERVAL:
            return
        self._polled_at = now
        for host in list(self._active):
            self._consider(host, now)
        self._flush()

    def after_release(self, host: str, now: float) -> None:
        """A request of ``host`` left: claim more for it if its turn has come."""
        if host in self._due:
            self._consider(host, now)

    def _consider(self, host: str, now: float) -> None:
        due, info = self._due[host], self.hosts[host]
        if due.reading or now < due.read_after or not (due.pages or due.images):
            return
        if info.unavailable is not None:
            # Given up on in this run: its due rows stay due for the next.
            due.pages = due.images = due.overdue = False
            self._left(host)
            return
        state = self.frontier.host(host)
        if state.gated or state.ip is None or (self.writes and self.writes.waits(host)):
            return  # robots.txt (and sitemaps' lastmods) first; served here only
        if due.queued >= max(1, self.batch // 4):
            return
        room = self.frontier.window - len(self.frontier)
        # Enough to go out well within a claim's lease at the host's delay.
        pace = CLAIM_LEASE * CLAIM_USE / 2 / max(state.delay, 0.1)
        limit = min(self.batch, room, max(1, int(pace)))
        if limit <= 0:
            return
        new_pages = len(state.queue) > due.queued or info.backlog or info.refilling
        per_day = host_revisit_budget(state.delay, self.host_share)
        if new_pages:
            if due.overdue:
                self._read(host, "overdue", limit, per_day)
        else:
            self._read(host, "pages" if due.pages else "images", limit, per_day)

    def _read(self, host: str, what: _Read, limit: int, per_day: int | None) -> None:
        assert self.rows is not None
        due = self._due[host]
        due.reading = True
        if what == "images":
            d = deferToThread(self.rows.images, host, due.image_cursor, limit, per_day=per_day)
        else:
            d = deferToThread(
                self.rows.claim, host, limit, overdue_only=what == "overdue", per_day=per_day
            )
        d.addCallbacks(self._claimed, self._read_failed, (host, limit, what), {}, (host,))

    def _claimed(self, rows: Claimed, host: str, limit: int, what: _Read) -> None:
        due = self._due[host]
        due.reading = False
        if rows.capped:
            # The day's budget is spent: the rest wait for the next run.
            due.pages = due.overdue = due.images = False
            self.stats.inc_value("govsi/budget/revisits_per_host")
            logger.info("%s: its revisits for today are claimed (REVISIT_HOST_SHARE); "
                        "the rest stay due for the next run", host)  # fmt: skip
        elif len(rows) < limit:
            if what == "images":
                due.images = False
            elif what == "overdue":
                due.overdue = False
            else:
                due.pages = due.overdue = False
        if what == "images" and rows:
            due.image_cursor = rows[-1].url
        now = time.monotonic()
        taken = 0
        for row in rows:
            if fingerprint(row.url) in self.revisited:
                continue
            entry = Entry(KIND_IMAGE if row.image else KIND_PAGE, row.url, row.depth, row.revisit)
            if row.overdue:
                self.frontier.push(host, row.depth, entry, spillable=False, late=True)
                self.stats.inc_value("govsi/revisit/queued/overdue")
            else:
                self.frontier.push(host, REVISIT_DEPTH, entry, spillable=False)
            self._claimed_at[row.url] = now
            due.queued += 1
            taken += 1
        self.stats.inc_value("govsi/revisit/claimed", taken)
        self.stats.inc_value(f"govsi/revisit/claimed/{what}", taken)
        self._left(host)
        if taken:
            self.cb.work_for(self.hosts[host].ip)
            self.cb.wake()

    def _read_failed(self, failure: Failure, host: str) -> None:
        due = self._due[host]
        due.reading = False
        due.read_after = time.monotonic() + READ_RETRY
        logger.warning("reading the due revisits of %s failed: %s", host, failure.getErrorMessage())

    def _left(self, host: str) -> None:
        due = self._due[host]
        left = due.pages or due.images or due.reading
        self.hosts[host].revisits_left = left
        if left:
            self._active.add(host)
        else:
            self._active.discard(host)

    # -- a revisit leaving, or not --------------------------------------------------------------
    def admit(self, host: str, entry: Entry, now: float) -> bool:
        """The revisit's part of the last check: not sent in this run yet, and its claim
        young enough that no other worker may have taken it (else it is claimed again)."""
        if fingerprint(entry.url) in self.revisited:
            self._gone(host, entry)
            return False
        claimed = self._claimed_at.get(entry.url)
        if claimed is not None and now - claimed > CLAIM_LEASE * CLAIM_USE:
            self.stats.inc_value("govsi/revisit/claim_expired")
            self._gone(host, entry)
            due = self._due[host]
            due.pages = due.overdue = True  # claimed again, if still nobody's
            self._left(host)
            return False
        return True

    def sent(self, host: str, entry: Entry) -> None:
        self.revisited.add(fingerprint(entry.url))
        self._gone(host, entry)
        self.stats.inc_value("govsi/revisit/sent")
        if entry.kind == KIND_IMAGE:
            self.stats.inc_value("govsi/revisit/sent/images")

    def not_fetched(self, entry: Entry, reason: str, stat: str) -> None:
        """A revisit refused at the last check (``stat``: the scheduler's count of it):
        robots.txt now forbids it (the page keeps its copy and gets ``reason``), or a
        budget or the host's state keeps it for a later run (its claim is let go)."""
        self.revisited.add(fingerprint(entry.url))
        self._gone(host_of(entry.url), entry)
        if self.writes is None:
            return
        if stat.startswith("govsi/robots/"):
            self.stats.inc_value("govsi/revisit/refused_by_robots")
            if entry.kind == KIND_PAGE:
                self.writes.refused(entry.url, reason)
            else:
                self.writes.let_go(entry.url)  # a picture keeps its bytes, as they were
        else:
            self.stats.inc_value("govsi/revisit/not_fetched")
            self.writes.let_go(entry.url)
        if self.writes.full():
            self._flush()

    def _gone(self, host: str, entry: Entry) -> None:
        self._claimed_at.pop(entry.url, None)
        due = self._due.get(host)
        if due is not None and due.queued > 0:
            due.queued -= 1

    # -- sitemaps ---------------------------------------------------------------------------
    def seen(self, request: Request) -> None:
        """A request for a URL the crawl knows: when a sitemap lists it as changed
        (``META_LASTMOD``) after a stored page's last visit, the page is due now. Its
        host's revisits wait until this is written."""
        when = parse_lastmod(request.meta.get(META_LASTMOD))
        if self.writes is None or when is None:
            return
        url: str = request.meta.get(META_URL, request.url)
        self.writes.lastmod(url, host_of(url), when)
        if self.writes.full():
            self._flush()

    def _flush(self) -> None:
        """What the revisits buffered, written in a thread; then the hosts whose pages
        lastmods made due are claimed again, and the engine asks for work."""
        written = self.writes.flush() if self.writes is not None else None
        if written is not None:
            written.addCallback(self._written)

    def _written(self, made_due: dict[str, str] | None) -> None:
        if made_due is None:
            return  # the write failed (logged): what it held is due again next run
        if made_due:
            self._made_due(made_due)
        self.cb.wake()

    def _made_due(self, hosts: dict[str, str]) -> None:
        """Lastmods written made pages of ``hosts`` due: claimed again, whether or not they
        had due rows before (a claim that finds none ends the host's revisits again)."""
        for host, url in hosts.items():
            due = self._track(host, url)
            due.pages = due.overdue = due.images = True
            due.image_cursor = ""  # their pictures are due with them
            self._left(host)
