"""A host's revisits claimed today, counted in crawldb so that every worker on the crawl
spends one budget (REVISIT_HOST_SHARE): one ``crawl_meta`` row per host, ``revisits
<hash of the host>`` = ``<UTC day>|<claimed>``.

``HostBudget.take`` runs inside the claim's transaction: it locks the host's row (on
PostgreSQL an upsert that updates it: two workers claiming for one host take turns; SQLite
has one writer at a time), says how many may be claimed, and ``spent`` adds what was. A
new day starts from 0. A value it cannot read fails closed: the day's budget counts as
spent (logged), and the row is written anew.
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass
from datetime import date

from sqlalchemy import Connection, update
from sqlalchemy.dialects import postgresql, sqlite

from govsi.revisit.due import revisits_allowed
from govsi.store.schema import CRAWL_META

__all__ = ["HostBudget", "budget_key", "read_spent"]

logger = logging.getLogger(__name__)


def budget_key(host: str) -> str:
    """The host's ``crawl_meta`` key (a host name may be longer than the key's 50)."""
    return "revisits " + hashlib.blake2b(host.encode(), digest_size=16).hexdigest()


def read_spent(value: str | None, day: date) -> int | None:
    """Revisits claimed on ``day`` by a stored value (0: none, or another day's); None:
    unreadable."""
    if value is None:
        return 0
    stamp, _, count = value.partition("|")
    try:
        stored, spent = date.fromisoformat(stamp), int(count)
    except ValueError:
        return None
    if spent < 0:
        return None
    return spent if stored == day else 0


@dataclass
class HostBudget:
    """One claim's look at a host's budget: ``take`` before, ``spent`` after."""

    host: str
    day: date
    budget: int
    before: int = 0

    def take(self, conn: Connection, wanted: int) -> int:
        """Lock the host's row; how many of ``wanted`` may still be claimed today."""
        insert = (postgresql if conn.dialect.name == "postgresql" else sqlite).insert
        fresh = f"{self.day.isoformat()}|0"
        # One round trip: the row made, or kept as it is (an update that locks it on
        # PostgreSQL, as SELECT ... FOR UPDATE would) and read back.
        upsert = (
            insert(CRAWL_META)
            .values(key=budget_key(self.host), value=fresh)
            .on_conflict_do_update(
                index_elements=[CRAWL_META.c.key], set_={"value": CRAWL_META.c.value}
            )
            .returning(CRAWL_META.c.value)
        )
        value = conn.execute(upsert).scalar()
        spent = read_spent(value, self.day)
        if spent is None:
            logger.warning("%s: its revisit budget reads %r; spent for today", self.host, value)
            self.before = spent = self.budget
            self.spent(conn, 0)
        self.before = spent
        return revisits_allowed(self.budget, spent, wanted)

    def spent(self, conn: Connection, claimed: int) -> None:
        """``claimed`` more were claimed in this transaction."""
        conn.execute(
            update(CRAWL_META)
            .where(CRAWL_META.c.key == budget_key(self.host))
            .values(value=f"{self.day.isoformat()}|{self.before + claimed}")
        )
