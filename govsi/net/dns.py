"""Name resolution with threads and a timeout of its own (Scrapy's ``TWISTED_DNS_RESOLVER``).

Twisted and Scrapy resolve names with blocking ``getaddrinfo`` in the reactor's shared
thread pool, where crawldb flushes, address pins and lease rounds run too: a zone whose
nameserver never answers, linked many times, held every thread and delayed the writes.
Here lookups run in at most ``DNS_THREADS`` threads of their own, and each has
``DNS_TIMEOUT`` seconds from when it was asked: a lookup not answered by then fails with
the reason, and one still waiting for a thread by then is dropped without asking at all,
so a dead zone costs at most ``DNS_TIMEOUT`` and never more threads.

A failed lookup tells its receiver why through ``resolutionFailed(reason)`` when the
receiver has that method (the address guard's do), then completes with no address.
"""

from __future__ import annotations

import logging
import queue
import socket
import threading
from collections.abc import Callable, Sequence
from typing import Any, cast

from scrapy.crawler import Crawler
from twisted.internet.address import IPv4Address, IPv6Address
from twisted.internet.interfaces import (
    IAddress,
    IHostnameResolver,
    IHostResolution,
    IResolutionReceiver,
)
from zope.interface import implementer

__all__ = ["LookupThreads", "PooledResolver", "report_failure"]

logger = logging.getLogger(__name__)

_FAMILY = {
    frozenset([IPv4Address]): socket.AF_INET,
    frozenset([IPv6Address]): socket.AF_INET6,
    frozenset([IPv4Address, IPv6Address]): socket.AF_UNSPEC,
}
_TYPE_OF = {socket.AF_INET: IPv4Address, socket.AF_INET6: IPv6Address}
_SOCKET = {"TCP": socket.SOCK_STREAM, "UDP": socket.SOCK_DGRAM}


def report_failure(receiver: Any, reason: str) -> None:
    """Tell ``receiver`` why its lookup found nothing, if it wants to know."""
    failed = getattr(receiver, "resolutionFailed", None)
    if callable(failed):
        failed(reason)


class LookupThreads:
    """At most ``size`` daemon threads taking jobs from one queue: 10 000 lookups are
    10 000 queued jobs, not threads. Daemon threads, never joined: a thread blocked in
    ``getaddrinfo`` must not hold up the end of the crawl."""

    def __init__(self, size: int, name: str = "govsi-dns") -> None:
        self.size = max(1, size)
        self.name = name
        self._jobs: queue.SimpleQueue[Callable[[], None] | None] = queue.SimpleQueue()
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()
        self.pending = 0  # queued or running

    def submit(self, job: Callable[[], None]) -> None:
        with self._lock:
            if self.pending >= len(self._threads) and len(self._threads) < self.size:
                thread = threading.Thread(
                    target=self._work, name=f"{self.name}-{len(self._threads)}", daemon=True
                )
                thread.start()
                self._threads.append(thread)
            self.pending += 1
        self._jobs.put(job)

    @property
    def threads(self) -> int:
        return len(self._threads)

    def _work(self) -> None:
        while True:
            job = self._jobs.get()
            if job is None:
                return
            try:
                job()
            except Exception:
                logger.exception("a DNS lookup job failed")
            finally:
                with self._lock:
                    self.pending -= 1

    def stop(self) -> None:
        for _ in self._threads:
            self._jobs.put(None)


@implementer(IHostResolution)
class _Resolution:
    def __init__(self, name: str) -> None:
        self.name = name
        self.done = False

    def cancel(self) -> None:
        self.done = True


@implementer(IHostnameResolver)
class PooledResolver:
    """``getaddrinfo`` in ``LookupThreads`` of its own, each lookup failed after
    ``timeout`` seconds from when it was asked (0: no limit). Built by Scrapy from
    ``DNS_THREADS`` and ``DNS_TIMEOUT`` and installed as the reactor's name resolver."""

    def __init__(
        self,
        reactor: Any,
        threads: int,
        timeout: float,
        getaddrinfo: Callable[..., Sequence[Any]] = socket.getaddrinfo,
    ) -> None:
        self.reactor = reactor
        self.timeout = timeout
        self.threads = LookupThreads(threads)
        self._getaddrinfo = getaddrinfo

    @classmethod
    def from_crawler(cls, crawler: Crawler, reactor: Any) -> PooledResolver:
        s = crawler.settings
        return cls(reactor, s.getint("DNS_THREADS"), s.getfloat("DNS_TIMEOUT"))

    def install_on_reactor(self) -> None:
        self.reactor.installNameResolver(self)
        self.reactor.addSystemEventTrigger("during", "shutdown", self.threads.stop)

    def resolveHostName(
        self,
        resolutionReceiver: IResolutionReceiver,
        hostName: str,
        portNumber: int = 0,
        addressTypes: Sequence[type[IAddress]] | None = None,
        transportSemantics: str = "TCP",
    ) -> IHostResolution:
        receiver = cast(Any, resolutionReceiver)  # zope methods: mypy reads them as unbound
        resolution = _Resolution(hostName)
        receiver.resolutionBegan(resolution)
        family = _FAMILY.get(frozenset(addressTypes or _TYPE_OF.values()), socket.AF_UNSPEC)
        kind = _SOCKET.get(transportSemantics, socket.SOCK_STREAM)
        timer = None
        if self.timeout > 0:
            timer = self.reactor.callLater(self.timeout, self._expire, resolution, receiver)

        def lookup() -> None:
            if resolution.done:
                return  # past its time while waiting for a thread: never asked
            try:
                found = list(self._getaddrinfo(hostName, portNumber, family, kind))
                error = None
            except (OSError, UnicodeError) as e:
                found, error = [], str(e) or type(e).__name__
            self.reactor.callFromThread(self._finish, resolution, receiver, timer, found, error)

        self.threads.submit(lookup)
        return cast(IHostResolution, resolution)

    def _finish(
        self,
        resolution: _Resolution,
        receiver: Any,
        timer: Any,
        found: list[Any],
        error: str | None,
    ) -> None:
        if resolution.done:
            return
        resolution.done = True
        if timer is not None and timer.active():
            timer.cancel()
        for family, socktype, _proto, _name, sockaddr in found:
            kind = _TYPE_OF.get(family)
            if kind is not None:
                semantics = "UDP" if socktype == socket.SOCK_DGRAM else "TCP"
                receiver.addressResolved(kind(semantics, *sockaddr))
        if not found:
            report_failure(receiver, f"DNS lookup of {resolution.name} failed: {error}")
        receiver.resolutionComplete()

    def _expire(self, resolution: _Resolution, receiver: Any) -> None:
        if resolution.done:
            return
        resolution.done = True
        report_failure(
            receiver,
            f"DNS lookup of {resolution.name} not answered within {self.timeout:g} s "
            f"(DNS_TIMEOUT; {self.threads.pending} lookups pending)",
        )
        receiver.resolutionComplete()
