"""Tests for govsi.web.contenttypes: HTML, documents, or something else."""

from __future__ import annotations

import codecs

import pytest

from govsi.web.contenttypes import (
    classify,
    declared_length,
    document_extension,
    filename_of,
    sniff_html,
)
from govsi.web.extract import (
    extract_links,
    header_says_nofollow,
    parse_html,
)

PAGE = "https://www.gov.si/a/b/page.html"

# -- classify --------------------------------------------------------------------------------

CLASSIFY_CASES = [
    pytest.param("text/html", "https://www.gov.si/", b"", "HTML", id="html"),
    pytest.param("text/html; charset=UTF-8", PAGE, b"", "HTML", id="html-with-charset"),
    pytest.param("TEXT/HTML;charset=windows-1250", PAGE, b"", "HTML", id="html-upper"),
    pytest.param("  text/html  ", PAGE, b"", "HTML", id="html-padded"),
    pytest.param("application/xhtml+xml", PAGE, b"", "HTML", id="xhtml"),
    pytest.param("application/pdf", "https://www.gov.si/f", b"", "PDF", id="pdf"),
    pytest.param("application/msword", "https://www.gov.si/f", b"", "DOC", id="doc"),
    pytest.param(
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "https://www.gov.si/f",
        b"",
        "DOCX",
        id="docx",
    ),
    pytest.param("application/vnd.ms-powerpoint", "https://www.gov.si/f", b"", "PPT", id="ppt"),
    pytest.param(
        "application/vnd.openxmlformats-officedocument.presentationml.presentation",
        "https://www.gov.si/f",
        b"",
        "PPTX",
        id="pptx",
    ),
    pytest.param("application/x-pdf", "https://www.gov.si/f", b"", "PDF", id="x-pdf-alias"),
    pytest.param("text/html", "https://www.gov.si/f.pdf", b"%PDF", "HTML", id="pdf-url-html-type"),
    pytest.param("application/pdf", "https://www.gov.si/f.html", b"", "PDF", id="type-beats-ext"),
    pytest.param("text/plain", "https://www.gov.si/f.txt", b"<html>", None, id="text-plain"),
    pytest.param("text/plain", "https://www.gov.si/f.pdf", b"", None, id="text-plain-pdf-url"),
    pytest.param("image/png", "https://www.gov.si/i.png", b"", None, id="image"),
    pytest.param("image/jpeg; q=1", "https://www.gov.si/i.pdf", b"", None, id="image-pdf-url"),
    pytest.param("application/json", "https://www.gov.si/api", b"{}", None, id="json"),
    pytest.param("application/zip", "https://www.gov.si/a.zip", b"PK", None, id="zip"),
    pytest.param(
        "application/vnd.ms-excel", "https://www.gov.si/a.xls", b"", None, id="excel-not-stored"
    ),
    pytest.param(None, "https://www.gov.si/f.pdf", b"", "PDF", id="missing-type-pdf-ext"),
    pytest.param("", "https://www.gov.si/F.PDF", b"", "PDF", id="empty-type-upper-ext"),
    pytest.param(
        "application/octet-stream", "https://www.gov.si/f.docx", b"PK", "DOCX", id="octet-docx"
    ),
    pytest.param("binary/octet-stream", "https://www.gov.si/f.doc", b"", "DOC", id="binary-doc"),
    pytest.param(
        "application/x-download", "https://www.gov.si/f.ppt", b"", "PPT", id="x-download-ppt"
    ),
    pytest.param(
        "application/force-download; name=x",
        "https://www.gov.si/f.pptx",
        b"",
        "PPTX",
        id="force-download-pptx",
    ),
    pytest.param(
        "Application/Unknown", "https://www.gov.si/f.pdf", b"", "PDF", id="unknown-type-pdf"
    ),
    pytest.param(
        "application/octet-stream",
        "https://www.gov.si/get?file=a.pdf",
        b"",
        None,
        id="ext-in-query-ignored",
    ),
    pytest.param(
        "application/octet-stream",
        "https://www.gov.si/get?file=a.pdf",
        b"<!DOCTYPE html><html>",
        "HTML",
        id="octet-sniffed-html",
    ),
    pytest.param(None, "https://www.gov.si/", b"<html><body>", "HTML", id="missing-sniffed-html"),
    pytest.param(None, "https://www.gov.si/", b"Hello", None, id="missing-not-html"),
    pytest.param(None, "https://www.gov.si/", b"", None, id="missing-empty-body"),
    pytest.param("garbage", "https://www.gov.si/x.pdf", b"", "PDF", id="invalid-type-is-no-type"),
    pytest.param(
        "application/octet-stream",
        "https://www.gov.si/f.pdf",
        b"<html>",
        "PDF",
        id="ext-beats-sniff",
    ),
    pytest.param(None, "https://www.gov.si/a.pdf;jsessionid=AB12", b"", "PDF", id="path-parameter"),
    pytest.param(None, "https://www.gov.si/a.pdf/", b"", None, id="pdf-directory"),
    pytest.param(None, "https://www.gov.si/a.pdfx", b"", None, id="similar-extension"),
    pytest.param(None, "https://www.gov.si/a.pdf#page=2", b"", "PDF", id="fragment-ignored"),
]


@pytest.mark.parametrize(("content_type", "url", "body", "expected"), CLASSIFY_CASES)
def test_classify(content_type: str | None, url: str, body: bytes, expected: str | None) -> None:
    assert classify(content_type, url, body) == expected


def test_classify_body_start_defaults_to_nothing() -> None:
    assert classify(None, "https://www.gov.si/") is None
    assert classify("text/html", "https://www.gov.si/") == "HTML"


DOCUMENT_EXTENSION_CASES = [
    pytest.param("https://www.gov.si/f.pdf", "PDF", id="pdf"),
    pytest.param("https://www.gov.si/dir/F.Docx", "DOCX", id="mixed-case"),
    pytest.param("https://www.gov.si/a.b.c.pptx?x=1", "PPTX", id="query-ignored"),
    pytest.param("https://www.gov.si/prezentacija%201.ppt", "PPT", id="escaped-name"),
    pytest.param("https://www.gov.si/f%2Edoc", "DOC", id="escaped-dot"),
    pytest.param("https://www.gov.si/get.php?f=a.pdf", None, id="query-extension"),
    pytest.param("https://www.gov.si/a.pdf/", None, id="trailing-slash"),
    pytest.param("https://www.gov.si/", None, id="root"),
    pytest.param("https://www.gov.si", None, id="no-path"),
    pytest.param("https://www.gov.si/pdf", None, id="no-dot"),
    pytest.param("https://www.gov.si/slika.png", None, id="image"),
    pytest.param("https://www.gov.si/dir.pdf/index.html", None, id="directory-extension"),
    pytest.param("/relative/file.pdf", "PDF", id="relative-url"),
    pytest.param("not a url at all", None, id="garbage"),
]


@pytest.mark.parametrize(("url", "expected"), DOCUMENT_EXTENSION_CASES)
def test_document_extension(url: str, expected: str | None) -> None:
    assert document_extension(url) == expected


SNIFF_CASES = [
    pytest.param(b"<!DOCTYPE html>\n<html>", True, id="doctype"),
    pytest.param(b"<!doctype HTML PUBLIC", True, id="doctype-legacy"),
    pytest.param(b"  \r\n\t<html lang=sl>", True, id="leading-whitespace-html"),
    pytest.param(b"<HEAD><title>", True, id="head-upper"),
    pytest.param(b"<body>", True, id="body"),
    pytest.param(b"<!-- comment --><p>", True, id="comment"),
    pytest.param(codecs.BOM_UTF8 + b"<html>", True, id="utf8-bom"),
    pytest.param(codecs.BOM_UTF16_LE + "<html>".encode("utf-16-le"), True, id="utf16-bom"),
    pytest.param(b"<div class=x>", True, id="div-signature"),
    pytest.param(b"<p>", True, id="p-signature"),
    pytest.param(
        b'<?xml version="1.0"?>\n<!DOCTYPE html PUBLIC "x" "y">\n<html xmlns="...">',
        True,
        id="xhtml-prolog",
    ),
    pytest.param(b"junk before " * 10 + b"<html>", True, id="html-tag-within-1k"),
    pytest.param(b"x" * 1100 + b"<html>", False, id="html-tag-after-1k"),
    pytest.param(b"<htmlx>", False, id="not-a-tag-name"),
    pytest.param(b"<pre>text", False, id="pre-not-a-signature"),
    pytest.param(b"%PDF-1.7\n", False, id="pdf"),
    pytest.param(b"\x89PNG\r\n\x1a\n", False, id="png"),
    pytest.param(b'{"html": "<b>"}', False, id="json"),
    pytest.param(b"Hello <html", True, id="html-truncated-at-end"),
    pytest.param(b"", False, id="empty"),
    pytest.param(b"   ", False, id="whitespace"),
]


@pytest.mark.parametrize(("body", "expected"), SNIFF_CASES)
def test_sniff_html(body: bytes, expected: bool) -> None:
    assert sniff_html(body) is expected


FILENAME_CASES = [
    pytest.param("https://www.gov.si/img/logo.png", "logo.png", id="simple"),
    pytest.param(
        "https://www.gov.si/img/%C4%8Debela%20v%20cvetu.jpg",
        "čebela v cvetu.jpg",
        id="percent-decoded",
    ),
    pytest.param("https://www.gov.si/img/logo.png?v=3#x", "logo.png", id="query-fragment"),
    pytest.param("https://www.gov.si/img/", "", id="directory"),
    pytest.param("https://www.gov.si/", "", id="root"),
    pytest.param("https://www.gov.si", "", id="no-path"),
    pytest.param("https://www.gov.si/image", "image", id="no-extension"),
    pytest.param("https://www.gov.si/a%2Fb.png", "a/b.png", id="escaped-slash"),
    pytest.param("https://www.gov.si/a%00b.png", "ab.png", id="nul-removed"),
    pytest.param("https://www.gov.si/" + "n" * 300 + ".png", "n" * 255, id="max-255"),
    pytest.param("https://www.gov.si/%FF.png", "\ufffd.png", id="invalid-utf8-escape"),
]


@pytest.mark.parametrize(("url", "expected"), FILENAME_CASES)
def test_filename_of(url: str, expected: str) -> None:
    assert filename_of(url) == expected


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        (["nofollow"], True),
        (["noindex, nofollow"], True),
        (["NONE"], True),
        (["noindex"], False),
        ([], False),
        (["govsi-crawler: nofollow"], True),
        (["GOVSI-CRAWLER: none"], True),
        (["googlebot: nofollow"], False),
        (["googlebot: nofollow", "noindex"], False),
        (["googlebot: noindex", "nofollow"], True),
        (["unavailable_after: 25 Jun 2010 15:00:00 PST"], False),
        (["unavailable_after: 25 Jun 2010, nofollow"], True),
        (["max-snippet: 20, nofollow"], True),
    ],
)
def test_header_says_nofollow(values: list[str], expected: bool) -> None:
    assert header_says_nofollow(values, "govsi-crawler") is expected


def test_links_from_a_tree_parsed_once_are_those_of_the_text() -> None:
    # The spider parses each page once for its links and its duplicate check.
    html = (
        "<html><head><base href='/x/'></head><body><a href='a'>a</a>"
        "<span onclick=\"location.href='b'\">b</span><img src='c.png'></body></html>"
    )
    root = parse_html(html)
    assert root is not None
    before = len(list(root.iter()))
    assert extract_links(html, PAGE, root) == extract_links(html, PAGE)
    assert len(list(root.iter())) == before  # the tree is left as it was


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("1234", 1234),
        (" 42 ", 42),
        ("0", 0),
        ("007", 7),
        (None, None),
        ("", None),
        ("²", None),  # a digit to str.isdigit(), not to int()
        ("١٢", None),  # Arabic-Indic digits: int() would read 12
        ("\uff11\uff12", None),  # fullwidth digits
        ("-5", None),
        ("1e3", None),
        ("12 34", None),
        ("9" * 18, 10**18 - 1),
        ("9" * 19, None),  # more than a BIGINT holds
    ],
)
def test_declared_length_is_ascii_digits_only(value: str | None, expected: int | None) -> None:
    assert declared_length(value) == expected
