"""The limits a crawler run reached, and its web archive's totals, kept in ``crawl_limit``
for the crawl report.

A hostile or simply huge web makes the crawler stop short somewhere, on purpose: a budget
spent, a robots.txt check refused unchecked, headers cut off, a sitemap cut at its cap, a
render's requests refused, the browser switched off. Each is a stat of the run; the stats
named by ``LIMIT_STATS`` are written to crawldb when the run ends, one row per stat, so
that ``scrapy report`` can say which limits the crawl met without the run's log.
"""

from __future__ import annotations

import socket
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Connection, delete, insert

from govsi.store.schema import CRAWL_LIMIT

__all__ = ["LIMIT_STATS", "limits_of", "record_limits", "run_name"]

# Stats (exact names, or prefixes ending in "/") that say a limit was reached.
LIMIT_STATS = (
    "govsi/budget/",
    "govsi/traps/",
    "govsi/robots/refused/",
    "govsi/robots/crawl_delay_too_long",
    "govsi/fetch/header_limit/",
    "govsi/sitemaps/stopped/",
    "govsi/render/browser/refused/",
    "govsi/render/disabled",
    "govsi/guard/hosts_refused",
    "govsi/guard/proxy_refused",
    "govsi/url_too_long",
    "govsi/links/over_limit",
    "govsi/pages/parse_cut",
    "govsi/pages/read_failed",
    "govsi/frontier/host_unavailable",
    "govsi/reactor/max_stall_seconds",
    "govsi/reactor/stalls_over_warn",
    # Not a limit: what the run wrote to its WARC archive (files, bytes, records by type,
    # bytes revisits saved), for the report's totals.
    "govsi/warc/",
)


def limits_of(stats: Mapping[str, Any]) -> dict[str, float]:
    """The run's stats that ``LIMIT_STATS`` names, with a value above 0."""
    found: dict[str, float] = {}
    for name, value in stats.items():
        if not isinstance(value, int | float) or isinstance(value, bool) or value <= 0:
            continue
        if any(name == s or (s.endswith("/") and name.startswith(s)) for s in LIMIT_STATS):
            found[name] = float(value)
    return found


def run_name(started: float, pid: int) -> str:
    """A run's name in ``crawl_limit``: the machine, the process and when it started."""
    return f"{socket.gethostname()}:{pid}:{started:.0f}"


def record_limits(conn: Connection, run: str, limits: Mapping[str, float]) -> None:
    """``run``'s rows in ``crawl_limit`` become ``limits`` (written again, never added)."""
    conn.execute(delete(CRAWL_LIMIT).where(CRAWL_LIMIT.c.run == run))
    if limits:
        now = datetime.now(UTC).replace(tzinfo=None)
        rows = [{"run": run, "name": k, "value": v, "recorded_at": now} for k, v in limits.items()]
        conn.execute(insert(CRAWL_LIMIT), rows)
