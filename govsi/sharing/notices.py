"""Hearing lease notifications as they happen: PostgreSQL ``LISTEN`` on ``leases.CHANNEL``.

A hand-over used to wait for two rounds of the lease keeper (every ``LEASE_TTL / 3``
seconds): the holder learned that another worker asked for an address at its next round,
and the asker learned the address was free at its own. With notifications each learns at
once (``leases.notify`` is sent by the transaction that asks or gives back), so an address
changes hands in about the time its pending writes take.

A thread of its own holds one connection in ``LISTEN`` and hands each notice to the reactor
thread. If crawldb goes away it reconnects with a growing pause; meanwhile the keeper's
rounds go on as before, so a lost notice only costs time, never correctness.
"""

from __future__ import annotations

import contextlib
import logging
import select
import threading
from collections.abc import Callable
from typing import Any

from sqlalchemy import Engine

from govsi.sharing import leases

logger = logging.getLogger(__name__)

# Seconds between checks of the stop flag while nothing arrives, and the longest pause
# between reconnection attempts.
POLL = 1.0
MAX_PAUSE = 10.0


class LeaseNotices:
    def __init__(
        self,
        engine: Engine,
        on_notice: Callable[[str, str], None],
        call_in_reactor: Callable[..., Any] | None = None,
    ) -> None:
        self.engine = engine
        self.on_notice = on_notice
        self._call = call_in_reactor
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.received = 0

    def start(self) -> None:
        if self._call is None:
            from twisted.internet import reactor

            self._call = reactor.callFromThread
        self._thread = threading.Thread(target=self._run, name="govsi-lease-notices", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        # Not joined: that would hold the reactor thread up to POLL seconds while Scrapy
        # closes (its downloader's close races a timer then). The thread ends within POLL
        # and closes its connection; it is a daemon, so it never holds the process.
        self._stop.set()

    def _run(self) -> None:
        pause = POLL
        while not self._stop.is_set():
            try:
                self._listen()
                pause = POLL
            except Exception as e:
                first = (str(e).strip().splitlines() or [type(e).__name__])[0][:300]
                logger.info("lease notices: %s; listening again in %.0f s", first, pause)
                self._stop.wait(pause)
                pause = min(MAX_PAUSE, pause * 2)

    def _listen(self) -> None:
        raw = self.engine.raw_connection()
        broken = True
        try:
            conn = raw.dbapi_connection
            assert conn is not None
            conn.autocommit = True
            # psycopg2 cursors are context managers; the DBAPI protocol does not say so.
            with conn.cursor() as cur:  # type: ignore[attr-defined]
                cur.execute(f"LISTEN {leases.CHANNEL}")
            while not self._stop.is_set():
                ready, _, _ = select.select([conn], [], [], POLL)
                if not ready:
                    continue
                conn.poll()
                while conn.notifies:
                    notice = leases.parse_notice(conn.notifies.pop(0).payload)
                    if notice is not None:
                        self.received += 1
                        assert self._call is not None
                        self._call(self.on_notice, *notice)
            broken = False
        finally:
            with contextlib.suppress(Exception):
                if broken:
                    raw.invalidate()  # not back to the pool half-listening
                else:
                    with raw.dbapi_connection.cursor() as cur:  # type: ignore[union-attr]
                        cur.execute("UNLISTEN *")
                raw.close()
