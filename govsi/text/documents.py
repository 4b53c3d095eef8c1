"""``document_text``: the text of any binary document the crawl keeps, by its type, within
``TextLimits``; whatever the bytes, a ``DocumentText`` with a status comes back (pure)."""

from __future__ import annotations

from govsi.text.limits import DocumentText, TextLimits
from govsi.text.ole import ole_text
from govsi.text.ooxml import ooxml_text
from govsi.text.pdf import pdf_text
from govsi.web.contenttypes import DocumentType

__all__ = ["document_text"]


def document_text(data: bytes, kind: DocumentType, limits: TextLimits) -> DocumentText:
    """The text of ``data``, a document of type ``kind``. A file that is not what its type
    says, is broken, encrypted or past a bound ends in that status with a reason; an
    unexpected error in a reader too (a bug, not the crawl's end)."""
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
