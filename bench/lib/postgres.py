"""A throwaway PostgreSQL for a benchmark: the test suite's cluster
(``testkit/pgcluster.py``), started, or the benchmark ends with status 2."""

from __future__ import annotations

import sys

from testkit.pgcluster import PgCluster, find_pg_bin


def start_postgres() -> PgCluster:
    """A started cluster (stop it with ``.stop()``); exits with status 2 when the server's
    binaries are not on this machine."""
    bin_dir = find_pg_bin()
    if bin_dir is None:
        print("PostgreSQL server binaries not found (set PG_BIN)", file=sys.stderr)
        raise SystemExit(2)
    pg = PgCluster(bin_dir)
    pg.start()
    return pg


def postmaster_pid(pg: PgCluster) -> int | None:
    """The server's process, whose CPU (and its backends') a benchmark counts."""
    try:
        return int((pg.data / "postmaster.pid").read_text().split("\n", 1)[0])
    except (OSError, ValueError):
        return None
