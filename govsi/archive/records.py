"""The WARC records of an exchange, made with warcio and serialized, uncompressed.

For each exchange: a ``response`` record, or a ``revisit`` when the payload was written
before (identical-payload-digest, referring to the first capture) or the server answered
a conditional request with 304 (server-not-modified); then its ``request`` record,
``WARC-Concurrent-To`` the response. Every record names the file's ``warcinfo``.

A derivative of a capture (a rendered page's DOM) is a ``conversion`` record under its own
URI, ``urn:<kind>:<url>`` (Browsertrix's ``urn:text:``, ``urn:view:``), never the page's:
replay, which serves a URI's latest record, then shows what the server sent.
``WARC-Refers-To`` (the response's record id) and ``WARC-Refers-To-Target-URI`` tie it to
the capture it was made from.
"""

from __future__ import annotations

import base64
import hashlib
import os
import threading
import uuid
from dataclasses import dataclass
from datetime import datetime
from io import BytesIO
from typing import Any, Literal

from warcio.statusandheaders import StatusAndHeaders
from warcio.timeutils import datetime_to_iso_date
from warcio.warcwriter import WARCWriter

from govsi.archive.exchange import Exchange, request_head, response_head
from govsi.archive.payloads import Capture, Payloads

__all__ = [
    "NOT_MODIFIED_PROFILE",
    "Derivative",
    "Made",
    "RecordMaker",
    "derivative_uri",
    "payload_digest",
    "record_id",
]

WARC_VERSION = "WARC/1.1"
NOT_MODIFIED_PROFILE = "http://netpreserve.org/warc/1.1/revisit/server-not-modified"
# What a derivative record holds: "dom", a rendered page's DOM.
Derivative = Literal["dom"]


# Random bytes for record ids, drawn from the OS a few kilobytes at a time: a draw per
# record is a system call, at which the reactor's thread lets go of the GIL, and waited
# to get it back from the archive's thread (bench/README, bench.archive_cost).
# Kept with the process that drew them: a forked child draws its own.
_RANDOM = bytearray()
_RANDOM_DRAW = 16 * 256
_random_pid = 0
_random_lock = threading.Lock()


def record_id() -> str:
    """A new WARC-Record-ID: a version 4 (random) UUID, as ``uuid.uuid4`` makes."""
    global _random_pid
    with _random_lock:
        if not _RANDOM or _random_pid != os.getpid():
            _RANDOM[:] = os.urandom(_RANDOM_DRAW)
            _random_pid = os.getpid()
        raw = bytes(_RANDOM[-16:])
        del _RANDOM[-16:]
    return f"<urn:uuid:{uuid.UUID(bytes=raw, version=4)}>"


def payload_digest(body: bytes) -> str:
    """WARC-Payload-Digest of ``body`` as warcio writes it: SHA-1, base32."""
    return "sha1:" + base64.b32encode(hashlib.sha1(body).digest()).decode("ascii")


def derivative_uri(kind: Derivative, url: str) -> str:
    """The record URI of a ``kind`` derived from the capture of ``url``: ``urn:dom:<url>``."""
    return f"urn:{kind}:{url}"


def warc_date(when: datetime) -> str:
    return str(datetime_to_iso_date(when.replace(tzinfo=None), use_micros=True))


@dataclass(frozen=True)
class Made:
    """An exchange's records, serialized, in the order they are written."""

    records: list[bytes]
    response_id: str
    kind: str  # "response" or "revisit"
    # The payload's bytes not written because a revisit refers to them.
    saved: int


class RecordMaker:
    """Makes records; remembers the payloads written (``Payloads``) to make revisits."""

    def __init__(self, payloads: Payloads) -> None:
        self.payloads = payloads
        self._out = BytesIO()
        self._writer = WARCWriter(self._out, gzip=False, warc_version=WARC_VERSION)

    def serialize(self, record: Any) -> bytes:
        self._out.seek(0)
        self._out.truncate()
        self._writer.write_record(record)
        return self._out.getvalue()

    def warcinfo(self, filename: str, fields: dict[str, str]) -> tuple[str, bytes]:
        """A file's first record: its id and bytes."""
        record = self._writer.create_warcinfo_record(filename, fields)
        return record.rec_headers.get_header("WARC-Record-ID"), self.serialize(record)

    def exchange(self, exchange: Exchange, response_id: str, warcinfo_id: str) -> Made:
        """The response (or revisit) and request records of ``exchange``."""
        date = warc_date(exchange.date)
        common = {"WARC-Date": date, "WARC-Warcinfo-ID": warcinfo_id}
        line, headers = response_head(exchange)
        protocol, _, status = line.partition(" ")
        http = StatusAndHeaders(status, headers, protocol=protocol)
        fields = {"WARC-Record-ID": response_id, **common}
        if exchange.ip:
            fields["WARC-IP-Address"] = exchange.ip
        digest = payload_digest(exchange.body)
        original = self.payloads.original(digest) if exchange.body else None
        saved = 0
        if exchange.status == 304:
            # The server says the copy the crawl holds is current: no payload to digest.
            record = self._writer.create_warc_record(
                exchange.url, "revisit", http_headers=http, warc_headers_dict=fields
            )
            record.rec_headers.add_header("WARC-Profile", NOT_MODIFIED_PROFILE)
            record.rec_headers.add_header("WARC-Refers-To-Target-URI", exchange.url)
            kind = "revisit"
        elif original is not None and exchange.truncated is None:
            record = self._writer.create_revisit_record(
                exchange.url, digest, original.uri, original.date, http_headers=http,
                warc_headers_dict={**fields, "WARC-Refers-To": original.record_id},
            )  # fmt: skip
            kind, saved = "revisit", len(exchange.body)
        else:
            # Given, so that warcio does not hash the payload a second time.
            fields["WARC-Payload-Digest"] = digest
            if exchange.truncated is not None:
                fields["WARC-Truncated"] = exchange.truncated
            record = self._writer.create_warc_record(
                exchange.url, "response", payload=BytesIO(exchange.body),
                length=len(exchange.body), http_headers=http, warc_headers_dict=fields,
            )  # fmt: skip
            kind = "response"
            if exchange.body and exchange.truncated is None:
                self.payloads.written(digest, Capture(exchange.url, date, response_id))
        request_line, request_headers = request_head(exchange)
        request = self._writer.create_warc_record(
            exchange.url, "request", payload=BytesIO(exchange.request_body),
            length=len(exchange.request_body),
            http_headers=StatusAndHeaders(request_line, request_headers, is_http_request=True),
            warc_headers_dict={
                "WARC-Record-ID": record_id(), "WARC-Concurrent-To": response_id, **common,
            },
        )  # fmt: skip
        return Made([self.serialize(record), self.serialize(request)], response_id, kind, saved)

    def dom(
        self,
        url: str,
        html: str,
        refers_to: str | None,
        when: datetime,
        warcinfo_id: str,
        rid: str = "",
    ) -> bytes:
        """The DOM rendered from the response to ``url`` (record id ``refers_to``, when
        known), under ``urn:dom:<url>``; ``rid``: its record id (a new one when not given)."""
        fields = {"WARC-Record-ID": rid or record_id(), "WARC-Date": warc_date(when),
                  "WARC-Warcinfo-ID": warcinfo_id, "WARC-Refers-To-Target-URI": url}  # fmt: skip
        if refers_to:
            fields["WARC-Refers-To"] = refers_to
        body = html.encode("utf-8")
        record = self._writer.create_warc_record(
            derivative_uri("dom", url), "conversion", payload=BytesIO(body), length=len(body),
            warc_content_type="text/html; charset=utf-8", warc_headers_dict=fields,
        )  # fmt: skip
        return self.serialize(record)
