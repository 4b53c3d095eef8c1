"""Which Host a request to scrapy serve may name, and the address it binds
(govsi.search.hostnames)."""

from __future__ import annotations

import pytest

from govsi.search.hostnames import HostVerdict, bind_address, host_verdict


@pytest.mark.parametrize(
    ("header", "bind", "verdict"),
    [
        # Bound to loopback: its address, other loopback addresses, localhost names.
        ("127.0.0.1:8080", "127.0.0.1", "ours"),
        ("127.0.0.1", "127.0.0.1", "ours"),
        ("127.0.0.1:", "127.0.0.1", "ours"),  # RFC 9110: port = *DIGIT
        ("127.0.0.2:8080", "127.0.0.1", "ours"),
        ("[::1]:8080", "127.0.0.1", "ours"),
        ("localhost:8080", "127.0.0.1", "ours"),
        ("LocalHost:9000", "127.0.0.1", "ours"),  # a tunnel's port, any case
        ("localhost.:8080", "127.0.0.1", "ours"),
        ("search.localhost:8080", "127.0.0.1", "ours"),  # RFC 6761
        # DNS rebinding: a name of the attacker's, resolving to 127.0.0.1.
        ("attacker.example:8080", "127.0.0.1", "other"),
        ("localhost.attacker.example:8080", "127.0.0.1", "other"),
        ("127.0.0.1.nip.io:8080", "127.0.0.1", "other"),
        ("localhostx:8080", "127.0.0.1", "other"),
        ("2130706433:8080", "127.0.0.1", "other"),  # a name, as far as HTTP goes
        ("10.0.0.5:8080", "127.0.0.1", "other"),
        # Bound to IPv6 loopback.
        ("[::1]:8080", "::1", "ours"),
        ("[0:0:0:0:0:0:0:1]:8080", "::1", "ours"),
        ("localhost:8080", "::1", "ours"),
        ("attacker.example", "::1", "other"),
        # Bound to every interface: any address, no name but localhost's.
        ("192.168.1.5:8080", "0.0.0.0", "ours"),
        ("[2001:db8::5]:8080", "::", "ours"),
        ("192.168.1.5:8080", "::", "ours"),
        ("attacker.example:8080", "0.0.0.0", "other"),
        ("crawler.lan:8080", "::", "other"),
        # Bound to one address: that one (and loopback's), no other.
        ("192.168.1.5:8080", "192.168.1.5", "ours"),
        ("192.168.1.6:8080", "192.168.1.5", "other"),
        ("[2001:db8::5]", "2001:db8::5", "ours"),
        ("[2001:db8:0::5]", "2001:db8::5", "ours"),
        # Bound to a name: that name, whatever its case or final dot.
        ("crawler.lan:8080", "crawler.lan", "ours"),
        ("CRAWLER.LAN.:8080", "crawler.lan", "ours"),
        ("other.lan:8080", "crawler.lan", "other"),
        ("localhost:8080", "crawler.lan", "ours"),
        # Not a Host at all.
        (None, "127.0.0.1", "bad"),
        ("", "127.0.0.1", "bad"),
        ("127.0.0.1:80800", "127.0.0.1", "bad"),
        ("127.0.0.1:8080:1", "127.0.0.1", "bad"),
        ("user@127.0.0.1", "127.0.0.1", "bad"),
        ("127.0.0.1/x", "127.0.0.1", "bad"),
        ("a b", "127.0.0.1", "bad"),
        ("[::1", "127.0.0.1", "bad"),
        ("[127.0.0.1]:8080", "127.0.0.1", "bad"),  # only IPv6 goes in brackets
        ("[::g]:8080", "127.0.0.1", "bad"),
        ("::1:8080", "::1", "bad"),  # IPv6 without brackets
        ("localhost\r\nX: y", "127.0.0.1", "bad"),
    ],
)
def test_host_verdict(header: str | None, bind: str, verdict: HostVerdict) -> None:
    assert host_verdict(header, bind) == verdict


@pytest.mark.parametrize(
    ("value", "address"),
    [
        ("127.0.0.1:8080", ("127.0.0.1", 8080)),
        (" 127.0.0.1:8080 ", ("127.0.0.1", 8080)),
        ("[::1]:8080", ("::1", 8080)),
        ("[::]:0", ("::", 0)),
        ("0.0.0.0:65535", ("0.0.0.0", 65535)),
        ("localhost:9000", ("localhost", 9000)),
        ("crawler.lan:80", ("crawler.lan", 80)),
        ("127.0.0.1", None),
        ("127.0.0.1:", None),
        (":8080", None),
        ("127.0.0.1:65536", None),
        ("127.0.0.1:http", None),
        ("::1:8080", None),  # IPv6 goes in brackets
        ("[::1]", None),
        ("[localhost]:8080", None),
        ("[::1]:8080x", None),
        ("user@host:8080", None),
        ("", None),
    ],
)
def test_bind_address(value: str, address: tuple[str, int] | None) -> None:
    if address is None:
        with pytest.raises(ValueError):
            bind_address(value)
    else:
        assert bind_address(value) == address
