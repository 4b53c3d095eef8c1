"""What the index holds of one page (pure)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True, slots=True)
class SearchDocument:
    """One page or document as search sees it: its text and what results show and filter
    by. ``date``: the document's own date, else when the page was fetched (naive UTC)."""

    page_id: int
    url: str
    host: str
    kind: str  # HTML, PDF, DOC, DOCX, PPT, PPTX
    title: str
    text: str
    language: str | None
    date: datetime | None
    depth: int | None
    extracted_at: str  # page_text.extracted_at as crawldb returned it: the version's mark


def domains(host: str) -> list[str]:
    """``host`` and every domain above it, for ``site:`` filters: ``www.gov.si`` →
    ``www.gov.si``, ``gov.si``, ``si``."""
    parts = host.lower().split(".")
    return [".".join(parts[i:]) for i in range(len(parts)) if parts[i]]
