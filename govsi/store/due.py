"""The revisit rules in crawldb's SQL: ``sql`` renders a rule's terms
(``govsi.revisit.terms``, written once in ``govsi.revisit.due.DueRule``) as a WHERE clause
over ``page`` or ``image``; and the claim rule, crawldb's own.

A claim is free when unclaimed, held by a worker that is gone, or held longer than
``CLAIM_LEASE``.
"""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import ColumnElement, Table, and_, exists, false, not_, or_, true

from govsi.revisit.due import DueRule
from govsi.revisit.terms import COMPARE, And, Cmp, Not, Null, Or, Outer, Term
from govsi.store.schema import IMAGE, PAGE

__all__ = ["CLAIM_LEASE", "CLAIM_USE", "claimable", "sql"]

# A claim older than this may be taken by another worker: a worker drops a revisit it
# claimed longer ago than CLAIM_LEASE * CLAIM_USE before sending it (it claims again), so
# two workers never send the same one.
CLAIM_LEASE = 3600.0
CLAIM_USE = 0.9


def sql(term: Term, table: Table = PAGE, outer: Table | None = None) -> ColumnElement[bool]:
    """``term`` as a WHERE clause over ``table`` (``page`` or ``image``). ``Showing``
    asks about the pages showing an image (``table`` IMAGE); inside it ``outer`` is that
    image's table."""
    if isinstance(term, Null):
        return table.c[term.column].is_(None)
    if isinstance(term, Cmp):
        column = table.c[term.column]
        value = term.value
        right = outer.c[value.column] if isinstance(value, Outer) and outer is not None else value
        clause: ColumnElement[bool] = COMPARE[term.op](column, right)
        return clause
    if isinstance(term, Not):
        if isinstance(term.term, Null):
            return table.c[term.term.column].is_not(None)
        return not_(sql(term.term, table, outer))
    if isinstance(term, And):
        return and_(*(sql(t, table, outer) for t in term.terms)) if term.terms else true()
    if isinstance(term, Or):
        return or_(*(sql(t, table, outer) for t in term.terms)) if term.terms else false()
    # A page showing the picture: one of the image rows of its URL names the page.
    showing = IMAGE.alias("showing")
    return exists().where(
        showing.c.url == table.c.url,
        PAGE.c.id == showing.c.page_id,
        sql(term.term, PAGE, table),
    )


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

