"""How long a crawldb write (``deferToThread``) waits behind slow DNS lookups.

A zone whose nameserver is slow or dead is simulated by a ``getaddrinfo`` /
``gethostbyname`` that sleeps ``--delay`` seconds for every name under it. ``--lookups``
names are resolved at once, then one job is queued in the reactor's thread pool (where
crawldb flushes, address pins and lease rounds run) and its wait is measured, with
Scrapy's ``CachingThreadedResolver`` (its default; lookups in the reactor's pool of
``REACTOR_THREADPOOL_MAXSIZE`` = 10 threads) and with govsi's ``PooledResolver``
(``DNS_THREADS`` threads of its own). Also reported: the threads each one started.

    PYTHONPATH=. python -m bench.dns_starvation                 # 50 lookups of 2 s
    PYTHONPATH=. python -m bench.dns_starvation --lookups 10000 --delay 30
"""

from __future__ import annotations

import argparse
import json
import socket
import threading
import time
from typing import Any

DEAD = ".mrtva.gov.si"


def _slow(real: Any, delay: float) -> Any:
    def lookup(host: Any, *args: Any, **kwargs: Any) -> Any:
        if str(host).endswith(DEAD):
            time.sleep(delay)
            raise socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution")
        return real(host, *args, **kwargs)

    return lookup


def run(resolver_name: str, lookups: int, delay: float, threads: int) -> dict[str, Any]:
    from twisted.internet import reactor
    from twisted.internet.threads import deferToThread

    reactor.getThreadPool().adjustPoolsize(maxthreads=10)  # Scrapy's default
    if resolver_name == "scrapy":
        from scrapy.resolver import CachingThreadedResolver

        resolver: Any = CachingThreadedResolver(reactor, 0, 60.0)
        resolver.install_on_reactor()
    else:
        from govsi.net.dns import PooledResolver

        resolver = PooledResolver(reactor, threads, 60.0)
        resolver.install_on_reactor()
    result: dict[str, Any] = {"resolver": resolver_name, "lookups": lookups, "delay_s": delay}
    before = threading.active_count()

    def start() -> None:
        for i in range(lookups):
            reactor.resolve(f"s{i}{DEAD}").addErrback(lambda _: None)
        asked = time.monotonic()

        def written(_: Any) -> None:
            result["write_wait_s"] = round(time.monotonic() - asked, 3)
            result["threads_started"] = threading.active_count() - before
            reactor.stop()

        deferToThread(lambda: None).addCallback(written)

    reactor.callWhenRunning(start)
    reactor.run()
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--resolver", choices=["scrapy", "govsi"], default=None)
    parser.add_argument("--lookups", type=int, default=50)
    parser.add_argument("--delay", type=float, default=2.0)
    parser.add_argument("--threads", type=int, default=12, help="DNS_THREADS")
    args = parser.parse_args()
    if args.resolver is None:  # each in a process of its own: one reactor per process
        import subprocess
        import sys

        for name in ("scrapy", "govsi"):
            cmd = [sys.executable, "-m", "bench.dns_starvation", "--resolver", name,
                   "--lookups", str(args.lookups), "--delay", str(args.delay),
                   "--threads", str(args.threads)]  # fmt: skip
            subprocess.run(cmd, check=True)
        return
    socket.getaddrinfo = _slow(socket.getaddrinfo, args.delay)  # type: ignore[assignment]
    socket.gethostbyname = _slow(socket.gethostbyname, args.delay)  # type: ignore[assignment]
    print(json.dumps(run(args.resolver, args.lookups, args.delay, args.threads)), flush=True)
    import os

    os._exit(0)  # lookups still sleeping in non-daemon threads must not hold the exit


if __name__ == "__main__":
    main()
