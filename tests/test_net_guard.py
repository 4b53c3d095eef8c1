"""The private-address guard (govsi.net.guard): which addresses are refused, what the allowed
networks let through, and that the resolver passes on only allowed addresses."""

from __future__ import annotations

import logging
import re
from collections import Counter
from typing import Any

import pytest
from twisted.internet.address import IPv4Address, IPv6Address
from twisted.internet.error import DNSLookupError

from govsi.net.guard import (
    AddressGuard,
    AddressRefused,
    GuardedResolver,
    address_refusal,
    parse_networks,
)
from govsi.net.proxies import ProxyNotTrusted, proxy_variables

REFUSED = [
    ("127.0.0.1", "loopback"),
    ("127.255.3.4", "loopback"),
    ("10.1.2.3", "private"),
    ("172.16.0.1", "private"),
    ("172.31.255.254", "private"),
    ("192.168.1.1", "private"),
    ("169.254.169.254", "link-local"),  # cloud metadata
    ("100.64.0.1", "shared"),
    ("100.127.255.254", "shared"),
    ("224.0.0.1", "multicast"),
    ("239.255.255.250", "multicast"),
    ("0.0.0.0", "unspecified"),
    ("0.1.2.3", "reserved"),  # "this network"
    ("192.0.2.1", "reserved"),  # documentation
    ("198.18.0.1", "reserved"),  # benchmarking
    ("240.0.0.1", "reserved"),
    ("255.255.255.255", "reserved"),
    ("::1", "loopback"),
    ("::", "unspecified"),
    ("fe80::1", "link-local"),
    ("fe80::1%eth0", "link-local"),
    ("fc00::1", "private"),
    ("fd12:3456::1", "private"),
    ("fec0::1", "private"),  # deprecated site-local
    ("ff02::1", "multicast"),
    ("ff0e::1", "multicast"),
    ("::ffff:127.0.0.1", "loopback"),  # IPv4-mapped
    ("::ffff:10.0.0.1", "private"),
    ("::ffff:169.254.169.254", "link-local"),
    ("2002:7f00:1::", "loopback"),  # 6to4 of 127.0.0.1
    ("2002:a00:1::", "private"),  # 6to4 of 10.0.0.1
    ("64:ff9b::a00:1", "private"),  # NAT64 of 10.0.0.1
    ("64:ff9b::7f00:1", "loopback"),
    ("2001:db8::1", "reserved"),
    ("::127.0.0.1", "loopback"),  # IPv4-compatible
    ("::a9fe:a9fe", "link-local"),  # IPv4-compatible 169.254.169.254
    ("::10.0.0.1", "private"),
    ("::ffff:0:7f00:1", "loopback"),  # IPv4-translated
    ("::ffff:0:a00:1", "private"),
    ("64:ff9b:1::a9fe:a9fe", "link-local"),  # local-use NAT64
    ("2002:a9fe:a9fe::1", "link-local"),  # 6to4 of the metadata address
    ("2001:0:4136:e378:8000:63bf:f5ff:fffe", "private"),  # Teredo, client 10.0.0.1
    ("2001:0:4136:e378:8000:63bf:3fff:fdd2", "reserved"),  # Teredo, client 192.0.2.45
    ("[::1]", "loopback"),
    ("not-an-address", "invalid"),
    ("", "invalid"),
]
PUBLIC = ["193.2.1.66", "8.8.8.8", "100.63.255.255", "100.128.0.0", "172.32.0.1",
          "2a01:260:4001::1", "::ffff:193.2.1.66", "2002:c102:142::"]  # fmt: skip


@pytest.mark.parametrize(("ip", "kind"), REFUSED)
def test_non_public_addresses_are_refused_with_their_kind(ip: str, kind: str) -> None:
    assert address_refusal(ip) == kind


@pytest.mark.parametrize("ip", PUBLIC)
def test_public_addresses_pass(ip: str) -> None:
    assert address_refusal(ip) is None


ALLOWED = parse_networks(["127.7.7.0/24", "10.20.0.0/16", "fd00:1::/64"])


@pytest.mark.parametrize(
    ("ip", "kind"),
    [
        ("127.7.7.1", None),
        ("127.7.7.255", None),
        ("::ffff:127.7.7.1", None),  # the same IPv4 address, mapped
        ("127.7.8.1", "loopback"),
        ("127.0.0.1", "loopback"),
        ("10.20.30.40", None),
        ("10.21.0.1", "private"),
        ("fd00:1::5", None),
        ("fd00:2::5", "private"),
        ("169.254.169.254", "link-local"),
        # An IPv6 form carrying an allowed IPv4 address is that address.
        ("::127.7.7.1", None),
        ("::ffff:0:a14:1e28", None),  # translated 10.20.30.40
        ("64:ff9b::a14:1e28", None),
        ("2002:a14:1e28::", None),  # 6to4
        ("2001:0:4136:e378:8000:63bf:f5eb:e1d7", None),  # Teredo, client 10.20.30.40
        ("::127.7.8.1", "loopback"),
        ("2001:0:4136:e378:8000:63bf:f5ff:fffe", "private"),  # Teredo, client 10.0.0.1
    ],
)
def test_allowed_networks_and_nothing_else_pass(ip: str, kind: str | None) -> None:
    assert address_refusal(ip, ALLOWED) == kind


def test_networks_setting_is_parsed_or_refused_clearly() -> None:
    assert [str(n) for n in parse_networks(["127.1.2.0/24", " ", "::1", "10.0.0.5/8"])] == [
        "127.1.2.0/24", "::1/128", "10.0.0.0/8",
    ]  # fmt: skip
    with pytest.raises(ValueError, match=re.escape("ALLOWED_PRIVATE_NETWORKS: '127.0.0.0/33'")):
        parse_networks(["127.0.0.0/33"])
    with pytest.raises(ValueError, match="intranet"):
        parse_networks(["intranet"])


class Receiver:
    def __init__(self) -> None:
        self.addresses: list[str] = []
        self.began = self.complete = False

    def resolutionBegan(self, resolution: Any) -> None:
        self.began = True

    def addressResolved(self, address: Any) -> None:
        self.addresses.append(address.host)

    def resolutionComplete(self) -> None:
        self.complete = True


class Inner:
    """A name resolver answering from a table, as the reactor's would."""

    def __init__(self, table: dict[str, list[str]]) -> None:
        self.table = table

    def resolveHostName(self, receiver: Any, host: str, *args: Any) -> object:
        resolution = object()
        receiver.resolutionBegan(resolution)
        for ip in self.table.get(host, []):
            receiver.addressResolved((IPv6Address if ":" in ip else IPv4Address)("TCP", ip, 80))
        receiver.resolutionComplete()
        return resolution


class Stats:
    def __init__(self) -> None:
        self.values: Counter[str] = Counter()

    def inc_value(self, key: str, count: int = 1) -> None:
        self.values[key] += count


def test_resolver_passes_on_only_allowed_addresses(caplog: pytest.LogCaptureFixture) -> None:
    stats = Stats()
    guard = AddressGuard(parse_networks(["127.7.7.0/24"]), stats)
    table = {
        "www.gov.si": ["193.2.1.66"],
        "mix.gov.si": ["10.0.0.1", "193.2.1.67", "::1"],
        "notranji.gov.si": ["169.254.169.254"],
        "sim.gov.si": ["127.7.7.3"],
    }
    resolver = GuardedResolver(Inner(table), guard.admit)
    got = {}
    with caplog.at_level(logging.WARNING, logger="govsi.net.guard"):
        for _ in range(3):  # asked again: still refused, logged once
            for host in table:
                receiver = Receiver()
                resolver.resolveHostName(receiver, host, 80)
                assert receiver.began and receiver.complete
                got[host] = receiver.addresses
    assert got == {"www.gov.si": ["193.2.1.66"], "mix.gov.si": ["193.2.1.67"],
                   "notranji.gov.si": [], "sim.gov.si": ["127.7.7.3"]}  # fmt: skip
    assert guard.reason("notranji.gov.si") == (
        "address guard: notranji.gov.si resolves to 169.254.169.254, a link-local address "
        "(not in ALLOWED_PRIVATE_NETWORKS)"
    )
    assert guard.reason("NOTRANJI.gov.si.") == guard.reason("notranji.gov.si")
    assert guard.reason("www.gov.si") is None
    assert [r.getMessage().split(";")[0] for r in caplog.records] == [
        guard.reason("mix.gov.si"), guard.reason("notranji.gov.si"),
    ]  # fmt: skip
    assert stats.values["govsi/guard/hosts_refused"] == 2
    assert stats.values["govsi/guard/refused/private"] == 3
    assert stats.values["govsi/guard/refused/loopback"] == 3
    assert stats.values["govsi/guard/refused/link-local"] == 3


class Reactor:
    def __init__(self) -> None:
        self.nameResolver: Any = Inner({"a.gov.si": ["127.0.0.1"]})

    def installNameResolver(self, resolver: Any) -> Any:
        previous, self.nameResolver = self.nameResolver, resolver
        return previous


def test_installed_on_the_reactor_and_removed_again() -> None:
    reactor = Reactor()
    original = reactor.nameResolver
    guard = AddressGuard(())
    guard.install(reactor)
    guard.install(reactor)  # once only: never a guard around a guard
    assert isinstance(reactor.nameResolver, GuardedResolver)
    assert reactor.nameResolver.inner is original
    receiver = Receiver()
    reactor.nameResolver.resolveHostName(receiver, "a.gov.si", 80)
    assert receiver.addresses == []
    guard.uninstall()
    assert reactor.nameResolver is original


def test_a_pinned_host_resolves_to_its_pinned_address_only() -> None:
    guard = AddressGuard(parse_networks(["127.7.7.0/24"]))
    resolver = GuardedResolver(Inner({"www.gov.si": ["193.2.1.67", "193.2.1.68"]}),
                               guard.admit, guard.pins)  # fmt: skip
    guard.pin("WWW.gov.si.", "193.2.1.66")
    receiver = Receiver()
    resolver.resolveHostName(receiver, "www.gov.si", 443)
    assert receiver.began and receiver.complete and receiver.addresses == ["193.2.1.66"]
    # Still guarded: a pinned private address is refused like any other.
    guard.pin("zasebni.gov.si", "10.0.0.5")
    receiver = Receiver()
    resolver.resolveHostName(receiver, "zasebni.gov.si", 80)
    assert receiver.complete and receiver.addresses == []
    assert guard.reason("zasebni.gov.si") is not None
    # Asked for IPv4 only (Twisted's simple resolver): an IPv6 pin gives nothing.
    guard.pin("v6.gov.si", "2a01:260::1")
    receiver = Receiver()
    resolver.resolveHostName(receiver, "v6.gov.si", 80, [IPv4Address])
    assert receiver.complete and receiver.addresses == []


# -- the guard asserted before every request --------------------------------------------------
def test_a_resolver_installed_over_the_guard_is_guarded_again_before_a_request() -> None:
    # Under a non-asyncio reactor Scrapy installs TWISTED_DNS_RESOLVER after the spider
    # opened, over the guard: the next request must find the guard in place again.
    reactor = Reactor()
    stats = Stats()
    guard = AddressGuard((), stats)
    guard.install(reactor)
    replacement = Inner({"localhost": ["127.0.0.1"], "www.gov.si": ["193.2.1.66"]})
    reactor.installNameResolver(replacement)
    guard.check_request(None)
    assert isinstance(reactor.nameResolver, GuardedResolver)
    assert reactor.nameResolver.inner is replacement
    for host, expected in [("localhost", []), ("www.gov.si", ["193.2.1.66"])]:
        receiver = Receiver()
        reactor.nameResolver.resolveHostName(receiver, host, 80)
        assert receiver.addresses == expected
    assert stats.values["govsi/guard/reinstalled"] == 1
    guard.check_request(None)  # in place: left alone
    assert stats.values["govsi/guard/reinstalled"] == 1


def test_a_reactor_that_keeps_its_resolver_fails_every_request_closed() -> None:
    class Stubborn(Reactor):
        installed = 0

        def installNameResolver(self, resolver: Any) -> Any:
            self.installed += 1
            if self.installed > 1:
                return self.nameResolver  # the first install only
            return super().installNameResolver(resolver)

    reactor = Stubborn()
    guard = AddressGuard(())
    guard.install(reactor)
    reactor.nameResolver = Inner({})
    with pytest.raises(AddressRefused, match="not installed"):
        guard.check_request(None)


def test_a_request_through_an_untrusted_proxy_is_refused() -> None:
    reactor = Reactor()
    stats = Stats()
    guard = AddressGuard((), stats)
    guard.install(reactor)
    with pytest.raises(AddressRefused) as refused:
        guard.check_request("http://user:secret@proxy.example:3128")
    assert "proxy http://proxy.example:3128" in str(refused.value)
    assert "secret" not in str(refused.value)
    assert stats.values["govsi/guard/proxy_refused"] == 1
    trusting = AddressGuard((), proxy_trusted=True)
    trusting.install(reactor)
    trusting.check_request("http://proxy.example:3128")  # allowed: it guards itself


def test_a_lookup_keeps_the_reason_it_failed() -> None:
    class Failing(Inner):
        def resolveHostName(self, receiver: Any, host: str, *args: Any) -> object:
            if host == "mrtva.gov.si":
                receiver.resolutionBegan(object())
                receiver.resolutionFailed("DNS lookup of mrtva.gov.si not answered within 30 s")
                receiver.resolutionComplete()
                return object()
            return super().resolveHostName(receiver, host, *args)

    reactor = Reactor()
    reactor.nameResolver = Failing({"zasebni.gov.si": ["127.0.0.1"], "www.gov.si": ["193.2.1.66"]})
    guard = AddressGuard(())
    guard.install(reactor)
    results: dict[str, Any] = {}
    for host in ("zasebni.gov.si", "www.gov.si", "mrtva.gov.si", "nikjer.gov.si"):
        guard.lookup(host).addBoth(lambda r, h=host: results.__setitem__(h, r))
    assert results["www.gov.si"] == "193.2.1.66"
    assert results["zasebni.gov.si"].check(AddressRefused)
    assert "loopback address" in results["zasebni.gov.si"].getErrorMessage()
    assert results["mrtva.gov.si"].check(DNSLookupError)
    assert "not answered within 30 s" in results["mrtva.gov.si"].getErrorMessage()
    assert "nikjer.gov.si found no address" in results["nikjer.gov.si"].getErrorMessage()


# -- proxies from the environment -------------------------------------------------------------
@pytest.mark.parametrize(
    ("environ", "names"),
    [
        ({}, []),
        ({"http_proxy": "http://p:3128"}, ["http_proxy"]),
        ({"HTTPS_PROXY": "http://p:3128"}, ["HTTPS_PROXY"]),
        ({"ALL_PROXY": "socks5://p:1080", "no_proxy": "*"}, ["ALL_PROXY"]),
        ({"http_proxy": "http://a", "HTTP_PROXY": "http://b"}, ["http_proxy"]),
        ({"http_proxy": "", "HTTP_PROXY": "http://b"}, []),  # lower case wins, even empty
        ({"HTTP_PROXY": "http://b", "REQUEST_METHOD": "GET"}, []),  # CGI: a header
        ({"ftp_proxy": "http://p", "NO_PROXY": "x"}, []),
        ({"http_proxy": "http://a", "https_proxy": "http://a"}, ["http_proxy", "https_proxy"]),
    ],
)
def test_the_proxy_variables_are_read_as_urllib_reads_them(
    environ: dict[str, str], names: list[str]
) -> None:
    assert proxy_variables(environ) == names


def _crawler(**settings: Any) -> Any:
    from scrapy.utils.test import get_crawler

    return get_crawler(settings_dict=settings)


@pytest.mark.parametrize("variable", ["http_proxy", "HTTPS_PROXY", "ALL_PROXY"])
def test_a_proxy_in_the_environment_stops_the_crawl_at_start(
    variable: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    for name in ("http_proxy", "https_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY",
                 "ALL_PROXY"):  # fmt: skip
        monkeypatch.delenv(name, raising=False)
    AddressGuard.from_crawler(_crawler())
    monkeypatch.setenv(variable, "http://proxy.example:3128")
    with caplog.at_level(logging.ERROR, logger="govsi.net.guard"), \
            pytest.raises(ProxyNotTrusted):  # fmt: skip
        AddressGuard.from_crawler(_crawler())
    (line,) = [r.getMessage() for r in caplog.records]
    assert f"a proxy is configured ({variable})" in line and "PROXY_TRUSTED=True" in line
    assert AddressGuard.from_crawler(_crawler(PROXY_TRUSTED=True)).proxy_trusted
    assert not AddressGuard.from_crawler(_crawler(HTTPPROXY_ENABLED=False)).proxy_trusted
