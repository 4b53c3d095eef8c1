"""A fetched page that is no HTML page: what it is (``Documents.kind``), and a document's
record (``Documents.record``: its type and size, the key of its bytes, the bytes when
crawldb keeps them) or an OTHER one. The text of the documents the crawl fetches
(TEXT_EXTRACTION), read in the worker pool within ``TextLimits`` and the worker's memory
bound: a document that breaks, hangs or goes past the bound in its worker fails alone,
recorded with the reason."""

from __future__ import annotations

import logging
from collections.abc import Callable

from scrapy.http import Response
from scrapy.settings import BaseSettings
from scrapy.utils.defer import maybe_deferred_to_future

from govsi.items import FetchedPage, PageText, outcome_stat
from govsi.responses.revisits import content_key, header
from govsi.stats import Count
from govsi.text.documents import document_text
from govsi.text.language import guess_language
from govsi.text.limits import TextLimits, TextStatus
from govsi.web.contenttypes import (
    DOCUMENT_TYPES,
    DocumentType,
    ResponseType,
    classify,
    declared_length,
)
from govsi.workers.bound import Cause
from govsi.workers.pool import WorkerFailed, WorkerPool

logger = logging.getLogger(__name__)


def document_page_text(data: bytes, kind: DocumentType, limits: TextLimits) -> PageText:
    """A worker's job: the ``PageText`` of document ``data`` (``document_text``), its
    language guessed from the text."""
    got = document_text(data, kind, limits)
    language = guess_language(got.text) if got.text else None
    return PageText(kind, got.status, got.text, got.reason, got.title, language, got.date,
                    got.truncated)  # fmt: skip


def text_limits(s: BaseSettings) -> TextLimits | None:
    """TEXT_MAX_CHARS and the DOCUMENT_TEXT_* bounds on reading one document; None when
    TEXT_EXTRACTION is off (no text kept)."""
    if not s.getbool("TEXT_EXTRACTION"):
        return None
    return TextLimits(
        max_chars=s.getint("TEXT_MAX_CHARS"),
        max_pages=s.getint("DOCUMENT_TEXT_MAX_PAGES"),
        max_unpacked_bytes=s.getint("DOCUMENT_TEXT_MAX_UNPACKED_BYTES"),
        max_seconds=s.getfloat("DOCUMENT_TEXT_MAX_SECONDS"),
    )


# A worker's failure as the text's status: past the memory bound, past its time, or else.
_STATUS: dict[Cause, TextStatus] = {"memory": "memory", "timeout": "timeout"}


def worker_failure(error: Exception) -> tuple[TextStatus, str]:
    """A reading that failed in the worker with ``error``, as a text's status (``memory``
    past the memory bound, ``timeout``, else ``failed``) and what happened, said."""
    if isinstance(error, WorkerFailed):
        return _STATUS.get(error.cause, "failed"), str(error)
    return "failed", repr(error)


class DocumentTexts:
    """Reads documents' text through the crawl's ``WorkerPool``; ``count`` takes the
    ``govsi/text/<status>`` stats."""

    def __init__(self, worker: WorkerPool, limits: TextLimits, count: Callable[[str], None]):
        self.worker = worker
        self.limits = limits
        self.count = count

    async def read(self, url: str, data: bytes, kind: DocumentType) -> PageText:
        try:
            text: PageText = await maybe_deferred_to_future(
                self.worker.run(document_page_text, data, kind, self.limits)
            )
        except Exception as e:
            status, what = worker_failure(e)
            text = PageText(kind, status, reason=f"reading failed in the worker: {what}"[:1000])
        self.count(f"govsi/text/{text.status}")
        if text.status not in ("ok", "empty"):
            logger.info("%s: the %s's text: %s (%s)", url, kind, text.status, text.reason)
        return text


class Documents:
    """What the spider makes of a fetched page that is no HTML page; ``texts``: TEXT_EXTRACTION's
    reader (None: no text kept), ``keep_bytes``: STORE_BINARY_DATA."""

    def __init__(self, texts: DocumentTexts | None, keep_bytes: bool, count: Count) -> None:
        self.texts = texts
        self.keep_bytes = keep_bytes
        self.count = count

    def kind(self, response: Response, content_type: str | None, url: str) -> ResponseType | None:
        """HTML, a document type, or None for anything else (``classify``)."""
        return classify(content_type, url, response.body[:1024])

    async def record(
        self, response: Response, record: FetchedPage, kind: DocumentType | None
    ) -> FetchedPage:
        """``record`` of a document of type ``kind``, or of anything else (OTHER)."""
        if kind in DOCUMENT_TYPES:
            record.page_type = "BINARY"
            record.data_type = kind
            length = header(response, "Content-Length")
            declared = declared_length(length)
            record.size = declared if declared is not None else len(response.body)
            if "download_stopped" not in response.flags:
                # A document changed when its bytes did: their key, whether they are kept
                # or were read only to be compared (a revisit's).
                record.content_hash = await content_key(response.body)
                if self.keep_bytes:
                    record.data = response.body
                if self.texts is not None:
                    record.text = await self.texts.read(record.url, response.body, kind)
            self.count(outcome_stat("binary", kind))
            return record
        record.page_type = "OTHER"
        self.count(outcome_stat("other"))
        return record
