"""The text of the documents the crawl fetches (TEXT_EXTRACTION), read in the worker pool
within ``TextLimits`` and the worker's memory bound: a document that breaks, hangs or
goes past the bound in its worker fails alone, recorded with the reason."""

from __future__ import annotations

import logging
from collections.abc import Callable

from scrapy.settings import BaseSettings
from scrapy.utils.defer import maybe_deferred_to_future

from govsi.items import PageText
from govsi.text.documents import document_text
from govsi.text.language import guess_language
from govsi.text.limits import TextLimits, TextStatus
from govsi.web.contenttypes import DocumentType
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
