"""The heads of an exchange's records: what the stored body is, said truly."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from govsi.archive.exchange import Exchange, reason_phrase, request_head, response_head


def exchange(headers: list[tuple[str, str]], body: bytes = b"abc", **kw: object) -> Exchange:
    base: dict[str, object] = dict(
        url="http://www.gov.si/a?b=1", method="GET", request_headers=(),
        request_body=b"", protocol="HTTP/1.1", status=200, response_headers=tuple(headers),
        body=body, ip="127.0.0.1", date=datetime(2026, 11, 26, tzinfo=UTC),
    )  # fmt: skip
    base.update(kw)
    return Exchange(**base)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        # As received: order and duplicates kept.
        ([("Content-Type", "text/html"), ("Set-Cookie", "a=1"), ("Set-Cookie", "b=2")],
         [("Content-Type", "text/html"), ("Set-Cookie", "a=1"), ("Set-Cookie", "b=2")]),
        # A length that is the stored body's stays.
        ([("Content-Length", "3")], [("Content-Length", "3")]),
        # De-chunked: the framing header renamed, the real length given.
        ([("Transfer-Encoding", "chunked"), ("Content-Type", "text/html")],
         [("X-Crawler-Transfer-Encoding", "chunked"), ("Content-Type", "text/html"),
          ("Content-Length", "3")]),
        # A length that lies is kept under another name.
        ([("Content-Length", "99")],
         [("X-Crawler-Content-Length", "99"), ("Content-Length", "3")]),
        # Two lengths: the first stands.
        ([("Content-Length", "3"), ("Content-Length", "4")], [("Content-Length", "3")]),
        # Content-Encoding stays: the body is stored still encoded.
        ([("Content-Encoding", "gzip"), ("Content-Length", "3")],
         [("Content-Encoding", "gzip"), ("Content-Length", "3")]),
    ],
)  # fmt: skip
def test_response_head_describes_the_stored_body(
    headers: list[tuple[str, str]], expected: list[tuple[str, str]]
) -> None:
    line, got = response_head(exchange(headers))
    assert line == "HTTP/1.1 200 OK"
    assert got == expected


def test_a_truncated_body_keeps_the_servers_length() -> None:
    _, got = response_head(exchange([("Content-Length", "5000")], truncated="unspecified"))
    assert got == [("Content-Length", "5000")]


@pytest.mark.parametrize(
    ("status", "phrase", "line"),
    [
        (404, "Not Found", "HTTP/1.1 404 Not Found"),
        (304, "Not Modified", "HTTP/1.1 304 Not Modified"),
        (599, "", "HTTP/1.1 599"),  # a code with no standard phrase
    ],
)
def test_status_line(status: int, phrase: str, line: str) -> None:
    assert reason_phrase(status) == phrase
    assert response_head(exchange([], status=status))[0] == line


@pytest.mark.parametrize(
    ("url", "headers", "line", "first"),
    [
        ("http://www.gov.si/a?b=1", [("Accept", "*/*")], "GET /a?b=1 HTTP/1.1",
         ("Host", "www.gov.si")),
        ("https://x.gov.si:8443", [], "GET / HTTP/1.1", ("Host", "x.gov.si:8443")),
        ("http://x.gov.si/", [("Host", "other")], "GET / HTTP/1.1", ("Host", "other")),
    ],
)  # fmt: skip
def test_request_head(
    url: str, headers: list[tuple[str, str]], line: str, first: tuple[str, str]
) -> None:
    got_line, got = request_head(exchange([], url=url, request_headers=tuple(headers)))
    assert got_line == line
    assert got[0] == first
    assert len(got) == len(headers) + (0 if any(k == "Host" for k, _ in headers) else 1)
