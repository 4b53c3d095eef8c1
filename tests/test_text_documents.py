"""The text of documents (govsi.text): every format read back, hostile files bounded."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from govsi.text.documents import document_text
from govsi.text.language import declared_language, guess_language
from govsi.text.limits import MAX_TITLE_CHARS, TextLimits
from govsi.text.pdf import pdf_date
from testkit.simweb.documents import (
    _zip,
    make_doc,
    make_docx,
    make_ole,
    make_pdf,
    make_ppt,
    make_pptx,
    zip_bomb_docx,
)

LIMITS = TextLimits()
OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
UTC = UTC


@pytest.mark.parametrize(
    ("kind", "data", "text", "title", "date"),
    [
        ("PDF", make_pdf(["Občina Šentjur\nČrnomelj, žaba", "Druga stran"], "Poročilo",
                         "D:20240131120000+01'00'"),
         "Občina Šentjur\nČrnomelj, žaba\nDruga stran", "Poročilo",
         datetime(2024, 1, 31, 11, tzinfo=UTC)),
        ("DOCX", make_docx(["Potrdilo o stalnem prebivališču", "Vloga"], "Navodila",
                           "2024-02-01T10:00:00Z"),
         "Potrdilo o stalnem prebivališču\nVloga", "Navodila",
         datetime(2024, 2, 1, 10, tzinfo=UTC)),
        ("PPTX", make_pptx([["Prosojnica ena"], ["Čebela", "dva"]], "Predstavitev"),
         "Prosojnica ena\nČebela\ndva", "Predstavitev", None),
        ("DOC", make_doc([("Javna naročila\r", False), ("Priloga (cp1252)\r", True)]),
         "Javna naročila\nPriloga (cp1252)", None, None),
        ("PPT", make_ppt(["Prva prosojnica", "Občina Ljubljana"]),
         "Prva prosojnica\nObčina Ljubljana", None, None),
    ],
)  # fmt: skip
def test_each_format_gives_its_text_title_and_date(
    kind: str, data: bytes, text: str, title: str | None, date: datetime | None
) -> None:
    got = document_text(data, kind, LIMITS)  # type: ignore[arg-type]
    assert (got.status, got.text, got.title, got.date, got.reason) == (
        "ok",
        text,
        title,
        date,
        None,
    )


def test_word_fields_keep_their_result_and_drop_their_code() -> None:
    doc = make_doc([('Glej \x13 HYPERLINK "https://x" \x14stran\x15 zdaj.\rCelica\x07\r', False)])
    assert document_text(doc, "DOC", LIMITS).text == "Glej stran zdaj.\nCelica"


def test_a_master_slides_placeholder_is_not_text() -> None:
    assert "Master" not in document_text(make_ppt(["Vsebina"]), "PPT", LIMITS).text


@pytest.mark.parametrize(
    ("kind", "data", "status", "reason"),
    [
        ("PDF", b"", "empty", "no bytes"),
        ("PDF", b"%PDF-1.4 nothing else", "failed", "not a readable PDF"),
        ("PDF", make_docx(["x"]), "failed", "not a readable PDF"),
        ("DOCX", b"PK\x03\x04 broken", "failed", "not a readable zip file"),
        ("DOCX", make_pptx([["x"]]), "failed", "no DOCX content"),
        ("PPTX", make_docx(["x"]), "failed", "no PPTX content"),
        ("DOCX", _zip({"word/document.xml": "<w:document><open>"}), "failed", "unreadable DOCX"),
        ("DOC", OLE_MAGIC + b"x" * 600, "failed", "unreadable compound file"),
        ("DOC", make_pdf(["x"]), "failed", "not an OLE compound file"),
        ("DOC", make_ppt(["x"]), "failed", "no WordDocument stream"),
        ("PPT", make_doc([("x", True)]), "failed", "no PowerPoint Document stream"),
        ("DOC", make_doc([("skrito", True)], encrypted=True), "encrypted", "needs a password"),
        ("DOC", make_ole({"WordDocument": b"\xec\xa6" + b"\0" * 10}), "failed", "no Word 97-2003"),
        ("PDF", make_pdf([""]), "empty", None),
    ],
)  # fmt: skip
def test_a_broken_or_foreign_file_ends_in_a_status_and_a_reason(
    kind: str, data: bytes, status: str, reason: str | None
) -> None:
    got = document_text(data, kind, LIMITS)  # type: ignore[arg-type]
    assert got.status == status
    assert (got.reason is None) if reason is None else (reason in (got.reason or ""))


def test_a_zip_bomb_stops_at_the_unpacked_bound_or_the_text_bound() -> None:
    bomb = zip_bomb_docx(200_000_000)
    assert len(bomb) < 1_000_000
    limits = TextLimits(max_chars=10**9, max_unpacked_bytes=16 * 1024 * 1024)
    got = document_text(bomb, "DOCX", limits)
    assert got.status == "failed" and "unpacks past 16777216 bytes" in (got.reason or "")
    # The text's bound first: the rest of the part is never unpacked.
    got = document_text(bomb, "DOCX", TextLimits(max_chars=5_000))
    assert (got.status, len(got.text), got.truncated) == ("ok", 5_000, True)


def test_entities_in_a_part_are_never_expanded() -> None:
    laughs = (
        '<?xml version="1.0"?><!DOCTYPE w [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;">'
        '<!ENTITY c "&b;&b;&b;&b;&b;&b;">]><w:document xmlns:w="http://schemas.openxmlformats.org/'
        'wordprocessingml/2006/main"><w:body><w:p><w:r><w:t>x&c;y</w:t></w:r></w:p></w:body></w:document>'
    )
    got = document_text(_zip({"word/document.xml": laughs}), "DOCX", LIMITS)
    assert "aaaa" not in got.text


def test_a_pdf_of_ten_thousand_pages_reads_only_max_pages() -> None:
    pdf = make_pdf([f"stran {i}" for i in range(10_000)])
    got = document_text(pdf, "PDF", TextLimits(max_pages=50))
    assert (got.status, got.pages, got.truncated) == ("ok", 10_000, True)
    assert got.text.splitlines()[-1] == "stran 49"


def test_text_is_cut_at_max_chars() -> None:
    got = document_text(make_docx(["a" * 100, "b" * 100]), "DOCX", TextLimits(max_chars=150))
    assert (len(got.text), got.truncated) == (150, True)
    got = document_text(make_doc([("c" * 500, True)]), "DOC", TextLimits(max_chars=100))
    assert got.text == "c" * 100


def test_out_of_time_keeps_what_was_read_and_says_so() -> None:
    got = document_text(make_pdf(["ena", "dve"]), "PDF", TextLimits(max_seconds=-1))
    assert got.status == "timeout" and "reading took over" in (got.reason or "")


def test_broken_utf16_in_a_doc_is_replaced_not_fatal() -> None:
    got = document_text(make_doc([("ok\ud800ok", False)]), "DOC", LIMITS)
    assert got.status == "ok" and got.text.startswith("ok") and got.text.endswith("ok")


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("D:20240131120000+01'00'", datetime(2024, 1, 31, 11, tzinfo=UTC)),
        ("D:20240131120000Z", datetime(2024, 1, 31, 12, tzinfo=UTC)),
        ("D:20240131120000-02'30'", datetime(2024, 1, 31, 14, 30, tzinfo=UTC)),
        ("D:2024", datetime(2024, 1, 1, tzinfo=UTC)),
        ("20240131", datetime(2024, 1, 31, tzinfo=UTC)),
        ("D:20241399000000", None),
        ("D:20240131120000+99'00'", None),
        ("yesterday", None),
        ("", None),
    ],
)
def test_pdf_dates(value: str, expected: datetime | None) -> None:
    assert pdf_date(value) == expected


@pytest.mark.parametrize(
    ("text", "declared", "expected"),
    [
        ("Vlada je sprejela uredbo, ki jo bodo občine lahko uporabile tudi za vloge.", None, "sl"),
        (
            "The government adopted the decree, which is for the use of the municipalities.",
            "sl",
            "en",
        ),
        ("Občina", "sl-SI", "sl"),
        ("Gemeinde", "DE", "de"),
        ("12345", None, None),
        ("", "x", None),
        ("in in in the", None, None),
    ],
)
def test_language(text: str, declared: str | None, expected: str | None) -> None:
    assert guess_language(text, declared) == expected


@pytest.mark.parametrize(
    ("value", "expected"), [("sl-SI", "sl"), (" en ", "en"), ("", None), (None, None), ("1x", None)]
)
def test_declared_language(value: str | None, expected: str | None) -> None:
    assert declared_language(value) == expected


def test_a_documents_title_is_cut_as_a_pages_is() -> None:
    got = document_text(make_docx(["Besedilo"], "Naslov   " + "x" * 5_000_000), "DOCX", LIMITS)
    assert got.status == "ok" and got.title is not None
    assert got.title.startswith("Naslov x") and len(got.title) == MAX_TITLE_CHARS
