"""When the next stored page, feed or sitemap falls due, within a horizon: what an idle
crawl kept open by REVISIT_WAIT waits for (``govsi.frontier.waiting``). Blocking; a read.

Pages are those due by the horizon nobody holds (a claimed one is another worker's or on
its way already: ``DueRule.waiting``), their due times by ``DueRule.due_at``; the soonest
``limit`` by ``next_visit`` are read, so a time may come a little late when many pages
fall due within the horizon, never early. Pictures are due with the pages that show them,
and so wait for them.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Engine, and_, select

from govsi.revisit.due import MODE_DUE, DueRule
from govsi.store.due import sql
from govsi.store.schema import FEED, PAGE

__all__ = ["due_times"]


def due_times(
    engine: Engine,
    *,
    min_interval: float,
    hub_min_interval: float | None,
    horizon: datetime,
    limit: int = 100,
) -> list[datetime]:
    """The due times up to ``horizon`` of stored pages nobody holds (at most ``limit``)
    and of feeds and sitemaps, soonest first. ``min_interval``: REVISIT_MIN_INTERVAL;
    ``hub_min_interval``: REVISIT_HUB_MIN_INTERVAL (None: ``min_interval``)."""
    rule = DueRule(MODE_DUE, horizon, datetime.min, min_interval, min_interval, hub_min_interval)
    pages = (
        select(PAGE.c.next_visit, PAGE.c.accessed_time)
        .where(sql(rule.waiting()))
        .order_by(PAGE.c.next_visit)
        .limit(limit)
    )
    polls = select(FEED.c.next_poll).where(
        and_(FEED.c.next_poll.is_not(None), FEED.c.next_poll <= horizon)
    )
    with engine.connect() as conn:
        times = [rule.due_at(v, a) for v, a in conn.execute(pages)]
        times += [when for (when,) in conn.execute(polls)]
    return sorted(times)
