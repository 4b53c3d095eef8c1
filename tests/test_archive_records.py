"""An exchange's records, read back with warcio: digests, ties and revisits."""

from __future__ import annotations

import io
import os
import re
from datetime import UTC, datetime
from typing import Any

import pytest
from warcio.archiveiterator import ArchiveIterator

from govsi.archive.exchange import Exchange
from govsi.archive.payloads import Payloads
from govsi.archive.records import (
    NOT_MODIFIED_PROFILE,
    Derivative,
    RecordMaker,
    derivative_uri,
    payload_digest,
    record_id,
)

WHEN = datetime(2026, 11, 26, 12, 0, 0, 123456, tzinfo=UTC)
INFO = "<urn:uuid:00000000-0000-0000-0000-000000000000>"


def exchange(url: str, body: bytes, status: int = 200, **kw: Any) -> Exchange:
    return Exchange(
        url=url, method="GET", request_headers=(("User-Agent", "govsi-crawler"),),
        request_body=b"", protocol="HTTP/1.1", status=status,
        response_headers=(("Content-Type", "text/html"), ("Content-Length", str(len(body)))),
        body=body, ip="127.1.2.3", date=WHEN, **kw,
    )  # fmt: skip


def read(records: list[bytes]) -> list[Any]:
    got = []
    for r in ArchiveIterator(io.BytesIO(b"".join(records)), check_digests=True):
        r.payload = r.content_stream().read()
        got.append(r)
    return got


def test_response_then_request_tied_and_digested() -> None:
    maker = RecordMaker(Payloads(10))
    rid = record_id()
    made = maker.exchange(exchange("http://www.gov.si/a", b"<p>hello</p>"), rid, INFO)
    response, request = read(made.records)
    h = response.rec_headers
    assert (response.rec_type, request.rec_type, made.kind) == ("response", "request", "response")
    assert h.get_header("WARC-Record-ID") == rid
    assert h.get_header("WARC-Target-URI") == "http://www.gov.si/a"
    assert h.get_header("WARC-IP-Address") == "127.1.2.3"
    assert h.get_header("WARC-Date") == "2026-11-26T12:00:00.123456Z"
    assert h.get_header("WARC-Warcinfo-ID") == INFO
    assert h.get_header("WARC-Payload-Digest") == payload_digest(b"<p>hello</p>")
    assert h.get_header("WARC-Block-Digest")
    assert response.http_headers.get_statuscode() == "200"
    assert response.payload == b"<p>hello</p>"
    assert request.rec_headers.get_header("WARC-Concurrent-To") == rid
    assert request.http_headers.protocol == "GET"
    assert request.http_headers.get_header("Host") == "www.gov.si"
    assert request.http_headers.get_header("User-Agent") == "govsi-crawler"


def test_the_same_payload_again_is_a_revisit_to_the_first_capture() -> None:
    maker = RecordMaker(Payloads(10))
    first = record_id()
    maker.exchange(exchange("http://a.gov.si/logo.png", b"PNG" * 100), first, INFO)
    made = maker.exchange(exchange("http://b.gov.si/logo.png", b"PNG" * 100), record_id(), INFO)
    revisit, request = read(made.records)
    h = revisit.rec_headers
    assert (revisit.rec_type, made.kind, made.saved) == ("revisit", "revisit", 300)
    assert h.get_header("WARC-Profile").endswith("/revisit/identical-payload-digest")
    assert h.get_header("WARC-Refers-To") == first
    assert h.get_header("WARC-Refers-To-Target-URI") == "http://a.gov.si/logo.png"
    assert h.get_header("WARC-Refers-To-Date") == "2026-11-26T12:00:00.123456Z"
    assert h.get_header("WARC-Payload-Digest") == payload_digest(b"PNG" * 100)
    assert revisit.payload == b""  # headers only
    assert request.rec_type == "request"


def test_empty_and_truncated_payloads_are_never_referred_to() -> None:
    maker = RecordMaker(Payloads(10))
    for _ in range(2):
        assert maker.exchange(exchange("http://a.gov.si/e", b""), record_id(), INFO).kind == (
            "response"
        )
    cut = exchange("http://a.gov.si/v.mp4", b"", truncated="unspecified")
    response = read(maker.exchange(cut, record_id(), INFO).records)[0]
    assert response.rec_headers.get_header("WARC-Truncated") == "unspecified"
    whole = exchange("http://a.gov.si/x", b"x" * 10, truncated="unspecified")
    maker.exchange(whole, record_id(), INFO)
    # A truncated payload is not the whole: a later full copy is written in full.
    full = maker.exchange(exchange("http://a.gov.si/y", b"x" * 10), record_id(), INFO)
    assert full.kind == "response"


def test_a_304_is_a_server_not_modified_revisit() -> None:
    maker = RecordMaker(Payloads(10))
    made = maker.exchange(exchange("http://a.gov.si/p", b"", status=304), record_id(), INFO)
    revisit = read(made.records)[0]
    h = revisit.rec_headers
    assert revisit.rec_type == "revisit" and made.kind == "revisit"
    assert h.get_header("WARC-Profile") == NOT_MODIFIED_PROFILE
    assert h.get_header("WARC-Refers-To-Target-URI") == "http://a.gov.si/p"
    assert h.get_header("WARC-Payload-Digest") is None
    assert revisit.http_headers.get_statuscode() == "304"


def test_a_dom_is_under_its_own_uri_and_refers_to_its_response() -> None:
    maker = RecordMaker(Payloads(10))
    rid = record_id()
    dom = maker.dom("http://a.gov.si/app?x=1", "<html>č</html>", rid, WHEN, INFO)
    (record,) = read([dom])
    h = record.rec_headers
    assert record.rec_type == "conversion"
    # Never the page's own URI: replay serves a URI's latest record, and that must be the
    # response the server sent.
    assert h.get_header("WARC-Target-URI") == "urn:dom:http://a.gov.si/app?x=1"
    assert h.get_header("WARC-Refers-To") == rid
    assert h.get_header("WARC-Refers-To-Target-URI") == "http://a.gov.si/app?x=1"
    assert h.get_header("Content-Type") == "text/html; charset=utf-8"
    assert h.get_header("WARC-Date") == "2026-11-26T12:00:00.123456Z"
    assert h.get_header("WARC-Warcinfo-ID") == INFO
    assert record.payload == "<html>č</html>".encode()
    # Its response's record id unknown: still tied to the response by its URI.
    (untied,) = read([maker.dom("http://a.gov.si/b", "<p></p>", None, WHEN, INFO)])
    assert untied.rec_headers.get_header("WARC-Refers-To") is None
    assert untied.rec_headers.get_header("WARC-Refers-To-Target-URI") == "http://a.gov.si/b"


@pytest.mark.parametrize(
    ("kind", "url", "uri"),
    [
        ("dom", "http://a.gov.si/", "urn:dom:http://a.gov.si/"),
        ("dom", "https://a.gov.si/p?q=1&r=%C4%8D", "urn:dom:https://a.gov.si/p?q=1&r=%C4%8D"),
        ("dom", "https://a.gov.si:8443/x#frag", "urn:dom:https://a.gov.si:8443/x#frag"),
    ],
)
def test_derivative_uri(kind: Derivative, url: str, uri: str) -> None:
    assert derivative_uri(kind, url) == uri


def test_warcinfo_lists_its_fields() -> None:
    maker = RecordMaker(Payloads(10))
    rid, data = maker.warcinfo("f.warc.gz", {"software": "govsi", "operator": "", "robots": "obey"})
    (record,) = read([data])
    assert record.rec_type == "warcinfo"
    assert record.rec_headers.get_header("WARC-Record-ID") == rid
    assert record.rec_headers.get_header("WARC-Filename") == "f.warc.gz"
    assert record.payload == b"software: govsi\r\nrobots: obey\r\n"  # empty fields left out


def test_record_ids_are_random_uuids_never_repeated() -> None:
    ids = [record_id() for _ in range(20_000)]  # several draws from the OS
    assert len(set(ids)) == len(ids)
    for rid in ids[::997]:
        assert re.fullmatch(r"<urn:uuid:[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-"
                            r"[0-9a-f]{12}>", rid)  # fmt: skip
    # A forked process draws its own, not its parent's next ones.
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.write(write, record_id().encode())
        os._exit(0)
    os.waitpid(pid, 0)
    child = os.read(read, 100).decode()
    assert child != record_id()
