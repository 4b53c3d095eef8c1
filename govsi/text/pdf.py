"""The text of a PDF, with pdfium (pypdfium2): page by page, within ``TextLimits`` (pure)."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

from govsi.text.limits import Budget, DocumentText, TextLimits, memory_bounded

# D:YYYYMMDDHHmmSSOHH'mm' (PDF 32000-1, 7.9.4); every part after the year is optional.
_PDF_DATE = re.compile(
    r"D?:?(\d{4})(\d{2})?(\d{2})?(\d{2})?(\d{2})?(\d{2})?\s*(?:([+\-Z])(\d{2})?'?(\d{2})?'?)?"
)


def pdf_date(value: str) -> datetime | None:
    """A PDF date string as an aware datetime (UTC when it names no zone); None when it
    is not one."""
    m = _PDF_DATE.match(value.strip())
    if m is None:
        return None
    year, month, day, hour, minute, second, sign, tz_h, tz_m = m.groups()
    try:
        zone = UTC
        if sign in ("+", "-"):
            offset = timedelta(hours=int(tz_h or 0), minutes=int(tz_m or 0))
            zone = timezone(-offset if sign == "-" else offset)
        return datetime(
            int(year), int(month or 1), int(day or 1), int(hour or 0), int(minute or 0),
            int(second or 0), tzinfo=zone,
        ).astimezone(UTC)  # fmt: skip
    except (ValueError, OverflowError):  # past year 9999 once its zone is applied
        return None


@memory_bounded
def pdf_text(data: bytes, limits: TextLimits) -> DocumentText:
    """The text of the PDF ``data``: its pages' text in order (at most ``max_pages``),
    its title and date from its metadata. pdfium unpacks a page's content whole, whatever
    its size: the worker's memory bound stops it; a page's text is taken only as far as
    the text bound has room, and the time bound is checked before it is."""
    import pypdfium2 as pdfium

    try:
        pdf = pdfium.PdfDocument(data)
    except pdfium.PdfiumError as e:
        if "password" in str(e).lower():
            return DocumentText("encrypted", reason="the PDF needs a password")
        return DocumentText("failed", reason=f"not a readable PDF: {e}")
    try:
        meta = pdf.get_metadata_dict(skip_empty=True)
        date = pdf_date(meta.get("ModDate", "")) or pdf_date(meta.get("CreationDate", ""))
        pages = len(pdf)
        budget = Budget(limits)
        timed_out = False
        for number in range(min(pages, limits.max_pages)):
            if budget.out_of_time():
                timed_out = True
                break
            page = pdf[number]
            try:
                textpage = page.get_textpage()
                try:
                    # Loading the page may have taken long: no text of it past the bound.
                    if timed_out := budget.out_of_time():
                        break
                    more = budget.add(_page_text(textpage, budget.room()))
                finally:
                    textpage.close()
            finally:
                page.close()
            if not more:
                break
        if pages > limits.max_pages:
            budget.truncated = True
        return budget.result(meta.get("Title", "").strip(), date, pages, timed_out)
    finally:
        pdf.close()


def _page_text(textpage: Any, room: int) -> str:
    """A page's text, at most about ``room`` characters of it asked of pdfium (a page can
    hold millions; a few more than ``room`` so the budget sees that it was cut)."""
    count = min(textpage.count_chars(), room + 1)
    if count <= 0:
        return ""
    text: str = textpage.get_text_range(0, count)
    return text.replace("\r\n", "\n")
