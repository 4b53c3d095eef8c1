"""Matching a path against one crawler's merged robots.txt rules, at a bounded cost.

``Policy`` files the rules by their literal prefix and decides as robots.cc does: the
longest matching pattern wins, Allow on a tie. Pure; ``govsi.robots.rules`` builds it.
A path over ``MAX_PATH_CHARS`` is disallowed unchecked, and a check that would spend more
than ``MAX_CHECK_WORK`` on wildcard rules is disallowed (fail closed, one warning per
robots.txt and user agent); both refusals are counted in ``RobotsRules.refusals``. Within
the limits, decisions are exactly robots.cc's. Why these bounds, with the measurements:
docs/politeness.md, "What a robots.txt check costs".
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import NamedTuple

logger = logging.getLogger(__name__)

# A longer path (path, params and query) is disallowed unchecked. Far above the crawl's
# MAX_URL_LENGTH (2000), so only URLs that skipped that cap (a browser's sub-resources)
# can reach it; it bounds the str.find work a check does per wildcard rule. About twice
# Google's line cut-off too, whose conformance cases check paths of 16 673 characters.
MAX_PATH_CHARS = 32 * 1024
# The work one check may do on wildcard rules, in characters scanned by str.find (about
# 1.7 ns each at worst) plus a charge per rule and per piece for the Python around the
# scan (about 1 us for a rule of three pieces): at most about 7 ms. Enough for some 5000
# wildcard rules applying to a 100-character path, 1700 to a 2000-character one; a check
# that needs more fails closed (disallowed), and so, without scanning, does every later
# check of that policy whose bound (from the rules it would try) is over it.
MAX_CHECK_WORK = 4_000_000
_RULE_WORK = 384
_PIECE_WORK = 128


class _Rule(NamedTuple):
    rank: int  # position in deciding order: longer first, Allow before Disallow
    is_allow: bool
    # The pattern split at "*": the first piece is the literal prefix a path must start
    # with (the key the rule is filed under), the rest must follow in order.
    pieces: tuple[str, ...]
    anchored: bool  # a final "$": the last piece ends the path
    # What checking it costs besides scanning the path once (0 for a rule without "*",
    # whose check is a length comparison), at most: counted against MAX_CHECK_WORK.
    work: int


def _rule(rank: int, is_allow: bool, pattern: str) -> _Rule:
    anchored = pattern.endswith("$")
    split = (pattern[:-1] if anchored else pattern).split("*")
    if len(split) == 1:
        return _Rule(rank, is_allow, tuple(split), anchored, 0)
    # "**" is "*": an empty middle piece would cost a loop turn and match anything.
    pieces = (split[0], *(piece for piece in split[1:-1] if piece), split[-1])
    return _Rule(rank, is_allow, pieces, anchored, _RULE_WORK + _PIECE_WORK * (len(pieces) - 2))


def _matches(rule: _Rule, path: str) -> bool:
    """robots.cc Matches for a path already known to start with the rule's prefix.
    Matching each later piece at its leftmost place is always right for a glob of "*"
    only, so this is a few ``str.find`` calls: linear in the path, no backtracking."""
    pieces = rule.pieces
    if len(pieces) == 1:
        return not rule.anchored or len(path) == len(pieces[0])
    pos = len(pieces[0])
    for piece in pieces[1:-1]:  # never empty (see _rule)
        found = path.find(piece, pos)
        if found < 0:
            return False
        pos = found + len(piece)
    last = pieces[-1]
    if rule.anchored:
        return len(path) - len(last) >= pos and path.endswith(last)
    return not last or path.find(last, pos) >= 0


class Policy:
    """The merged rules of the groups that apply to one crawler, filed by the literal
    prefix each starts with, so that a path is checked only against the rules whose
    prefix it starts with, best first, stopping at the first match. Nothing is compiled.

    A rule without "*" costs O(1); one with "*" costs a scan of the path. The work spent
    on the latter is counted: past MAX_CHECK_WORK the path is disallowed (fail closed,
    one warning per policy), and from then on a check whose bound is over the limit is
    disallowed without scanning."""

    __slots__ = ("_bounds", "_by_prefix", "_lengths", "_overrun", "_source", "crawl_delay")

    def __init__(
        self, rules: Iterable[tuple[bool, str]], crawl_delay: float | None, source: str = ""
    ) -> None:
        rules = {variant for rule in rules for variant in _with_index_variant(rule)}
        # An empty pattern matches with priority 0, which never decides anything in
        # robots.cc (a rule must match with priority > 0 to count), so it is dropped.
        ordered = sorted((r for r in rules if r[1]), key=lambda r: (-len(r[1]), not r[0]))
        self._by_prefix: dict[str, list[_Rule]] = {}
        # Per prefix: (wildcard rules, their summed work), for the bound after an overrun.
        self._bounds: dict[str, tuple[int, int]] = {}
        for rank, (is_allow, pattern) in enumerate(ordered):
            rule = _rule(rank, is_allow, pattern)
            prefix = rule.pieces[0]
            self._by_prefix.setdefault(prefix, []).append(rule)  # ranks ascending
            if rule.work:
                count, work = self._bounds.get(prefix, (0, 0))
                self._bounds[prefix] = (count + 1, work + rule.work)
        self._lengths = sorted({len(prefix) for prefix in self._by_prefix})
        self._overrun = False
        self._source = source
        self.crawl_delay = crawl_delay

    def allows(self, path: str) -> bool | None:
        """The decision for ``path``, or None if deciding needs more than MAX_CHECK_WORK."""
        if self._overrun and self._bound(path) > MAX_CHECK_WORK:
            return None
        best: _Rule | None = None
        size = len(path)
        budget = MAX_CHECK_WORK  # a local: this loop is the hot path of every request
        # Each middle piece matched moves on by at least one character: a rule of many
        # pieces costs at most one turn per character of the path.
        cap = _RULE_WORK + _PIECE_WORK * (size + 1)
        for length in self._lengths:
            if length > size:
                break
            for rule in self._by_prefix.get(path[:length], ()):
                if best is not None and rule.rank >= best.rank:
                    break
                work = rule.work
                if work:
                    budget -= (work if work < cap else cap) + size
                    if budget < 0:
                        self._note_overrun(path)
                        return None
                if _matches(rule, path):
                    best = rule
                    break
        return best is None or best.is_allow

    def _bound(self, path: str) -> int:
        """At least the work allows() would count for ``path``, without scanning it."""
        bound = 0
        size = len(path)
        cap = _RULE_WORK + _PIECE_WORK * (size + 1)
        for length in self._lengths:
            if length > size:
                break
            count, work = self._bounds.get(path[:length], (0, 0))
            bound += min(work, count * cap) + count * size
        return bound

    def _note_overrun(self, path: str) -> None:
        if not self._overrun:
            self._overrun = True
            logger.warning(
                "robots.txt %s: checking a %d-character path against its wildcard rules "
                "needs more than %d units of work; such paths are disallowed (fail closed)",
                self._source or "(no URL)", len(path), MAX_CHECK_WORK,
            )  # fmt: skip


def _with_index_variant(rule: tuple[bool, str]) -> Iterable[tuple[bool, str]]:
    # robots.cc: an Allow ending in "/index.htm..." also allows the bare directory ("/dir/$").
    # robots.cc tries it only when the full pattern fails, but the full pattern is longer,
    # so adding it unconditionally gives the same decisions.
    yield rule
    is_allow, pattern = rule
    slash = pattern.rfind("/")
    if is_allow and slash >= 0 and pattern.startswith("/index.htm", slash):
        yield (True, pattern[: slash + 1] + "$")
