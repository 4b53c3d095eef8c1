"""``document_text``: the text of any binary document the crawl keeps, by its type, within
``TextLimits``; whatever the bytes, a ``DocumentText`` with a status comes back, its date
one every reader of crawldb can take (``plausible_date``) or none (pure but for the clock)."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime

from govsi.text.dates import plausible_date
from govsi.text.limits import DocumentText, TextLimits
from govsi.text.ole import ole_text
from govsi.text.ooxml import ooxml_text
from govsi.text.pdf import pdf_text
from govsi.web.contenttypes import DocumentType

__all__ = ["document_text"]


def document_text(
    data: bytes, kind: DocumentType, limits: TextLimits, now: datetime | None = None
) -> DocumentText:
    """The text of ``data``, a document of type ``kind``. A file that is not what its type
    says, is broken, encrypted or past a bound ends in that status with a reason; an
    unexpected error in a reader too (a bug, not the crawl's end). Its date is dropped
    when it is not plausible at ``now`` (default: the clock's)."""
    got = _read(data, kind, limits)
    if got.date is None:
        return got
    return dataclasses.replace(got, date=plausible_date(got.date, now or datetime.now(UTC)))


def _read(data: bytes, kind: DocumentType, limits: TextLimits) -> DocumentText:
    if not data:
        return DocumentText("empty", reason="no bytes")
    try:
        if kind == "PDF":
            return pdf_text(data, limits)
        if kind in ("DOCX", "PPTX"):
            return ooxml_text(data, kind, limits)
        return ole_text(data, kind, limits)
    except MemoryError:
        return DocumentText("failed", reason="reading it ran out of memory")
    except Exception as e:
        return DocumentText("failed", reason=f"{kind} reader failed: {e!r}"[:500])
