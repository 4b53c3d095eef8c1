"""What a response is: HTML, one of the document types crawldb keeps, or something else.

``classify`` trusts the Content-Type and falls back to the path's extension and to content
sniffing (MIME Sniffing Standard) only when the server sent no useful type.
"""

from __future__ import annotations

import codecs
import re
from typing import Final, Literal, get_args
from urllib.parse import unquote, urlsplit

import ada_url

__all__ = [
    "DOCUMENT_TYPES",
    "DocumentType",
    "ResponseType",
    "classify",
    "declared_length",
    "document_extension",
    "filename_of",
    "sniff_html",
]

# The binary documents crawldb keeps (its data_type rows): one list for the whole crawler.
DocumentType = Literal["PDF", "DOC", "DOCX", "PPT", "PPTX"]
DOCUMENT_TYPES: Final[tuple[DocumentType, ...]] = get_args(DocumentType)
# What ``classify`` makes of a response it knows: HTML or a document.
ResponseType = Literal["HTML", DocumentType]

_TYPE_CODES: dict[str, ResponseType] = {
    "text/html": "HTML",
    "application/xhtml+xml": "HTML",
    "application/pdf": "PDF",
    "application/msword": "DOC",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "DOCX",
    "application/vnd.ms-powerpoint": "PPT",
    "application/vnd.openxmlformats-officedocument.presentationml.presentation": "PPTX",
    # Non-standard spellings some servers still send for the same formats.
    "application/x-pdf": "PDF",
    "application/acrobat": "PDF",
    "application/x-msword": "DOC",
    "application/vnd.ms-word": "DOC",
    "application/mspowerpoint": "PPT",
    "application/x-mspowerpoint": "PPT",
}
# Types that only say "some bytes" (often "make the browser save this"); the server
# knows no more than the file name tells, so the name decides.
_UNINFORMATIVE_TYPES = frozenset(
    {
        "",
        "*/*",
        "application/octet-stream",
        "binary/octet-stream",
        "application/x-download",
        "application/force-download",
        "application/unknown",
    }
)
_EXTENSION_CODES: dict[str, DocumentType] = {
    "pdf": "PDF",
    "doc": "DOC",
    "docx": "DOCX",
    "ppt": "PPT",
    "pptx": "PPTX",
}

# The MIME Sniffing Standard's HTML signatures: one of these tags (followed by a space
# or ">"; we also accept other whitespace, "/" and a cut-off) after leading whitespace.
_HTML_SIGNATURE = re.compile(
    rb"<(?:!doctype\s+html|html|head|body|script|iframe|h1|div|font|table|a|style|title"
    rb"|b|br|p)(?=[\s>/]|$)|<!--",
    re.IGNORECASE,
)
# XHTML and pages with junk before the markup still have an <html> tag near the start.
_HTML_TAG = re.compile(rb"<html(?=[\s>/]|$)", re.IGNORECASE)
_UTF16_BOMS = {codecs.BOM_UTF16_LE: "utf-16-le", codecs.BOM_UTF16_BE: "utf-16-be"}
_SNIFF_BYTES = 1024


def _media_type(content_type: str | None) -> str:
    if not content_type:
        return ""
    # Parameters (charset) do not change the type; a comma means duplicate headers were
    # joined, and the first one is what the server meant.
    media = content_type.split(";", 1)[0].split(",", 1)[0].strip().lower()
    # Something that is not type/subtype is no type at all (MIME Sniffing Standard).
    return media if "/" in media else ""


def _path_of(url: str) -> str:
    try:
        return ada_url.parse_url(url, ("pathname",))["pathname"]
    except ValueError:
        pass
    try:
        return urlsplit(url).path
    except ValueError:
        return ""


def _last_segment(url: str) -> str:
    return _path_of(url).rpartition("/")[2]


def document_extension(url: str) -> DocumentType | None:
    """The document type code (PDF, DOC, DOCX, PPT, PPTX) the URL's path ends in, else None.

    Only the path counts: ``/get?file=a.pdf`` is not a PDF by its name. Path parameters
    (``a.pdf;jsessionid=...``) are ignored.
    """
    segment = _last_segment(url).partition(";")[0]
    if "%" in segment:
        segment = unquote(segment)
    _, dot, extension = segment.rpartition(".")
    return _EXTENSION_CODES.get(extension.lower()) if dot else None


def sniff_html(body_start: bytes) -> bool:
    """Whether the first bytes of a body look like HTML (MIME Sniffing Standard, roughly)."""
    head = body_start[:_SNIFF_BYTES]
    for bom, codec in _UTF16_BOMS.items():
        if head.startswith(bom):
            head = head[len(bom) :].decode(codec, "replace").encode("utf-8", "replace")
            break
    else:
        head = head.removeprefix(codecs.BOM_UTF8)
    if _HTML_SIGNATURE.match(head.lstrip(b" \t\n\r\f")):
        return True
    return _HTML_TAG.search(head) is not None


def classify(content_type: str | None, url: str, body_start: bytes = b"") -> ResponseType | None:
    """HTML, PDF, DOC, DOCX, PPT or PPTX, or None for anything else (images, zip, json...).

    The Content-Type decides when it names a type; a ``.pdf`` URL serving text/html is
    HTML. Only when it does not (missing, application/octet-stream and the like) the
    path's extension decides, and failing that whether ``body_start`` sniffs as HTML.
    """
    media = _media_type(content_type)
    if media not in _UNINFORMATIVE_TYPES:
        return _TYPE_CODES.get(media)
    code = document_extension(url)
    if code is not None:
        return code
    return "HTML" if sniff_html(body_start) else None


def filename_of(url: str) -> str:
    """The last path segment, percent-decoded, at most 255 characters; "" for a directory."""
    # NUL cannot be stored in a PostgreSQL text column, and is no part of a file name.
    return unquote(_last_segment(url)).replace("\x00", "")[:255]


def declared_length(value: str | None) -> int | None:
    """A Content-Length value as a number of bytes, or None when it is not one.
    ``str.isdigit`` accepts "²" and "١٢", which ``int`` refuses or reads as digits no
    server meant; a page.size (BIGINT) holds 18 digits."""
    value = (value or "").strip()
    if not (value.isascii() and value.isdigit()) or len(value) > 18:
        return None
    return int(value)
