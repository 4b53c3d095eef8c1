"""The spider's side of revisits (govsi.responses.revisits, GovsiSpider): validators kept on
every record; a 304 to a conditional request is a visit that keeps the copy, its body
unread; a 304 nobody asked for, a server error over a good copy and a failed fetch keep the
copy with their reason; documents and pictures carry their bytes' key. And Scrapy lets a
304 through to the spider: no middleware of the crawl's drops or rewrites it."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from scrapy import Request
from scrapy.core.downloader.middleware import DownloaderMiddlewareManager
from scrapy.exceptions import StopDownload
from scrapy.http import Response
from scrapy.spidermiddlewares.httperror import HttpErrorMiddleware
from scrapy.utils.test import get_crawler
from twisted.internet.error import TimeoutError as TxTimeoutError
from twisted.internet.testing import StringTransport
from twisted.python.failure import Failure
from twisted.web._newclient import Request as TxRequest
from twisted.web.http_headers import Headers as TxHeaders

from govsi.dedup.signature import exact_key
from govsi.items import FetchedImage, FetchedPage, Revisit
from govsi.middlewares import StopUnwantedBodiesMiddleware, keep_body
from govsi.net.download import HeaderLimits, _BoundedHTTP11ClientProtocol
from govsi.requestmeta import KIND_IMAGE, KIND_PAGE, META_KIND, META_REVISIT, META_URL
from govsi.revisit.change import bytes_key
from govsi.spiders.govsi import GovsiSpider
from tests.support.govpages import NEWS_1, semantic
from tests.support.spiders import PROJECT, parse, respond, spider

URL = "https://www.gov.si/novica"
STORED = Revisit(etag='"v1"', last_modified="Sun, 22 Nov 2026 11:00:00 GMT",
                 content_hash="k", page_type="HTML", http_status_code=200)  # fmt: skip


def request_for(s: GovsiSpider, url: str = URL, revisit: Revisit | None = STORED) -> Request:
    return s.request_for(KIND_PAGE, url, 1, revisit)


def test_a_revisit_is_conditional_and_a_first_visit_is_not() -> None:
    s, _ = spider()
    revisit = request_for(s)
    assert revisit.headers[b"If-None-Match"] == b'"v1"'
    assert revisit.headers[b"If-Modified-Since"] == b"Sun, 22 Nov 2026 11:00:00 GMT"
    assert revisit.meta[META_REVISIT] is STORED
    first = request_for(s, revisit=None)
    assert b"If-None-Match" not in first.headers and META_REVISIT not in first.meta


def test_a_304_to_a_conditional_request_keeps_the_copy_its_body_unread() -> None:
    s, stats = spider()
    # A body a 304 must not have (and that would not even parse as a page).
    response = respond(request_for(s), 304, b"\x00garbage", ETag='"v1"')
    (record,) = parse(s, response)
    assert isinstance(record, FetchedPage) and record.not_modified
    assert record.revisit is STORED and record.page_type == "HTML"
    assert record.html_content is None and record.links == [] and record.content_hash is None
    assert record.etag == '"v1"' and record.accessed_time is not None
    assert stats["govsi/pages/not_modified"] == 1


@pytest.mark.parametrize("revisit", [STORED, None], ids=["revisit", "first-visit"])
def test_a_304_to_an_unconditional_request_is_a_failed_visit(revisit: Revisit | None) -> None:
    s, stats = spider()
    request = Request(URL, meta={"depth": 1, META_KIND: KIND_PAGE, META_URL: URL,
                                 META_REVISIT: revisit})  # fmt: skip
    (record,) = parse(s, respond(request, 304))
    assert record.page_type == "ERROR" and not record.not_modified
    assert "unconditional" in record.fetch_error and record.revisit is revisit
    assert stats["govsi/pages/revisit_failed"] == 1


def test_a_server_error_over_a_good_copy_keeps_it() -> None:
    s, _ = spider()
    (record,) = parse(s, respond(request_for(s), 503, b"<h1>Vzdrzevanje</h1>",
                                 **{"Content-Type": "text/html"}))  # fmt: skip
    assert record.page_type == "ERROR" and "503" in record.fetch_error
    assert record.html_content is None


def test_a_full_answer_is_read_as_a_first_visit_with_its_validators() -> None:
    s, _ = spider()
    html = semantic(NEWS_1, "26. 11. 2026")
    response = respond(request_for(s), 200, html.encode(), **{
        "Content-Type": "text/html; charset=utf-8", "ETag": '"v2"',
        "Last-Modified": "not a date at all"})  # fmt: skip
    record, *requests = parse(s, response)
    assert record.page_type == "HTML" and record.revisit is STORED and not record.not_modified
    assert (record.etag, record.last_modified) == ('"v2"', "not a date at all")
    # Without the duplicate check, the main text's key is still taken: a change is told by it.
    assert record.content_hash == exact_key(html)
    assert {r.meta[META_URL] for r in requests} >= {"https://www.gov.si/r1"}


def test_validators_that_cannot_go_back_verbatim_are_not_kept() -> None:
    s, _ = spider()
    huge = '"' + "a" * 2000 + '"'
    response = respond(request_for(s, revisit=None), 200, b"<p>x</p>",
                       **{"Content-Type": "text/html", "ETag": huge})  # fmt: skip
    (record, *_) = parse(s, response)
    assert record.etag is None and record.last_modified is None


@pytest.mark.parametrize("store", [False, True], ids=["bytes-not-kept", "bytes-kept"])
def test_a_document_carries_its_bytes_key(store: bool) -> None:
    s, _ = spider(STORE_BINARY_DATA=store)
    url = "https://www.gov.si/porocilo.pdf"
    response = respond(request_for(s, url), 200, b"%PDF-1.7 x",
                       **{"Content-Type": "application/pdf", "ETag": '"d1"'})  # fmt: skip
    (record,) = parse(s, response)
    assert record.page_type == "BINARY" and record.content_hash == bytes_key(b"%PDF-1.7 x")
    assert record.etag == '"d1"' and record.size == 10
    assert record.data == (b"%PDF-1.7 x" if store else None)
    # A transfer stopped after the headers has no bytes, so no key.
    response.flags.append("download_stopped")
    (record,) = parse(s, response)
    assert record.content_hash is None and record.data is None


def image(s: GovsiSpider, status: int, body: bytes = b"", revisit: Revisit | None = None,
          **headers: str) -> list[Any]:  # fmt: skip
    url = "https://www.gov.si/logo.png"
    request = s.request_for(KIND_IMAGE, url, 1, revisit)
    return list(s.parse_image(respond(request, status, body, **headers)))


def test_images_keep_their_key_and_validators_and_a_304_keeps_the_picture() -> None:
    s, _ = spider()
    (first,) = image(s, 200, b"PNG", ETag='"i1"', **{"Content-Type": "image/png"})
    assert isinstance(first, FetchedImage) and first.content_hash == bytes_key(b"PNG")
    assert first.etag == '"i1"' and first.revisit is None
    stored = Revisit(etag='"i1"', content_hash=bytes_key(b"PNG"), http_status_code=200)
    (kept,) = image(s, 304, b"", stored)
    assert kept.not_modified and kept.data is None and kept.revisit is stored
    # A server error or an unasked-for 304 on a revisit: nothing to record, the copy stays.
    assert image(s, 503, b"", stored) == []
    assert image(s, 304, b"", Revisit(http_status_code=200)) == []
    (gone,) = image(s, 404, b"<h1>404</h1>", stored, **{"Content-Type": "text/html"})
    assert gone.http_status_code == 404 and gone.data is None and gone.content_hash is None


def failure(request: Request, error: Exception) -> Failure:
    f = Failure(error)
    f.request = request  # type: ignore[attr-defined]
    return f


def test_a_failed_revisit_says_which_copy_it_keeps() -> None:
    s, _ = spider()
    (record,) = s.page_failed(failure(request_for(s), TxTimeoutError("took too long")))
    assert record.page_type == "ERROR" and record.revisit is STORED
    img = s.request_for(KIND_IMAGE, "https://www.gov.si/logo.png", 1, STORED)
    assert list(s.image_failed(failure(img, TxTimeoutError("took too long")))) == []
    first = s.request_for(KIND_IMAGE, "https://www.gov.si/logo.png", 1)
    assert len(list(s.image_failed(failure(first, TxTimeoutError("took too long"))))) == 1


def test_a_revisit_reads_a_documents_bytes_to_compare_them() -> None:
    pdf = ("application/pdf", "https://www.gov.si/a.pdf", "page", False, False)
    assert not keep_body(*pdf) and keep_body(*pdf, compare=True)
    zipped = ("application/zip", "https://www.gov.si/a.zip", "page", False, False)
    assert not keep_body(*zipped, compare=True)  # neither HTML nor a document: never read
    s, _ = spider()
    mw = StopUnwantedBodiesMiddleware(store_binary=False, store_images=False)
    headers = Response("https://www.gov.si/a.pdf", headers={"Content-Type": "application/pdf"})
    first = s.request_for(KIND_PAGE, "https://www.gov.si/a.pdf", 1)
    with pytest.raises(StopDownload):
        mw.headers_received(headers.headers, 100, first, s)
    mw.headers_received(headers.headers, 100, request_for(s, "https://www.gov.si/a.pdf"), s)
    # A 304 has no body to stop: its connection is not dropped for nothing.
    mw.headers_received(headers.headers, 0, first, s)
    # With revisits on, a first visit reads the bytes too: the next visit compares them.
    on = StopUnwantedBodiesMiddleware(store_binary=False, store_images=False, revisits=True)
    on.headers_received(headers.headers, 100, first, s)
    zip_headers = Response("https://www.gov.si/a.zip", headers={"Content-Type": "application/zip"})
    with pytest.raises(StopDownload):
        zipped_first = s.request_for(KIND_PAGE, zip_headers.url, 1)
        on.headers_received(zip_headers.headers, 100, zipped_first, s)


@pytest.mark.parametrize("encoding", [None, "gzip"])
def test_scrapy_hands_a_304_to_the_spider_untouched(encoding: str | None) -> None:
    crawler = get_crawler(GovsiSpider, PROJECT)
    crawler.spider = crawler._create_spider("govsi")
    manager = DownloaderMiddlewareManager.from_crawler(crawler)
    request = request_for(crawler.spider)
    headers = {"ETag": '"v1"', **({"Content-Encoding": encoding} if encoding else {})}
    answered = Response(URL, status=304, headers=headers, request=request)

    async def handler(request: Request) -> Response:
        return answered

    out = asyncio.run(manager.download_async(handler, request))
    assert isinstance(out, Response) and out.status == 304  # not retried, not redirected
    # Nor does the spider's side refuse it (HTTPERROR_ALLOW_ALL).
    HttpErrorMiddleware.from_crawler(crawler).process_spider_input(out)


@pytest.mark.parametrize("body", [b"", b"Content-Length: 5\r\n\r\nhello"], ids=["plain", "body"])
def test_the_download_handler_reads_no_body_after_a_304(body: bytes) -> None:
    # A server that sends a body with its 304 (it must not): the body is never delivered,
    # so a 304 costs no body bytes and says nothing, whatever the server does.
    transport = StringTransport()
    protocol = _BoundedHTTP11ClientProtocol(lambda protocol: None, HeaderLimits(0, 0))
    protocol.makeConnection(transport)
    got: list[Any] = []
    ask = TxRequest(b"GET", b"/", TxHeaders({b"host": [b"www.gov.si"]}), None)
    protocol.request(ask).addBoth(got.append)
    head = b'HTTP/1.1 304 Not Modified\r\nETag: "v1"\r\n'
    protocol.dataReceived(head + (body or b"\r\n"))
    (response,) = got
    assert response.code == 304 and response.length == 0
