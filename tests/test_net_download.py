"""Response header caps (govsi.net.download): the parser gives up past MAX_HEADER_BYTES or
MAX_HEADERS and drops the connection; ordinary responses parse as before."""

from __future__ import annotations

from typing import Any

import pytest
from twisted.internet.testing import StringTransport
from twisted.web._newclient import Request, ResponseFailed
from twisted.web.http_headers import Headers

from govsi.net.download import HeaderLimitExceeded, HeaderLimits, _BoundedHTTP11ClientProtocol

STATUS = b"HTTP/1.1 200 OK\r\n"
END = b"Content-Length: 2\r\n\r\nok"


def exchange(data: bytes, limits: HeaderLimits, step: int = 65536) -> tuple[Any, StringTransport]:
    """What the request's Deferred gives when the server sends ``data`` in ``step`` pieces
    (the rest is not delivered once the connection is being dropped)."""
    transport = StringTransport()
    protocol = _BoundedHTTP11ClientProtocol(lambda protocol: None, limits)
    protocol.makeConnection(transport)
    outcome: list[Any] = []
    protocol.request(Request(b"GET", b"/", Headers({b"host": [b"x"]}), None)).addBoth(
        outcome.append
    )
    for start in range(0, len(data), step):
        if transport.disconnecting:
            break
        protocol.dataReceived(data[start : start + step])
    return (outcome[0] if outcome else None), transport


def continuation(n: int) -> bytes:
    return STATUS + b"X-Poplava: a\r\n" + b" aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n" * n + END


def fields(n: int) -> bytes:
    return STATUS + b"".join(b"X-Polje-%d: v\r\n" % i for i in range(n)) + END


LIMITS = HeaderLimits(256 * 1024, 200)


@pytest.mark.parametrize(
    ("data", "limit"),
    [
        (continuation(800_000), "bytes"),  # 25 MB of continuation lines
        (fields(10_000), "count"),
        (STATUS + b"X-Dolga: " + b"a" * 20_000 + b"\r\n" + END, "bytes"),  # one 20 KB line
        # Endless 100 Continue: Twisted starts the header section anew for each.
        (b"HTTP/1.1 100 Continue\r\nX-A: b\r\n\r\n" * 20_000 + STATUS + END, "count"),
    ],
    ids=["continuation-lines", "10000-headers", "long-line", "endless-100"],
)
def test_a_header_flood_drops_the_connection_early(data: bytes, limit: str) -> None:
    outcome, transport = exchange(data, LIMITS)
    assert isinstance(outcome.value, ResponseFailed)
    (reason,) = outcome.value.reasons
    assert isinstance(reason.value, HeaderLimitExceeded) and reason.value.limit == limit
    assert transport.disconnecting


@pytest.mark.parametrize(
    "data",
    [
        continuation(100),
        fields(199),
        STATUS + b"Set-Cookie: " + b"c" * 16_000 + b"\r\n" + END,
    ],
    ids=["100-continuation-lines", "199-headers", "16-KB-cookie"],
)
def test_responses_under_the_caps_parse_as_before(data: bytes) -> None:
    outcome, _ = exchange(data, LIMITS)
    assert outcome.code == 200, outcome
    assert outcome.length == 2  # every header read, Content-Length the last


def test_zero_means_no_cap() -> None:
    outcome, _ = exchange(fields(1000), HeaderLimits(0, 0))
    assert outcome.code == 200


def test_host_encoding_is_remembered_and_still_right() -> None:
    from twisted.internet import endpoints

    from govsi.net.download import cache_host_encoding

    cache_host_encoding()
    cache_host_encoding()  # idempotent: one cache, not a cache of a cache
    encode: Any = endpoints._idnaBytes
    assert not hasattr(encode.__wrapped__, "cache_info")
    before = encode.cache_info().hits
    # What the endpoint of every request calls.
    host_forms = endpoints.HostnameEndpoint._hostAsBytesAndText
    for _ in range(3):
        assert host_forms("www.gov.si") == (False, b"www.gov.si", "www.gov.si")
    assert encode.cache_info().hits >= before + 2
    # A name beyond ASCII is still encoded, and one IDNA refuses is still refused.
    assert host_forms("občina.gov.si")[:2] == (False, "občina.gov.si".encode("idna"))
    assert host_forms("a..b")[0]
