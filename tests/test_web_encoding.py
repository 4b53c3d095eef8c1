"""Tests for govsi.web.encoding: choosing the character encoding as a browser does."""

from __future__ import annotations

import codecs

import pytest

from govsi.web.encoding import decode_html

PAGE = "https://www.gov.si/a/b/page.html"

# -- decode_html -------------------------------------------------------------------------

SLOVENIAN = (
    "Vlada Republike Slovenije je na današnji seji sprejela sklep o čiščenju žlebov in "
    "šolskih površin. Župan občine je poudaril, da bodo vsi člani šole sodelovali pri "
    "akciji. Čebelarji in Šoštanjčani so ŠOLO in ŽELEZNICO pohvalili. "
)
LETTERS = "č š ž Č Š Ž"


def page_html(head: str = "", paragraphs: int = 3) -> str:
    return (
        f"<!DOCTYPE html><html><head>{head}<title>Novice</title></head>"
        f"<body><h1>{LETTERS}</h1><p>{SLOVENIAN * paragraphs}</p></body></html>"
    )


# Long enough for the detector to be confident, and confidently wrong for ISO-8859-2
# (it answers ISO-8859-10 without the Central European check).
LONG_SLOVENE = (
    "<html><head><title>Obvestilo</title></head><body><p>Vlada Republike Slovenije je na "
    "današnji seji sprejela sklep o spremembah uredbe. Občine morajo do konca leta poročati "
    "o porabi sredstev, ki so jih prejele za šolstvo, zdravstvo in ceste. Več o tem v "
    "sporočilu za javnost.</p><p>Čestitke vsem občanom: šola, žaba, čebela. ČŠŽ čšž.</p>"
    "</body></html>"
)
FRENCH = (
    "<html><head><title>Communiqué</title></head><body><p>Le gouvernement a adopté "
    "aujourd'hui une décision sur la modification du règlement. Les communes doivent "
    "déclarer, avant la fin de l'année, l'utilisation des crédits reçus pour l'école, "
    "la santé et les routes. Élève, fenêtre, où, à côté, déjà vu.</p></body></html>"
)

DECODE_CASES = [
    pytest.param(
        page_html().encode("utf-8"), "text/html; charset=utf-8", "utf-8", id="utf8-header"
    ),
    pytest.param(
        page_html().encode("cp1250"),
        "text/html; charset=windows-1250",
        "windows-1250",
        id="cp1250-header",
    ),
    pytest.param(
        page_html().encode("cp1250"),
        'text/html;charset="Windows-1250"',
        "windows-1250",
        id="cp1250-header-quoted-mixed-case",
    ),
    pytest.param(
        page_html('<meta charset="windows-1250">').encode("cp1250"),
        "text/html",
        "windows-1250",
        id="cp1250-meta-charset-only",
    ),
    pytest.param(
        page_html(
            '<meta http-equiv="Content-Type" content="text/html; charset=windows-1250">'
        ).encode("cp1250"),
        None,
        "windows-1250",
        id="cp1250-meta-http-equiv-only",
    ),
    pytest.param(
        page_html().encode("cp1250"), None, "windows-1250", id="cp1250-detected-no-declaration"
    ),
    pytest.param(
        page_html().encode("cp1250"),
        "text/html",
        "windows-1250",
        id="cp1250-detected-header-without-charset",
    ),
    pytest.param(page_html().encode("iso8859-2"), None, "iso-8859-2", id="iso-8859-2-detected"),
    pytest.param(
        page_html().encode("iso8859-2"),
        "text/html; charset=ISO-8859-2",
        "iso-8859-2",
        id="iso-8859-2-header",
    ),
    pytest.param(
        page_html("<meta charset=utf-8>").encode("cp1250"),
        "text/html; charset=windows-1250",
        "windows-1250",
        id="header-beats-meta",
    ),
    pytest.param(
        page_html('<meta charset="windows-1250">').encode("cp1250"),
        "text/html; charset=no-such-charset",
        "windows-1250",
        id="unknown-header-label-falls-to-meta",
    ),
    pytest.param(
        page_html().encode("cp1250"),
        "text/html; charset=no-such-charset",
        "windows-1250",
        id="unknown-header-label-falls-to-detection",
    ),
    pytest.param(
        page_html().encode("utf-8"),
        "text/html; charset=base64",
        "utf-8",
        id="non-text-codec-label-ignored",
    ),
    pytest.param(
        page_html().encode("utf-8"),
        "text/html; charset=utf-7",
        "utf-8",
        id="utf7-label-refused",
    ),
    pytest.param(
        page_html('<meta charset="bogus-label">').encode("cp1250"),
        None,
        "windows-1250",
        id="unknown-meta-label-falls-to-detection",
    ),
    pytest.param(
        codecs.BOM_UTF8 + page_html().encode("utf-8"),
        "text/html; charset=windows-1250",
        "utf-8",
        id="utf8-bom-beats-header",
    ),
    pytest.param(
        codecs.BOM_UTF16_LE + page_html().encode("utf-16-le"),
        None,
        "utf-16le",
        id="utf16le-bom",
    ),
    pytest.param(
        codecs.BOM_UTF16_BE + page_html().encode("utf-16-be"),
        "text/html",
        "utf-16be",
        id="utf16be-bom",
    ),
    pytest.param(
        page_html('<meta charset="utf-16">').encode("utf-8"),
        None,
        "utf-8",
        id="meta-utf16-means-utf8",
    ),
    pytest.param(page_html().encode("utf-8"), None, "utf-8", id="utf8-detected-no-declaration"),
    pytest.param(
        (page_html() + "č").encode("utf-8")[:-1],
        None,
        "utf-8",
        id="utf8-truncated-inside-a-character",
    ),
    pytest.param(
        ("<html>" + " " * 5000 + '<meta charset="windows-1252">' + page_html()).encode("cp1250"),
        None,
        "windows-1250",
        id="meta-after-4k-ignored",
    ),
    pytest.param(
        ('<html><head><!-- <meta charset="windows-1252"> -->' + page_html()).encode("cp1250"),
        None,
        "windows-1250",
        id="meta-in-comment-ignored",
    ),
]


@pytest.mark.parametrize(("body", "header", "encoding"), DECODE_CASES)
def test_decode_html_slovenian(body: bytes, header: str | None, encoding: str) -> None:
    text, name = decode_html(body, header)
    assert name == encoding
    assert LETTERS in text
    assert SLOVENIAN in text
    assert "\ufeff" not in text
    assert text.endswith("</html>") or encoding == "utf-8"


@pytest.mark.parametrize("encoding", ["iso-8859-2", "windows-1250"])
def test_unlabelled_slovenian_text_gets_the_central_european_code_page(encoding: str) -> None:
    text, name = decode_html(LONG_SLOVENE.encode(encoding), "text/html")
    assert name == encoding
    assert text == LONG_SLOVENE


def test_unlabelled_text_without_sz_letters_is_not_taken_for_central_european() -> None:
    _, name = decode_html(FRENCH.encode("cp1252"), "text/html")
    assert name not in ("windows-1250", "iso-8859-2")


LATIN1_CASES = [
    pytest.param("iso-8859-1", id="iso-8859-1"),
    pytest.param("ISO_8859-1", id="iso_8859-1-upper"),
    pytest.param("latin1", id="latin1"),
    pytest.param("latin-1", id="latin-1"),
    pytest.param("us-ascii", id="us-ascii"),
    pytest.param("ascii", id="ascii"),
    pytest.param("windows-1252", id="windows-1252"),
]


@pytest.mark.parametrize("label", LATIN1_CASES)
def test_decode_latin1_labels_mean_windows_1252(label: str) -> None:
    # 0x80 is the euro sign in windows-1252 but a control character in ISO-8859-1.
    text, name = decode_html(b"<p>Cena: 5 \x80, caf\xe9</p>", f"text/html; charset={label}")
    assert name == "windows-1252"
    assert text == "<p>Cena: 5 €, café</p>"


OTHER_DECODE_CASES = [
    pytest.param(b"", None, "", "utf-8", id="empty"),
    pytest.param(b"<p>plain ascii</p>", None, "<p>plain ascii</p>", "utf-8", id="ascii-only"),
    pytest.param(b"<p>a\x00b</p>", None, "<p>a\ufffdb</p>", "utf-8", id="nul-replaced"),
    pytest.param(
        b"<p>\xc4\x8d \xff</p>",
        "text/html; charset=utf-8",
        "<p>č \ufffd</p>",
        "utf-8",
        id="invalid-bytes-replaced",
    ),
    pytest.param(
        b"<p>abc \xe8</p>",
        None,
        "<p>abc \ufffd</p>",
        "utf-8",
        id="short-8bit-body-never-guessed-utf16",
    ),
    pytest.param(
        b"<p>\xe8</p>",
        "text/html; charset=cp1250",
        "<p>č</p>",
        "windows-1250",
        id="cp1250-alias-label",
    ),
    pytest.param(
        b'<?xml version="1.0" encoding="windows-1250"?><html><p>\x9a</p></html>',
        None,
        '<?xml version="1.0" encoding="windows-1250"?><html><p>š</p></html>',
        "windows-1250",
        id="xml-declaration",
    ),
]


@pytest.mark.parametrize(("body", "header", "text", "encoding"), OTHER_DECODE_CASES)
def test_decode_html_other(body: bytes, header: str | None, text: str, encoding: str) -> None:
    assert decode_html(body, header) == (text, encoding)


def test_decode_garbage_never_raises() -> None:
    garbage = bytes(range(256)) * 40
    for header in (None, "text/html", "text/html; charset=", "charset=utf-16", ";;;"):
        text, name = decode_html(garbage, header)
        assert isinstance(text, str)
        assert "\x00" not in text
        assert name
