"""crawldb's side of revisits: which hosts have due rows, claiming a host's due pages so
that each is revisited once per round across workers, its due images, and what the
scheduler records of a revisit it did not send.

A claim is ``page.revisit_claim`` (the worker's name) and ``page.revisit_claimed_at``,
set by one UPDATE that takes only rows nobody holds: unclaimed, claimed by a worker that
is gone (on SQLite every other name: one process at a time), or claimed longer ago than
``CLAIM_LEASE``. The fetch side clears the claim when it records the visit (with the
next visit); a row whose claim was cleared in this round (``revisit_claimed_at`` at or
after its start) is done for the round. A round starts with the run; for ``all`` an
unfinished one in crawldb is joined (``govsi.store.rounds``: finished after a kill).
A picture's claim is the same pair of columns on every ``image`` row of its URL; its
download (or 304) gives it back.

The due rule is ``govsi.revisit.due.DueRule``'s terms, rendered as SQL (``govsi.store.due``):
written once, evaluated the same way in Python and in crawldb. Images are
due with the pages that show them: while a page showing the picture is due, or once one
was visited after the picture's last download (and that download is ``min_interval`` old;
in ``all``, downloaded before the round), so that a round finds its pictures in it.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any, NamedTuple

from sqlalchemy import (
    Engine,
    and_,
    func,
    or_,
    select,
    text,
    update,
)

from govsi.items import PageType, Revisit
from govsi.revisit.due import (
    MODE_ALL,
    STORED,
    DueRule,
    RevisitMode,
    lastmod_makes_due,
    lastmod_next_visit,
)
from govsi.store.database import chunks
from govsi.store.due import claimable, sql
from govsi.store.hostbudget import HostBudget
from govsi.store.rounds import end_round, join_round, mark_round, touch_round
from govsi.store.schema import IMAGE, PAGE, SITE, utcnow
from govsi.web.urls import host_of

__all__ = ["Claimed", "DueRow", "RevisitRows"]

# The workers at work on the crawl (``govsi.sharing.leases``' rule: seen within LEASE_TTL on
# crawldb's clock, not ended).
_LIVE_WORKERS = text(
    "SELECT worker FROM crawldb.crawl_worker WHERE ended_at IS NULL "
    "AND seen_at > EXTRACT(EPOCH FROM clock_timestamp()) - :ttl"
)


class DueRow(NamedTuple):
    """A due page or image, as the scheduler queues it: the request's kind is an image's
    when ``image``; ``overdue``: due for longer than the rule's bound."""

    url: str
    depth: int
    image: bool
    revisit: Revisit
    overdue: bool


class Claimed(list[DueRow]):
    """The rows a claim took; ``capped``: the host's revisit budget for the day stopped it
    short (more may be due: they wait for the next run)."""

    capped: bool = False


class RevisitRows:
    """The revisit reads and claims of one worker on one crawldb; blocking (the scheduler
    calls them in a thread)."""

    def __init__(
        self,
        engine: Engine,
        *,
        mode: RevisitMode,
        min_interval: float,
        overdue_after: float,
        hub_min_interval: float | None = None,
        live_within: float = 30.0,
        clock: Callable[[], datetime] = utcnow,
    ) -> None:
        self.engine = engine
        # Wall time as crawldb keeps it (naive UTC); a test gives its own.
        self.clock = clock
        self.mode = mode
        self.min_interval = min_interval
        self.overdue_after = overdue_after
        self.hub_min_interval = hub_min_interval
        # A worker not seen within this (LEASE_TTL) is gone, and so are its claims.
        self.live_within = live_within
        self.shared = engine.dialect.name != "sqlite"
        self.worker = ""
        # Set by ``open``; before it, nothing was visited before the round.
        self.round_start = datetime.min

    def open(self, worker: str, now: datetime | None = None) -> None:
        """The round starts for ``worker``: now, or (``all``) when the round it joins
        started: another worker's at work on the crawl, or one a killed run left
        (``govsi.store.rounds``), so that nothing is revisited twice in it. The report's
        last round is marked too (``mark_round``)."""
        self.worker = worker
        now = now or self.clock()
        start = now
        with self.engine.begin() as conn:
            if self.mode == MODE_ALL:
                start = join_round(conn, start, alive_within=self.min_interval)
            mark_round(conn, start, now, self.min_interval)
        self.round_start = start

    def rule(self, now: datetime | None = None) -> DueRule:
        return DueRule(
            self.mode, now or self.clock(), self.round_start, self.min_interval,
            self.overdue_after, self.hub_min_interval,
        )  # fmt: skip

    def _live_workers(self) -> list[str]:
        if not self.shared:
            return [self.worker]
        with self.engine.connect() as conn:
            live = conn.execute(_LIVE_WORKERS, {"ttl": self.live_within}).scalars()
            return sorted({self.worker, *live})

    # -- the questions ----------------------------------------------------------------------
    def due_hosts(self, now: datetime | None = None) -> list[tuple[str, str, int]]:
        """Hosts with due pages or images nobody holds: (host, one of their URLs, how
        many), in the order of their site rows."""
        rule = self.rule(now)
        found: dict[str, tuple[str, int]] = {}
        with self.engine.connect() as conn:
            live = self._live_workers()
            q = (
                select(SITE.c.domain, func.min(PAGE.c.url), func.count())
                .join(PAGE, PAGE.c.site_id == SITE.c.id)
                .where(sql(rule.page()), claimable(rule, self.worker, live))
                .group_by(SITE.c.id, SITE.c.domain)
                .order_by(SITE.c.id)
            )
            for host, url, count in conn.execute(q):
                found[host] = (url, int(count))
            due_images = and_(sql(rule.picture(), IMAGE), claimable(rule, self.worker, live, IMAGE))
            images = select(IMAGE.c.url).where(due_images).distinct()
            for (url,) in conn.execute(images.execution_options(yield_per=5000)):
                host = host_of(url)
                if host:
                    sample, count = found.get(host, (url, 0))
                    found[host] = (sample, count + 1)
        return [(host, url, count) for host, (url, count) in found.items()]

    def claim(
        self,
        host: str,
        limit: int,
        *,
        overdue_only: bool = False,
        per_day: int | None = None,
        now: datetime | None = None,
    ) -> Claimed:
        """Claim up to ``limit`` of ``host``'s due pages nobody holds, soonest due first
        (``overdue_only``: only those due longer than the overdue bound), and return them.
        One UPDATE decides: a row another worker claimed meanwhile is not taken.
        ``per_day``: the host's revisit budget for the day, every worker's claims of pages
        and pictures counted (``HostBudget``); None: no cap."""
        rule = self.rule(now)
        if limit <= 0:
            return Claimed()
        live = self._live_workers()
        due = sql(rule.page(overdue=overdue_only))
        free = claimable(rule, self.worker, live)
        with self.engine.begin() as conn:
            site = conn.execute(select(SITE.c.id).where(SITE.c.domain == host)).scalar()
            if site is None:
                return Claimed()
            budget, wanted = _budget(host, rule, per_day), limit
            if budget is not None:
                limit = budget.take(conn, wanted)
                if limit <= 0:
                    return _capped(Claimed())
            soonest = func.coalesce(PAGE.c.next_visit, PAGE.c.accessed_time)
            pick = (
                select(PAGE.c.id)
                .where(PAGE.c.site_id == site, due, free)
                .order_by(soonest, PAGE.c.id)
                .limit(limit)
            )
            if self.shared:
                # Rows another worker is claiming right now are left to it.
                pick = pick.with_for_update(skip_locked=True)
            ids = list(conn.execute(pick).scalars())
            if not ids:
                return Claimed()
            if self.mode == MODE_ALL:
                touch_round(conn, self.round_start, rule.now)
            # The claim re-checks that nobody holds the row: under READ COMMITTED a row
            # claimed by a transaction that committed meanwhile is re-read and skipped.
            conn.execute(
                update(PAGE)
                .where(PAGE.c.id.in_(ids), free)
                .values(revisit_claim=self.worker, revisit_claimed_at=rule.now)
            )
            rows = conn.execute(
                select(
                    PAGE.c.url, PAGE.c.depth, PAGE.c.etag, PAGE.c.last_modified,
                    PAGE.c.content_hash, PAGE.c.page_type_code, PAGE.c.http_status_code,
                    PAGE.c.accessed_time, PAGE.c.revisit_history, PAGE.c.next_visit,
                )
                .where(PAGE.c.id.in_(ids), PAGE.c.revisit_claim == self.worker)
                .order_by(soonest, PAGE.c.id)
            ).all()  # fmt: skip
            if budget is not None:
                budget.spent(conn, len(rows))
        claimed = Claimed(_page_row(rule, row) for row in rows)
        return _capped(claimed) if limit < wanted and len(ids) == limit else claimed

    def images(
        self,
        host: str,
        after: str,
        limit: int,
        *,
        per_day: int | None = None,
        now: datetime | None = None,
    ) -> Claimed:
        """Claim up to ``limit`` of ``host``'s due images nobody holds, by URL after
        ``after`` (a cursor), and return them. A picture's claim is on every row of its
        URL, taken by one UPDATE that re-checks nobody holds it (as pages'); ``per_day``
        as ``claim``'s."""
        rule = self.rule(now)
        if limit <= 0:
            return Claimed()
        live = self._live_workers()
        free = claimable(rule, self.worker, live, IMAGE)
        prefixes = [f"{scheme}://{host}{end}" for scheme in ("http", "https") for end in "/:"]
        first = (
            select(func.min(IMAGE.c.id))
            .where(or_(*[IMAGE.c.url.like(f"{p}%") for p in prefixes]), IMAGE.c.url > after)
            .group_by(IMAGE.c.url)
        )
        pick = (
            select(IMAGE.c.url)
            .where(IMAGE.c.id.in_(first), sql(rule.picture(), IMAGE), free)
            .order_by(IMAGE.c.url)
        )
        with self.engine.begin() as conn:
            budget, wanted = _budget(host, rule, per_day, pictures=True), limit
            if budget is not None:
                limit = budget.take(conn, wanted)
                if limit <= 0:
                    return _capped(Claimed())
            urls = list(conn.execute(pick.limit(limit)).scalars())
            if not urls:
                return Claimed()
            if self.mode == MODE_ALL:
                touch_round(conn, self.round_start, rule.now)
            conn.execute(
                update(IMAGE)
                .where(IMAGE.c.url.in_(urls), free)
                .values(revisit_claim=self.worker, revisit_claimed_at=rule.now)
            )
            held = (
                select(func.min(IMAGE.c.id))
                .where(IMAGE.c.url.in_(urls))
                .group_by(IMAGE.c.url)
                .having(func.min(IMAGE.c.revisit_claim) == self.worker)
                .having(func.max(IMAGE.c.revisit_claim) == self.worker)
            )
            rows = conn.execute(
                select(
                    IMAGE.c.url, IMAGE.c.etag, IMAGE.c.last_modified, IMAGE.c.content_hash,
                    IMAGE.c.http_status_code, IMAGE.c.accessed_time,
                )
                .where(IMAGE.c.id.in_(held))
                .order_by(IMAGE.c.url)
            ).all()  # fmt: skip
            if budget is not None:
                budget.spent(conn, len(rows))
        claimed = Claimed(
            DueRow(
                url, 0, True,
                Revisit(etag, modified, content, None, status, accessed, None),
                False,
            )
            for url, etag, modified, content, status, accessed in rows
        )  # fmt: skip
        return _capped(claimed) if limit < wanted and len(urls) == limit else claimed

    # -- revisits not sent ------------------------------------------------------------------
    def refused(self, urls: list[str], reason: str, now: datetime | None = None) -> None:
        """Pages robots.txt now forbids: not requested; each keeps its last copy (a visit
        that ``kept`` it), gets the reason, is let go and is due again after the minimum
        interval."""
        when = now or self.clock()
        with self.engine.begin() as conn:
            for part in chunks(urls):
                conn.execute(
                    update(PAGE)
                    .where(PAGE.c.url.in_(part), PAGE.c.revisit_claim == self.worker)
                    .values(
                        fetch_error=reason[:2000],
                        visit_outcome="kept",
                        visit_time=when,
                        revisit_claim=None,
                        next_visit=when + timedelta(seconds=self.min_interval),
                    )
                )

    def let_go(self, urls: list[str]) -> None:
        """Claimed pages and pictures not revisited in this round (a budget, a host given
        up on, a picture robots.txt now forbids): let go, done for the round, due again in
        the next."""
        with self.engine.begin() as conn:
            for table in (PAGE, IMAGE):
                for part in chunks(urls):
                    conn.execute(
                        update(table)
                        .where(table.c.url.in_(part), table.c.revisit_claim == self.worker)
                        .values(revisit_claim=None)
                    )

    def release(self) -> int:
        """The run ends normally: every claim of this worker still held goes back, as if
        never taken (what it did not send is due for the next worker or run), and so do
        those of workers that are gone (a killed run's, on pages it revisited: not due, so
        nobody took them over); the round ends with its last worker. How many went back."""
        if not self.worker:
            return 0
        live = self._live_workers()
        others = [w for w in live if w != self.worker]
        went_back = 0
        with self.engine.begin() as conn:
            for table in (PAGE, IMAGE):
                claim = table.c.revisit_claim
                result = conn.execute(
                    update(table)
                    .where(or_(claim == self.worker, claim.not_in(live)))
                    .values(revisit_claim=None, revisit_claimed_at=None)
                )
                went_back += int(result.rowcount or 0)
            if self.mode == MODE_ALL and not others:
                end_round(conn, self.round_start)
        return went_back

    def sitemap_lastmods(
        self, changed: list[tuple[str, datetime]], now: datetime | None = None
    ) -> int:
        """Stored pages a sitemap says changed after their last visit (``<lastmod>``) are
        due now, yet never sooner than the minimum interval after that visit
        (``lastmod_next_visit``); how many are due now."""
        when = now or self.clock()
        # A URL's latest lastmod (its due time does not depend on which), and one read
        # per chunk of URLs, not one per URL: a sitemap lists thousands.
        latest: dict[str, datetime] = {}
        for url, lastmod in changed:
            latest[url] = max(lastmod, latest.get(url, lastmod))
        count = 0
        with self.engine.begin() as conn:
            for part in chunks(list(latest)):
                found = conn.execute(
                    select(PAGE.c.id, PAGE.c.url, PAGE.c.accessed_time, PAGE.c.next_visit).where(
                        PAGE.c.url.in_(part), sql(STORED), PAGE.c.accessed_time.is_not(None)
                    )
                ).all()
                for page_id, url, accessed, scheduled in found:
                    if not lastmod_makes_due(latest[url], accessed):
                        continue
                    due = lastmod_next_visit(when, accessed, scheduled, self.min_interval)
                    if due is None:
                        continue
                    conn.execute(update(PAGE).where(PAGE.c.id == page_id).values(next_visit=due))
                    count += due <= when
        return count


def _budget(
    host: str, rule: DueRule, per_day: int | None, pictures: bool = False
) -> HostBudget | None:
    return None if per_day is None else HostBudget(host, rule, per_day, pictures)


def _capped(claimed: Claimed) -> Claimed:
    claimed.capped = True
    return claimed


def _page_row(rule: DueRule, row: Any) -> DueRow:
    (url, depth, etag, modified, content, ptype, status, accessed, history, next_visit) = row
    page_type: PageType | None = ptype
    revisit = Revisit(etag, modified, content, page_type, status, accessed, history)
    return DueRow(url, depth or 0, False, revisit, rule.is_overdue(next_visit, accessed))
