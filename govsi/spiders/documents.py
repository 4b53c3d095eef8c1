"""The text of the documents the crawl fetches (TEXT_EXTRACTION), read in the worker pool
within ``TextLimits``: a document that breaks or hangs its worker fails alone, recorded
with the reason."""

from __future__ import annotations

import logging
from collections.abc import Callable

from scrapy.utils.defer import maybe_deferred_to_future

from govsi.items import PageText
from govsi.spiders.workers import WorkerPool
from govsi.text.documents import document_text
from govsi.text.language import guess_language
from govsi.text.limits import TextLimits
from govsi.web.contenttypes import DocumentType

logger = logging.getLogger(__name__)


def document_page_text(data: bytes, kind: DocumentType, limits: TextLimits) -> PageText:
    """A worker's job: the ``PageText`` of document ``data`` (``document_text``), its
    language guessed from the text."""
    got = document_text(data, kind, limits)
    language = guess_language(got.text) if got.text else None
    return PageText(kind, got.status, got.text, got.reason, got.title, language, got.date,
                    got.truncated)  # fmt: skip


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
            text = PageText(kind, "failed", reason=f"reading failed in the worker: {e!r}"[:1000])
        self.count(f"govsi/text/{text.status}")
        if text.status not in ("ok", "empty"):
            logger.info("%s: the %s's text: %s (%s)", url, kind, text.status, text.reason)
        return text
