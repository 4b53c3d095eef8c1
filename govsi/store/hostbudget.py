"""A host's revisit budget and its price, kept in crawldb so that every worker on the crawl
spends one budget (REVISIT_HOST_SHARE) and every writer schedules at one price: one
``crawl_meta`` row per host, ``revisits <hash of the host>`` =
``<UTC day>|<claimed>|<pictures claimed>|<price>`` (an older ``<day>|<claimed>`` has no
pictures counted and the default price).

``HostBudget.take`` runs inside the claim's transaction: it locks the host's row (on
PostgreSQL an upsert that updates it: two workers claiming for one host take turns; SQLite
has one writer at a time), says how many may be claimed, and ``spent`` adds what was. A
new day starts from 0, and (``due`` rounds) refits the host's price to its budget
(``govsi.revisit.age.fit_price``, never below ``default_price(min_interval)``) from what
the last day the host was claimed from showed: the visits a day its pages' intervals ask
for (``asked_per_day``) and the pictures claimed then, against the claims made. The
writer reads the prices (``read_prices``) for the next visits it gives: a host whose
pages ask for more than its budget has their intervals lengthened the age-optimal way,
instead of the soonest due going first and the rest starving.

A value it cannot read fails closed: the day's budget counts as spent (logged), and the
row is written anew at the default price.
"""

from __future__ import annotations

import hashlib
import logging
import math
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date
from typing import Any

from sqlalchemy import ColumnElement, Connection, case, extract, func, literal, select

from govsi.revisit.age import fit_price
from govsi.revisit.due import DAY, MODE_DUE, DueRule, revisits_allowed
from govsi.revisit.schedule import default_price
from govsi.store import meta
from govsi.store.schema import CRAWL_META, PAGE, SITE

__all__ = [
    "BudgetRow",
    "HostBudget",
    "asked_per_day",
    "budget_key",
    "read_budget",
    "read_prices",
    "read_spent",
]

logger = logging.getLogger(__name__)


def budget_key(host: str) -> str:
    """The host's ``crawl_meta`` key (a host name may be longer than the key's 50)."""
    return "revisits " + hashlib.blake2b(host.encode(), digest_size=16).hexdigest()


@dataclass(frozen=True, slots=True)
class BudgetRow:
    """A host's row as stored: the last day it was claimed from, the claims that day
    (pictures among them), and its price (None: the default)."""

    day: date | None = None
    spent: int = 0
    pictures: int = 0
    price: float | None = None

    def value(self) -> str:
        day = (self.day or date.min).isoformat()
        price = "" if self.price is None else repr(self.price)
        return f"{day}|{self.spent}|{self.pictures}|{price}"


def read_budget(value: str | None) -> BudgetRow | None:
    """A stored value as a row (no value: a host never claimed from); None: unreadable."""
    if value is None:
        return BudgetRow()
    parts = value.split("|")
    if len(parts) not in (2, 4):
        return None
    try:
        day, spent = date.fromisoformat(parts[0]), int(parts[1])
        pictures = int(parts[2]) if len(parts) == 4 else 0
        price = float(parts[3]) if len(parts) == 4 and parts[3] else None
    except ValueError:
        return None
    if spent < 0 or not 0 <= pictures <= spent:
        return None
    if price is not None and not (math.isfinite(price) and price > 0):
        return None
    return BudgetRow(day, spent, pictures, price)


def read_spent(value: str | None, day: date) -> int | None:
    """Revisits claimed on ``day`` by a stored value (0: none, or another day's); None:
    unreadable."""
    row = read_budget(value)
    if row is None:
        return None
    return row.spent if row.day == day else 0


def read_prices(conn: Connection, hosts: Iterable[str]) -> dict[str, float]:
    """The fitted price of each of ``hosts`` that has one (the others: the default)."""
    keys = {budget_key(h): h for h in hosts}
    if not keys:
        return {}
    rows = conn.execute(
        select(CRAWL_META.c.key, CRAWL_META.c.value).where(CRAWL_META.c.key.in_(list(keys)))
    )
    prices: dict[str, float] = {}
    for key, value in rows:
        row = read_budget(value)
        if row is not None and row.price is not None:
            prices[keys[key]] = row.price
    return prices


def asked_per_day(conn: Connection, host: str, shortest: float) -> float:
    """The visits a day ``host``'s stored pages ask for: the sum of ``1 / interval`` over
    the intervals their last visits gave them (``next_visit - accessed_time``), none counted
    shorter than ``shortest`` seconds (a sitemap's lastmod sets ``next_visit`` to now)."""
    seconds: ColumnElement[Any]
    if conn.dialect.name == "postgresql":
        seconds = extract("epoch", PAGE.c.next_visit - PAGE.c.accessed_time)
    else:
        days = func.julianday(PAGE.c.next_visit) - func.julianday(PAGE.c.accessed_time)
        seconds = days * literal(DAY)
    floor = literal(max(shortest, 1.0))
    interval = case((seconds < floor, floor), else_=seconds)
    asked = conn.execute(
        select(func.sum(literal(DAY) / interval))
        .select_from(PAGE.join(SITE, SITE.c.id == PAGE.c.site_id))
        .where(SITE.c.domain == host, PAGE.c.next_visit > PAGE.c.accessed_time)
    ).scalar()
    return float(asked or 0.0)


@dataclass
class HostBudget:
    """One claim's look at a host's budget: ``take`` before, ``spent`` after.
    ``pictures``: the claim is of pictures."""

    host: str
    rule: DueRule
    budget: int
    pictures: bool = False
    today: BudgetRow | None = None

    def take(self, conn: Connection, wanted: int) -> int:
        """Lock the host's row; how many of ``wanted`` may still be claimed today."""
        day = self.rule.now.date()
        value = meta.lock(conn, budget_key(self.host), BudgetRow(day).value())
        stored = read_budget(value)
        if stored is None:
            logger.warning("%s: its revisit budget reads %r; spent for today", self.host, value)
            self.today = BudgetRow(day, self.budget, 0, None)
            self.spent(conn, 0)
        elif stored.day != day:
            self.today = BudgetRow(day, 0, 0, self._fitted(conn, stored))
            self.spent(conn, 0)
        else:
            self.today = stored
        return revisits_allowed(self.budget, self.today.spent, wanted)

    def _fitted(self, conn: Connection, last: BudgetRow) -> float | None:
        """The price for today from the last day the host was claimed from."""
        if self.rule.mode != MODE_DUE or last.day is None or last.day == date.min:
            return last.price
        floor = default_price(self.rule.min_interval)
        price = last.price or floor
        asked = asked_per_day(conn, self.host, self.rule.shortest)
        fitted = fit_price(price, asked + last.pictures, self.budget, last.spent, floor=floor)
        if fitted != price:
            logger.debug(
                "%s: revisit price %.3g -> %.3g days^2 (its pages ask %.0f visits a day, "
                "%d pictures and %d visits claimed of %d on %s)", self.host, price / DAY**2,
                fitted / DAY**2, asked, last.pictures, last.spent, self.budget, last.day,
            )  # fmt: skip
        return fitted

    def spent(self, conn: Connection, claimed: int) -> None:
        """``claimed`` more were claimed in this transaction."""
        assert self.today is not None, "take first"
        t = self.today
        pictures = t.pictures + (claimed if self.pictures else 0)
        self.today = BudgetRow(t.day, t.spent + claimed, pictures, t.price)
        meta.write(conn, budget_key(self.host), self.today.value())
