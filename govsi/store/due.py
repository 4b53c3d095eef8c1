"""The revisit due rule (``govsi.revisit.due.DueRule``) and the claim rule as SQL
expressions over ``page`` and ``image``, for ``govsi.store.revisits``.

A page is due by its schedule (``next_visit``, or its last visit and the minimum
interval), or in ``all`` by a last visit before the round; a picture (``due``) while a page
showing it is due or was visited since the picture's download. A row is done for the round
once its claim was given back after the round began. A claim is free when unclaimed, held
by a worker that is gone, or held longer than ``CLAIM_LEASE``.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import ColumnElement, Table, and_, exists, not_, or_

from govsi.revisit.due import MODE_ALL, DueRule
from govsi.store.schema import IMAGE, PAGE

__all__ = [
    "CLAIM_LEASE",
    "CLAIM_USE",
    "STORED",
    "claimable",
    "done",
    "image_due",
    "page_due",
    "scheduled_by",
]

# A claim older than this may be taken by another worker: a worker drops a revisit it
# claimed longer ago than CLAIM_LEASE * CLAIM_USE before sending it (it claims again), so
# two workers never send the same one.
CLAIM_LEASE = 3600.0
CLAIM_USE = 0.9
# Stored rows: fetched once at least (not a FRONTIER row).
STORED = PAGE.c.page_type_code.is_not(None) & (PAGE.c.page_type_code != "FRONTIER")


def scheduled_by(rule: DueRule, when: datetime) -> ColumnElement[bool]:
    """The page's schedule makes it due by ``when``."""
    min_interval = timedelta(seconds=rule.min_interval)
    return or_(
        PAGE.c.next_visit <= when,
        and_(PAGE.c.next_visit.is_(None), PAGE.c.accessed_time <= when - min_interval),
        and_(PAGE.c.next_visit.is_(None), PAGE.c.accessed_time.is_(None)),
    )


def page_due(rule: DueRule) -> ColumnElement[bool]:
    if rule.mode == MODE_ALL:
        when: ColumnElement[bool] = or_(
            PAGE.c.accessed_time.is_(None), PAGE.c.accessed_time < rule.round_start
        )
    else:
        when = and_(
            or_(PAGE.c.accessed_time.is_(None), PAGE.c.accessed_time <= rule.floor),
            scheduled_by(rule, rule.now),
        )
    return and_(STORED, when, not_(done(rule, PAGE)))


def claimable(
    rule: DueRule, worker: str, live: list[str], table: Table = PAGE
) -> ColumnElement[bool]:
    """Nobody holds it (a row of ``table``, page or image): unclaimed, or held by a
    gone worker, or held too long. ``worker``'s own claims are queued here already,
    unless too old to be used (the scheduler drops those and claims them again)."""
    stale = rule.now - timedelta(seconds=CLAIM_LEASE)
    unused = rule.now - timedelta(seconds=CLAIM_LEASE * CLAIM_USE)
    claim, claimed_at = table.c.revisit_claim, table.c.revisit_claimed_at
    return or_(
        claim.is_(None),
        and_(claim == worker, claimed_at <= unused),
        and_(
            claim != worker,
            or_(claim.not_in(live), claimed_at.is_(None), claimed_at <= stale),
        ),
    )


def done(rule: DueRule, table: Table) -> ColumnElement[bool]:
    """Revisited in this round: its claim was given back after the round began."""
    return and_(
        table.c.revisit_claim.is_(None),
        table.c.revisit_claimed_at.is_not(None),
        table.c.revisit_claimed_at >= rule.round_start,
    )


def image_due(rule: DueRule) -> ColumnElement[bool]:
    finished = not_(done(rule, IMAGE))
    if rule.mode == MODE_ALL:
        return and_(
            IMAGE.c.accessed_time.is_not(None), IMAGE.c.accessed_time < rule.round_start, finished
        )
    # Due with the pages that show it: once one was visited since its download, or while
    # one is due in this round (claimed or not), so that a round's pictures are found in
    # it, before the visits of their pages are written.
    showing = IMAGE.alias("showing")
    shown_by_due_page = exists().where(
        showing.c.url == IMAGE.c.url,
        PAGE.c.id == showing.c.page_id,
        or_(PAGE.c.accessed_time > IMAGE.c.accessed_time, page_due(rule)),
    )
    return and_(
        IMAGE.c.accessed_time.is_not(None),
        IMAGE.c.accessed_time <= rule.picture_floor,
        shown_by_due_page,
        finished,
    )
