"""Documents' text in the spider (TEXT_EXTRACTION, govsi.responses.documents): read in the
worker pool, on every document record; a worker that fails or hangs fails that document
alone, with the reason; with text extraction on, documents are read whole."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from scrapy.exceptions import StopDownload
from scrapy.http import Response
from twisted.internet import defer

from govsi.middlewares import StopUnwantedBodiesMiddleware
from govsi.requestmeta import KIND_PAGE
from govsi.responses.documents import DocumentTexts
from govsi.text.limits import TextLimits
from govsi.workers.pool import WorkerFailed
from testkit.simweb.documents import make_docx, make_pdf
from tests.support.spiders import parse, respond, spider

PDF_URL = "https://www.gov.si/porocilo.pdf"


class Worker:
    """The worker pool, run in this process; or failing every job."""

    def __init__(self, error: Exception | None = None) -> None:
        self.error = error

    def run(self, fn: Any, /, *args: Any, **kwargs: Any) -> defer.Deferred[Any]:
        return defer.fail(self.error) if self.error else defer.succeed(fn(*args, **kwargs))


def document_record(worker: Worker, body: bytes, ctype: str = "application/pdf") -> Any:
    s, stats = spider(TEXT_EXTRACTION=True)
    texts = s.parts.documents.texts
    assert texts is not None  # built with the spider when the setting is on
    s.parts.documents.texts = DocumentTexts(worker, texts.limits, s.count)  # type: ignore[arg-type]
    request = s.request_for(KIND_PAGE, PDF_URL, 1)
    (record,) = parse(s, respond(request, 200, body, **{"Content-Type": ctype}))
    return record, stats


def test_a_documents_text_goes_on_its_record() -> None:
    words = "Uredba o občinah velja za vse občine in je bila sprejeta na seji vlade."
    pdf = make_pdf([words], "Uredba")
    record, stats = document_record(Worker(), pdf)
    text = record.text
    assert (text.kind, text.status, text.title, text.language) == ("PDF", "ok", "Uredba", "sl")
    assert text.text == words
    assert stats.get_value("govsi/text/ok") == 1


@pytest.mark.parametrize(
    ("worker", "body", "status", "reason"),
    [
        (Worker(), b"%PDF-1.7 broken", "failed", "not a readable PDF"),
        (Worker(), make_docx(["Napačen tip"]), "failed", "not a readable PDF"),
        (Worker(WorkerFailed("the worker process died (SIGSEGV, 80 MB at its peak)")),
         make_pdf(["x"]), "failed", "in the worker: the worker process died (SIGSEGV"),
        (Worker(WorkerFailed("the worker took longer than 60 s", "timeout")), make_pdf(["x"]),
         "timeout", "the worker took longer than 60 s"),
        (Worker(WorkerFailed("over memory bound (WORKER_MEMORY_LIMIT 384 MB): the worker "
                             "process died (SIGABRT, 370 MB at its peak)", "memory")),
         make_pdf(["x"]), "memory", "worker: over memory bound (WORKER_MEMORY_LIMIT 384 MB)"),
        # A pool without the bound passes a job's MemoryError on as it is.
        (Worker(MemoryError()), make_pdf(["x"]), "failed",
         "reading failed in the worker: MemoryError()"),
    ],
)  # fmt: skip
def test_an_unreadable_document_is_recorded_with_its_reason(
    worker: Worker, body: bytes, status: str, reason: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="govsi.responses.documents")
    record, stats = document_record(worker, body)
    assert record.page_type == "BINARY" and record.content_hash is not None
    assert record.text.status == status and reason in record.text.reason
    assert stats.get_value(f"govsi/text/{status}") == 1
    assert f"{PDF_URL}: the PDF's text: {status}" in caplog.text


def test_text_extraction_off_reads_no_text() -> None:
    s, _ = spider()
    assert s.parts.documents.texts is None
    request = s.request_for(KIND_PAGE, PDF_URL, 1)
    (record,) = parse(
        s, respond(request, 200, make_pdf(["x"]), **{"Content-Type": "application/pdf"})
    )
    assert record.text is None


def test_documents_are_read_whole_while_text_extraction_is_on() -> None:
    s, _ = spider()
    headers = Response(PDF_URL, headers={"Content-Type": "application/pdf"}).headers
    first = s.request_for(KIND_PAGE, PDF_URL, 1)
    off = StopUnwantedBodiesMiddleware(store_binary=False, store_images=False)
    with pytest.raises(StopDownload):
        off.headers_received(headers, 100, first, s)
    on = StopUnwantedBodiesMiddleware(store_binary=False, store_images=False, text=True)
    on.headers_received(headers, 100, first, s)  # read on
    zipped = Response("https://www.gov.si/a.zip", headers={"Content-Type": "application/zip"})
    with pytest.raises(StopDownload):  # neither HTML nor a document: still stopped
        on.headers_received(zipped.headers, 100, s.request_for(KIND_PAGE, zipped.url, 1), s)


def test_the_settings_make_the_limits() -> None:
    s, _ = spider(TEXT_EXTRACTION=True, TEXT_MAX_CHARS=10, DOCUMENT_TEXT_MAX_PAGES=3,
                  DOCUMENT_TEXT_MAX_SECONDS=2.5, DOCUMENT_TEXT_MAX_UNPACKED_BYTES=1000)  # fmt: skip
    texts = s.parts.documents.texts
    assert texts is not None and texts.limits == TextLimits(10, 3, 1000, 2.5)
    assert s.parts.pages.limits.text_chars == 10
