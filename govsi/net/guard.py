"""The private-address guard: the crawler never connects to an address inside the
operator's own networks unless ``ALLOWED_PRIVATE_NETWORKS`` lets it.

Scope is decided on host names, and a ``.gov.si`` name can resolve anywhere: to
``127.0.0.1``, to an intranet behind split-horizon DNS, to ``169.254.169.254`` (cloud
metadata). The check is made on the addresses a connection is about to use, inside the
reactor's name resolver, so a name that answers differently the second time (DNS
rebinding) gains nothing: the addresses checked are the ones connected to. Every
connection Scrapy's HTTP handler opens (pages, images, documents, robots.txt, sitemaps,
redirect targets, and what rendered pages ask for, which the crawler fetches for the
browser) resolves its host through ``reactor.nameResolver``, IP literals included.

- ``address_refusal``: pure; why an address is refused (its kind) or None.
- ``GuardedResolver``: an ``IHostnameResolver`` that passes on only allowed addresses.
- ``AddressGuard``: the extension that installs it for the crawl, remembers which hosts
  were refused and why (one log line per host), and counts refusals in the stats. It
  refuses to start with an untrusted proxy configured (``govsi.net.proxies``), and is
  asserted again before every request (``check_request``, from the downloader
  middleware): Scrapy installs its resolver after the spider opens under some reactors.
- ``AddressRefused``: what a refused request fails with, the reason as its message;
  neither an ``OSError`` nor a connection error, so it is never retried.
"""

from __future__ import annotations

import ipaddress
import logging
import os
from collections.abc import Callable, Iterable, Sequence
from typing import Any, cast

from scrapy import signals
from scrapy.crawler import Crawler
from twisted.internet.address import IPv4Address, IPv6Address
from twisted.internet.defer import Deferred
from twisted.internet.error import DNSLookupError
from twisted.internet.interfaces import (
    IAddress,
    IHostnameResolver,
    IHostResolution,
    IResolutionReceiver,
)
from zope.interface import implementer

from govsi.net.dns import report_failure
from govsi.net.proxies import ProxyNotTrusted, proxy_variables, shown_proxy, untrusted_proxy

__all__ = ["AddressGuard", "AddressRefused", "GuardedResolver", "address_refusal",
           "parse_networks"]  # fmt: skip

logger = logging.getLogger(__name__)

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Address = ipaddress.IPv4Address | ipaddress.IPv6Address

_RFC1918 = tuple(ipaddress.ip_network(n) for n in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"))
_SHARED = ipaddress.ip_network("100.64.0.0/10")  # carrier-grade NAT, RFC 6598
# IPv6 prefixes whose low 32 bits are an IPv4 address packets end up at: NAT64 (RFC 6052,
# RFC 8215), IPv4-compatible (RFC 4291 2.5.5.1, deprecated but still routed by some
# stacks) and IPv4-translated (RFC 2765, ::ffff:0:a.b.c.d).
_LOW32 = tuple(
    ipaddress.ip_network(n) for n in ("64:ff9b::/96", "64:ff9b:1::/48", "::/96", "::ffff:0:0:0/96")
)
# :: and ::1 are themselves (unspecified, loopback), not IPv4-compatible addresses.
_NOT_COMPATIBLE = ipaddress.ip_network("::/127")


class AddressRefused(Exception):
    """A request the address guard did not let out; the message says why."""


def parse_networks(values: Iterable[str]) -> tuple[Network, ...]:
    """The networks of ``ALLOWED_PRIVATE_NETWORKS``; a value that is not a network
    stops the crawl at start with the value named, rather than guarding less."""
    networks: list[Network] = []
    for value in values:
        value = value.strip()
        if not value:
            continue
        try:
            networks.append(ipaddress.ip_network(value, strict=False))
        except ValueError as e:
            raise ValueError(f"ALLOWED_PRIVATE_NETWORKS: {value!r} is not a network ({e})") from e
    return tuple(networks)


def _parse(ip: str) -> Address | None:
    try:
        return ipaddress.ip_address(ip.strip().strip("[]"))
    except ValueError:
        return None


def _embedded_v4(address: ipaddress.IPv6Address) -> list[ipaddress.IPv4Address]:
    """The IPv4 addresses an IPv6 one carries: mapped, compatible, translated, NAT64,
    6to4, or Teredo's server and client."""
    if address.ipv4_mapped is not None:
        return [address.ipv4_mapped]
    if address.sixtofour is not None:
        return [address.sixtofour]
    if address.teredo is not None:
        return list(address.teredo)
    if address not in _NOT_COMPATIBLE and any(address in net for net in _LOW32):
        return [ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)]
    return []


def _kind(address: Address) -> str | None:
    if address.is_unspecified:
        return "unspecified"
    if address.is_loopback:
        return "loopback"
    if address.is_link_local:
        return "link-local"
    if address.is_multicast:
        return "multicast"
    if isinstance(address, ipaddress.IPv4Address):
        if any(address in net for net in _RFC1918):
            return "private"
        if address in _SHARED:
            return "shared"
    elif address.is_site_local or address in ipaddress.IPv6Network("fc00::/7"):
        return "private"
    # Documentation, benchmarking, reserved and "this network" ranges: nothing a public
    # web site lives on.
    return None if address.is_global else "reserved"


def address_refusal(ip: str, allowed: Sequence[Network] = ()) -> str | None:
    """The kind of address ``ip`` is when the crawler must not connect to it ("loopback",
    "private", "link-local", "shared", "multicast", "unspecified", "reserved", "invalid"),
    or None when it may. An IPv6 address carrying an IPv4 one (mapped, compatible,
    translated, NAT64, 6to4, Teredo) is refused when either is not public, unless one of
    them is in an ``allowed`` network: those are never refused."""
    address = _parse(ip)
    if address is None:
        return "invalid"
    candidates: list[Address] = [address]
    if isinstance(address, ipaddress.IPv6Address):
        candidates += _embedded_v4(address)
    if any(a in net for a in candidates for net in allowed if a.version == net.version):
        return None
    # The embedded IPv4 address first: it says where the packets end up.
    for candidate in reversed(candidates):
        kind = _kind(candidate)
        if kind is not None:
            return kind
    return None


@implementer(IResolutionReceiver)
class _Filter:
    def __init__(self, receiver: Any, host: str, admit: Callable[[str, str], bool]) -> None:
        self._receiver = receiver
        self._host = host
        self._admit = admit

    def resolutionBegan(self, resolution: IHostResolution) -> None:
        self._receiver.resolutionBegan(resolution)

    def addressResolved(self, address: IAddress) -> None:
        ip = getattr(address, "host", None)
        if isinstance(ip, str) and self._admit(self._host, ip):
            self._receiver.addressResolved(address)

    def resolutionFailed(self, reason: str) -> None:
        report_failure(self._receiver, reason)

    def resolutionComplete(self) -> None:
        self._receiver.resolutionComplete()


@implementer(IResolutionReceiver)
class _Lookup:
    """The first address of a host, or why there is none, as a Deferred."""

    def __init__(self, host: str, guard: AddressGuard) -> None:
        self.host = host
        self.guard = guard
        self.addresses: list[str] = []
        self.failure: str | None = None
        self.deferred: Deferred[str] = Deferred()

    def resolutionBegan(self, resolution: IHostResolution) -> None:
        pass

    def addressResolved(self, address: IAddress) -> None:
        ip = getattr(address, "host", None)
        if isinstance(ip, str):
            self.addresses.append(ip)

    def resolutionFailed(self, reason: str) -> None:
        self.failure = reason

    def resolutionComplete(self) -> None:
        if self.addresses:
            self.deferred.callback(self.addresses[0])
            return
        refused = self.guard.reason(self.host)
        if refused is not None:
            self.deferred.errback(AddressRefused(refused))
        else:
            reason = self.failure or f"DNS lookup of {self.host} found no address"
            self.deferred.errback(DNSLookupError(reason))


@implementer(IHostResolution)
class _Pinned:
    def __init__(self, name: str) -> None:
        self.name = name

    def cancel(self) -> None:
        pass


def _host_key(host: str) -> str:
    return host.lower().rstrip(".")


@implementer(IHostnameResolver)
class GuardedResolver:
    """Passes on only the addresses ``admit(host, ip)`` allows; a host left with none
    fails to resolve, so no connection is attempted. A host in ``pins`` resolves to its
    pinned address alone, without asking DNS: the one address the whole crawl uses for
    it (its politeness and its leases are per address)."""

    def __init__(
        self, inner: Any, admit: Callable[[str, str], bool], pins: dict[str, str] | None = None
    ) -> None:
        self.inner = inner
        self.admit = admit
        self.pins = pins if pins is not None else {}

    def resolveHostName(
        self,
        resolutionReceiver: IResolutionReceiver,
        hostName: str,
        portNumber: int = 0,
        addressTypes: Sequence[type[IAddress]] | None = None,
        transportSemantics: str = "TCP",
    ) -> IHostResolution:
        pinned = self.pins.get(_host_key(hostName))
        if pinned is not None:
            resolution = _Pinned(hostName)
            # zope.interface methods, which mypy reads without their instance: Any.
            receiving = cast(Any, resolutionReceiver)
            receiving.resolutionBegan(resolution)
            kind = IPv6Address if ":" in pinned else IPv4Address
            wanted = addressTypes is None or kind in addressTypes
            if wanted and self.admit(hostName, pinned):
                receiving.addressResolved(kind("TCP", pinned, portNumber))
            receiving.resolutionComplete()
            return cast(IHostResolution, resolution)
        receiver = _Filter(resolutionReceiver, hostName, self.admit)
        # The inner resolver is reached through its zope.interface: Any to mypy.
        resolving: IHostResolution = self.inner.resolveHostName(
            receiver, hostName, portNumber, addressTypes, transportSemantics
        )
        return resolving


class AddressGuard:
    """Scrapy extension: the guard for the crawl, ``crawler.get_extension(AddressGuard)``
    for the components that record why a host was not fetched."""

    def __init__(
        self, allowed: tuple[Network, ...], stats: Any = None, proxy_trusted: bool = False
    ) -> None:
        self.allowed = allowed
        self.stats = stats
        self.proxy_trusted = proxy_trusted
        self.refused: dict[str, str] = {}
        self.pins: dict[str, str] = {}
        self._previous: Any = None
        self._reactor: Any = None
        self._resolver: GuardedResolver | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> AddressGuard:
        s = crawler.settings
        trusted = s.getbool("PROXY_TRUSTED")
        names = proxy_variables(os.environ) if s.getbool("HTTPPROXY_ENABLED") else []
        if names and not trusted:
            # Before anything is fetched: every request would go through the proxy, which
            # resolves names itself, where the guard never sees the address.
            message = untrusted_proxy(names)
            logger.error("%s", message)
            raise ProxyNotTrusted(message)
        guard = cls(parse_networks(s.getlist("ALLOWED_PRIVATE_NETWORKS")), crawler.stats, trusted)
        # Opening the spider comes after Scrapy installed the configured resolver and
        # before the engine sends any request.
        crawler.signals.connect(guard._opened, signal=signals.spider_opened)
        crawler.signals.connect(guard.uninstall, signal=signals.engine_stopped)
        return guard

    def _opened(self) -> None:
        from twisted.internet import reactor

        self.install(reactor)

    def install(self, reactor: Any) -> None:
        if self._reactor is None:
            self._reactor = reactor
            self._resolver = GuardedResolver(reactor.nameResolver, self.admit, self.pins)
            self._previous = reactor.installNameResolver(self._resolver)

    def uninstall(self) -> None:
        if self._reactor is not None:
            self._reactor.installNameResolver(self._previous)
            self._reactor = None
            self._resolver = None

    def ensure_installed(self, reactor: Any = None) -> None:
        """Make the guard the reactor's name resolver again if something replaced it
        (Scrapy installs ``TWISTED_DNS_RESOLVER`` after the spider opens under a
        non-asyncio reactor): it then guards the replacement. Raises ``AddressRefused``
        when it cannot, so that nothing goes out unguarded."""
        if self._reactor is None:
            if reactor is None:
                from twisted.internet import reactor
            self.install(reactor)
        current = self._reactor.nameResolver
        if current is self._resolver:
            return
        logger.info("the reactor's name resolver was replaced (by %s) after the address "
                    "guard was installed; guarding it again", type(current).__name__)  # fmt: skip
        if self.stats is not None:
            self.stats.inc_value("govsi/guard/reinstalled")
        self._resolver = GuardedResolver(current, self.admit, self.pins)
        self._reactor.installNameResolver(self._resolver)
        if self._reactor.nameResolver is not self._resolver:
            logger.error("address guard: the reactor's name resolver cannot be replaced; "
                         "nothing is fetched")  # fmt: skip
            raise AddressRefused("address guard: not installed on the reactor")

    def check_request(self, proxy: str | None) -> None:
        """Before a request goes out: raises ``AddressRefused`` when it would go through
        an untrusted proxy, or when the guard is not the resolver and cannot be again."""
        if proxy and not self.proxy_trusted:
            if self.stats is not None:
                self.stats.inc_value("govsi/guard/proxy_refused")
            raise AddressRefused(
                f"address guard: not fetched through the proxy {shown_proxy(proxy)} "
                "(a proxy resolves names itself, past the guard; PROXY_TRUSTED is off)"
            )
        self.ensure_installed()

    def lookup(self, host: str) -> Deferred[str]:
        """``host``'s first IPv4 address through the guard; fails with ``AddressRefused``
        (the guard's reason) or ``DNSLookupError`` (the resolver's reason)."""
        self.ensure_installed()
        receiver = _Lookup(host, self)
        self._reactor.nameResolver.resolveHostName(receiver, host, 0, [IPv4Address])
        return receiver.deferred

    def admit(self, host: str, ip: str) -> bool:
        kind = address_refusal(ip, self.allowed)
        if kind is None:
            return True
        if self.stats is not None:
            self.stats.inc_value(f"govsi/guard/refused/{kind}")
        host = _host_key(host)
        if host not in self.refused:
            self.refused[host] = (
                f"address guard: {host} resolves to {ip}, a {kind} address "
                "(not in ALLOWED_PRIVATE_NETWORKS)"
            )
            if self.stats is not None:
                self.stats.inc_value("govsi/guard/hosts_refused")
            logger.warning("%s; nothing of it is fetched", self.refused[host])
        return False

    def pin(self, host: str, ip: str) -> None:
        """From now on ``host`` is connected to at ``ip`` only (still guarded)."""
        self.pins[_host_key(host)] = ip

    def pinned(self, host: str) -> str | None:
        """The address ``host`` is connected to, once pinned (the address every request
        to it went to since)."""
        return self.pins.get(_host_key(host))

    def reason(self, host: str) -> str | None:
        """Why connections to ``host`` were refused, if they were."""
        return self.refused.get(_host_key(host))
