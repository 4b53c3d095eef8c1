"""The revisit rules as data: small terms over a stored row's columns, which Python
evaluates here (``holds``) and crawldb renders as SQL (``govsi.store.due.sql``), so that
a rule is written once (``govsi.revisit.due.DueRule``) and both sides read the same
terms (pure).

A term is SQL's: ``holds`` answers in three values (None: unknown, as a comparison with
NULL is), so a row satisfies a term here exactly when it satisfies the term's SQL. A row is
a mapping of column names to values; a picture's row lists the rows of the pages that show
it under ``SHOWING``, which ``Showing`` asks about (its ``Outer`` columns are the
picture's).
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final, Literal, TypeAlias, get_args

__all__ = [
    "COMPARE",
    "FALSE",
    "OPS",
    "SHOWING",
    "TRUE",
    "And",
    "Cmp",
    "Column",
    "Not",
    "Null",
    "Op",
    "Or",
    "Outer",
    "Showing",
    "Term",
    "holds",
]

# The columns the rules read, the same on ``page`` and ``image``.
Column = Literal[
    "next_visit", "accessed_time", "page_type_code", "revisit_claim", "revisit_claimed_at"
]
Op = Literal["<", "<=", ">", ">=", "=", "!="]
OPS: Final[tuple[Op, ...]] = get_args(Op)
# A picture's row: the rows of the pages showing it.
SHOWING: Final = "showing"
Value: TypeAlias = datetime | str


@dataclass(frozen=True, slots=True)
class Outer:
    """Inside ``Showing``: the picture's own column."""

    column: Column


@dataclass(frozen=True, slots=True)
class Null:
    """``column IS NULL``."""

    column: Column


@dataclass(frozen=True, slots=True)
class Cmp:
    """``column <op> value`` (a constant, or ``Outer``: the picture's column)."""

    column: Column
    op: Op
    value: Value | Outer


@dataclass(frozen=True, slots=True)
class Not:
    term: Term


@dataclass(frozen=True, slots=True)
class And:
    """Every term holds (none: true)."""

    terms: tuple[Term, ...]


@dataclass(frozen=True, slots=True)
class Or:
    """Some term holds (none: false)."""

    terms: tuple[Term, ...]


@dataclass(frozen=True, slots=True)
class Showing:
    """A picture's term: some page showing it satisfies ``term``."""

    term: Term


Term: TypeAlias = Null | Cmp | Not | And | Or | Showing
TRUE: Final[Term] = And(())
FALSE: Final[Term] = Or(())

# The comparisons, which work on Python values and on SQLAlchemy columns alike.
COMPARE: Final[dict[Op, Callable[[Any, Any], Any]]] = {
    "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
    "=": operator.eq, "!=": operator.ne,
}  # fmt: skip
Row: TypeAlias = Mapping[str, object]


def holds(term: Term, row: Row, outer: Row | None = None) -> bool | None:
    """Whether ``row`` satisfies ``term``: True, False, or None (unknown, which a WHERE
    clause takes as false). ``outer``: the picture's row, inside ``Showing``."""
    if isinstance(term, Null):
        return row.get(term.column) is None
    if isinstance(term, Cmp):
        left = row.get(term.column)
        value = term.value
        right = (outer or {}).get(value.column) if isinstance(value, Outer) else value
        if left is None or right is None:
            return None
        return bool(COMPARE[term.op](left, right))
    if isinstance(term, Not):
        inner = holds(term.term, row, outer)
        return None if inner is None else not inner
    if isinstance(term, And):
        answers = [holds(t, row, outer) for t in term.terms]
        if False in answers:
            return False
        return None if None in answers else True
    if isinstance(term, Or):
        answers = [holds(t, row, outer) for t in term.terms]
        if True in answers:
            return True
        return None if None in answers else False
    pages: Sequence[Row] = row.get(SHOWING) or ()  # type: ignore[assignment]
    # EXISTS: true when a page satisfies the term, else false (never unknown).
    return any(holds(term.term, page, row) is True for page in pages)
