"""Name resolution in threads of its own (govsi.net.dns): a zone whose nameserver never
answers holds at most DNS_THREADS threads, never the reactor's pool where crawldb writes
run, and its lookups fail after DNS_TIMEOUT with the reason."""

from __future__ import annotations

import queue
import socket
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from twisted.python.threadpool import ThreadPool

from govsi.net.dns import PooledResolver

THREADS = 4
TIMEOUT = 30.0
WAIT = 60.0  # seconds a test waits for a thread before it fails; never a measure of speed


class Timer:
    def __init__(self, at: float, f: Callable[..., Any], args: tuple[Any, ...]) -> None:
        self.at, self.f, self.args = at, f, args
        self.cancelled = self.called = False

    def active(self) -> bool:
        return not (self.cancelled or self.called)

    def cancel(self) -> None:
        self.cancelled = True


class Clock:
    """A fake clock for many timers (Twisted's task.Clock sorts all of them per call)."""

    def __init__(self) -> None:
        self.now = 0.0
        self.timers: list[Timer] = []

    def callLater(self, delay: float, f: Callable[..., Any], *args: Any) -> Timer:
        self.timers.append(Timer(self.now + delay, f, args))
        return self.timers[-1]

    def advance(self, seconds: float) -> None:
        self.now += seconds
        due = [t for t in self.timers if t.active() and t.at <= self.now]
        self.timers = [t for t in self.timers if t.active() and t.at > self.now]
        for timer in due:
            timer.called = True
            timer.f(*timer.args)

    def pending(self) -> list[Timer]:
        return [t for t in self.timers if t.active()]


class FakeReactor:
    """Timers on a fake clock; calls from threads run when the test drains them, as on
    the reactor thread; the shared pool is a real one, the size of the reactor's."""

    def __init__(self) -> None:
        self.clock = Clock()
        self.calls: queue.SimpleQueue[tuple[Callable[..., Any], tuple[Any, ...]]] = (
            queue.SimpleQueue()
        )
        self.pool = ThreadPool(minthreads=0, maxthreads=10, name="reactor-pool")
        self.pool.start()

    def callLater(self, delay: float, f: Callable[..., Any], *args: Any) -> Any:
        return self.clock.callLater(delay, f, *args)

    def callFromThread(self, f: Callable[..., Any], *args: Any) -> None:
        self.calls.put((f, args))

    def getThreadPool(self) -> ThreadPool:
        return self.pool

    def drain(self, n: int) -> None:
        for _ in range(n):
            f, args = self.calls.get(timeout=WAIT)
            f(*args)


class DeadZone:
    """getaddrinfo that never answers for names under ``mrtva.gov.si`` (until released),
    and answers at once for the others."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.blocked = threading.Semaphore(0)
        self.asked: list[str] = []
        self.lock = threading.Lock()

    def __call__(self, host: str, port: int, family: int = 0, kind: int = 0) -> list[Any]:
        with self.lock:
            self.asked.append(host)
        if host.endswith(".mrtva.gov.si"):
            self.blocked.release()
            self.release.wait()
            raise socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution")
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("193.2.1.66", port))]


class Receiver:
    def __init__(self) -> None:
        self.addresses: list[str] = []
        self.failure: str | None = None
        self.complete = False

    def resolutionBegan(self, resolution: Any) -> None:
        pass

    def addressResolved(self, address: Any) -> None:
        self.addresses.append(address.host)

    def resolutionFailed(self, reason: str) -> None:
        self.failure = reason

    def resolutionComplete(self) -> None:
        self.complete = True


@pytest.fixture
def setup() -> Iterator[tuple[FakeReactor, DeadZone, PooledResolver]]:
    reactor, zone = FakeReactor(), DeadZone()
    resolver = PooledResolver(reactor, THREADS, TIMEOUT, getaddrinfo=zone)
    yield reactor, zone, resolver
    zone.release.set()
    resolver.threads.stop()
    reactor.pool.stop()


def test_a_dead_zone_never_holds_the_pool_crawldb_writes_in(
    setup: tuple[FakeReactor, DeadZone, PooledResolver],
) -> None:
    reactor, zone, resolver = setup
    receivers = [Receiver() for _ in range(50)]
    for i, receiver in enumerate(receivers):
        resolver.resolveHostName(receiver, f"s{i}.mrtva.gov.si", 80)
    for _ in range(THREADS):
        assert zone.blocked.acquire(timeout=WAIT)  # every DNS thread is stuck
    # A crawldb flush in the reactor's pool (deferToThread) runs meanwhile.
    flushed = threading.Event()
    reactor.pool.callInThread(flushed.set)
    assert flushed.wait(WAIT)
    assert not zone.release.is_set() and resolver.threads.threads == THREADS
    assert len(zone.asked) == THREADS  # the rest wait in the queue, not in threads


def test_lookups_past_their_time_fail_with_the_reason_and_the_queue_drains_unasked(
    setup: tuple[FakeReactor, DeadZone, PooledResolver],
) -> None:
    reactor, zone, resolver = setup
    receivers = [Receiver() for _ in range(10_000)]  # one page linking 10 000 subdomains
    for i, receiver in enumerate(receivers):
        resolver.resolveHostName(receiver, f"s{i}.mrtva.gov.si", 80)
    for _ in range(THREADS):
        assert zone.blocked.acquire(timeout=WAIT)
    assert resolver.threads.threads == THREADS
    reactor.clock.advance(TIMEOUT)
    assert all(r.complete and not r.addresses for r in receivers)
    assert receivers[-1].failure == (
        "DNS lookup of s9999.mrtva.gov.si not answered within 30 s (DNS_TIMEOUT; "
        "10000 lookups pending)"
    )
    # A live name asked now waits behind the dropped ones, which never reach getaddrinfo.
    live = Receiver()
    resolver.resolveHostName(live, "www.gov.si", 443)
    zone.release.set()
    reactor.drain(THREADS + 1)  # the stuck lookups' late answers (ignored), and the live one
    assert live.complete and live.addresses == ["193.2.1.66"] and live.failure is None
    assert len(zone.asked) == THREADS + 1


def test_an_answer_in_time_and_a_name_that_does_not_exist(
    setup: tuple[FakeReactor, DeadZone, PooledResolver],
) -> None:
    reactor, zone, resolver = setup
    ok, missing = Receiver(), Receiver()
    resolver.resolveHostName(ok, "www.gov.si", 80)
    reactor.drain(1)
    assert ok.complete and ok.addresses == ["193.2.1.66"]
    assert not reactor.clock.pending()  # its timer cancelled
    zone.release.set()
    resolver.resolveHostName(missing, "x.mrtva.gov.si", 80)
    reactor.drain(1)
    assert missing.complete and missing.addresses == []
    assert missing.failure is not None
    assert missing.failure.startswith("DNS lookup of x.mrtva.gov.si failed: ")
