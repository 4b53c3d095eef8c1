"""Which ``Host`` a request to ``scrapy serve`` may name, and the address it binds (pure).

The search page has no login and is meant for this machine. A web page elsewhere can
still reach it through the visitor's browser by DNS rebinding: its own name, made to
resolve to 127.0.0.1, sends the browser's requests here with ``Host: its-name``. Such a
name is never one this server answers to. It answers to the name or address it was bound
to, to ``localhost`` and its subdomains (RFC 6761: always loopback, browsers resolve them
themselves) and to loopback addresses; bound to every interface (``0.0.0.0``, ``::``), to
any IP address, which no DNS answer can stand for (bound to a name, not to its addresses:
they are not looked up). The port is not compared: a tunnel
(``ssh -L 9000:localhost:8080``) reaches it under another.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Literal

__all__ = ["HostVerdict", "bind_address", "host_verdict"]

# "ours"; "bad": no Host, or not one (400); "other": a name this server is not (421).
HostVerdict = Literal["ours", "bad", "other"]

# RFC 9110's Host: uri-host [ ":" port ], uri-host an IP literal in brackets, an IPv4
# address or a registered name (unreserved characters and percent-escapes; sub-delims are
# left out: no browser sends them).
_HOST = re.compile(
    r"(?:\[(?P<ip6>[0-9A-Fa-f:.]+)\]|(?P<name>[A-Za-z0-9._~%-]+))(?::(?P<port>[0-9]{0,5}))?"
)
_BIND = re.compile(r"(?:\[(?P<ip6>[0-9A-Fa-f:.]+)\]|(?P<host>[^\s\[\]/:@]+)):(?P<port>[0-9]{1,5})")


def _ip(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


def _name(text: str) -> str:
    return text.lower().removesuffix(".")


def host_verdict(header: str | None, bind_host: str) -> HostVerdict:
    """Whether a request whose ``Host`` header is ``header`` (None: none sent) is for a
    server bound to ``bind_host`` (a name, an address, ``::`` or ``0.0.0.0``)."""
    if header is None:
        return "bad"
    found = _HOST.fullmatch(header.strip())
    if found is None or int(found.group("port") or 0) > 65535:
        return "bad"
    if found.group("ip6") is not None:
        address = _ip(found.group("ip6"))
        if not isinstance(address, ipaddress.IPv6Address):
            return "bad"
    else:
        address = _ip(found.group("name"))
    bound = _ip(bind_host)
    if address is not None:
        if address.is_loopback or (bound is not None and bound.is_unspecified):
            return "ours"
        return "ours" if address == bound else "other"
    name = _name(found.group("name"))
    if name == "localhost" or name.endswith(".localhost"):
        return "ours"
    return "ours" if bound is None and name == _name(bind_host) else "other"


def bind_address(value: str) -> tuple[str, int]:
    """``HOST:PORT`` (an IPv6 address in brackets, ``[::1]:8080``) as (host, port), the
    brackets taken off; ValueError when it is not one."""
    found = _BIND.fullmatch(value.strip())
    if found is None or int(found.group("port")) > 65535:
        raise ValueError(f"not HOST:PORT: {value!r}")
    host = found.group("ip6") or found.group("host")
    if found.group("ip6") is not None and not isinstance(_ip(host), ipaddress.IPv6Address):
        raise ValueError(f"not an IPv6 address: {value!r}")
    return host, int(found.group("port"))
