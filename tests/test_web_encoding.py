"""Tests for govsi.web.encoding: choosing the character encoding as a browser does."""

from __future__ import annotations

import codecs
import random
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from govsi.web import prescan as prescan_module
from govsi.web.encoding import declared_encoding, decode_html
from govsi.web.prescan import ENCODINGS, PRESCAN_BYTES, encoding_for_label, prescan

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
        # The comment keeps the Slovenian text in what detection reads.
        (
            f"<html><!-- {SLOVENIAN * (PRESCAN_BYTES // len(SLOVENIAN) + 1)} -->"
            f'<meta charset="windows-1252">{page_html()}'
        ).encode("cp1250"),
        None,
        "windows-1250",
        id="meta-after-the-prescan-window-ignored",
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


def test_a_meta_past_the_first_kilobyte_still_counts() -> None:
    # The HTML Standard's parser changes the encoding on a <meta> it meets while the
    # encoding is a guess (browsers reparse): the declaration wins over detection, which
    # would read these bytes as windows-1250.
    body = ("<html>" + " " * 5000 + '<meta charset="windows-1252">' + page_html()).encode("cp1250")
    assert decode_html(body, None)[1] == "windows-1252"


def test_latin_1_is_no_label() -> None:
    # "latin1" is a label of windows-1252, "latin-1" is not: a browser passes over it.
    body = page_html('<meta charset="windows-1250">').encode("cp1250")
    assert decode_html(body, "text/html; charset=latin-1")[1] == "windows-1250"
    assert decode_html(body, "text/html; charset=latin1")[1] == "windows-1252"


# -- html5lib-tests' encoding suite ------------------------------------------------------

SUITE = Path(__file__).parent / "data" / "encoding"
SUITE_FILES = ("tests1.dat", "tests2.dat", "test-yahoo-jp.dat")


def suite_cases() -> Iterator[pytest.ParameterSet]:
    """Each ``#data`` / ``#encoding`` pair of the suite's files, the data as raw bytes."""
    for name in SUITE_FILES:
        chunks = (SUITE / name).read_bytes().split(b"#data\n")[1:]
        for number, chunk in enumerate(chunks):
            data, separator, rest = chunk.partition(b"\n#encoding\n")
            assert separator, f"{name} case {number} has no #encoding"
            expected = rest.split(b"\n", 1)[0].strip().decode("ascii").lower()
            yield pytest.param(data, expected, id=f"{name}-{number}")


SUITE_CASES = list(suite_cases())


def test_the_suite_has_its_82_cases() -> None:
    assert len(SUITE_CASES) == 82


@pytest.mark.parametrize(("body", "expected"), SUITE_CASES)
def test_suite_decode_html(body: bytes, expected: str) -> None:
    # windows-1252 is the suite's "nothing declared"; decode_html then guesses, and these
    # bodies are ASCII (UTF-8) where nothing is declared.
    name = decode_html(body, None)[1]
    assert name == expected or (expected == "windows-1252" and name == "utf-8")


@pytest.mark.parametrize(("body", "expected"), SUITE_CASES)
def test_suite_declared_encoding(body: bytes, expected: str) -> None:
    declared = declared_encoding(body, None)
    assert declared == expected or (expected == "windows-1252" and declared is None)
    if not body.startswith(codecs.BOM_UTF8):
        assert prescan(body) == declared


# -- the prescan -------------------------------------------------------------------------

PRESCAN_CASES = [
    # Comments
    pytest.param(b'<!-- <meta charset="koi8-r"> -->', None, id="meta-in-comment"),
    pytest.param(b"<!--><meta charset=koi8-r>", "koi8-r", id="comment-of-its-own-dashes"),
    pytest.param(b"<!---><meta charset=koi8-r>", "koi8-r", id="comment-of-three-dashes"),
    pytest.param(b"<!-- --!><meta charset=koi8-r> -->", None, id="comment-ends-only-at-dashes"),
    pytest.param(b"<!-- <meta charset=koi8-r>", None, id="comment-never-closed"),
    pytest.param(b"<!DOCTYPE html><meta charset=koi8-r>", "koi8-r", id="doctype-skipped"),
    pytest.param(b"<?php echo '>'; ?><meta charset=koi8-r>", "koi8-r", id="to-first-gt"),
    pytest.param(b'<?x a="b>"<meta charset=koi8-r>', "koi8-r", id="processing-ends-at-gt"),
    # Attributes
    pytest.param(b"<META CHARSET=KOI8-R>", "koi8-r", id="case-insensitive"),
    pytest.param(b"<meta charset='koi8-r'>", "koi8-r", id="single-quoted"),
    pytest.param(b"<meta/charset=koi8-r>", "koi8-r", id="slash-before-attribute"),
    pytest.param(b"<meta charset=koi8-r/>", None, id="slash-is-part-of-unquoted"),
    pytest.param(b"<meta charset = koi8-r >", "koi8-r", id="spaces-around-equals"),
    pytest.param(b"<meta a=b charset=koi8-r>", "koi8-r", id="after-another-attribute"),
    pytest.param(b"<meta charset=koi8-r charset=utf-8>", "koi8-r", id="first-of-a-name"),
    pytest.param(b'<meta charset="" charset=koi8-r>', None, id="first-even-invalid"),
    pytest.param(b"<meta ==koi8-r charset=koi8-u>", "koi8-u", id="name-starting-with-equals"),
    pytest.param(b'<p title="<meta charset=koi8-r>">', None, id="meta-in-attribute-value"),
    pytest.param(b"<p title='x><meta charset=koi8-r>'>", None, id="meta-in-single-quotes"),
    pytest.param(b'</p a="<meta charset=koi8-r>">', None, id="end-tag-attributes-skipped"),
    pytest.param(b"<metax charset=koi8-r>", None, id="other-tag-named-meta-something"),
    pytest.param(b"<meta charset=koi8-r", None, id="unclosed-at-end"),
    pytest.param(b'<meta charset="koi8-r', None, id="quote-unclosed-at-end"),
    pytest.param(b"< meta charset=koi8-r>", None, id="lt-space-is-text"),
    # content=, with http-equiv
    pytest.param(
        b'<meta http-equiv="content-type" content="text/html; charset=koi8-r">',
        "koi8-r",
        id="http-equiv",
    ),
    pytest.param(
        b'<meta content="text/html; charset=koi8-r" http-equiv="Content-Type">',
        "koi8-r",
        id="http-equiv-after-content",
    ),
    pytest.param(b'<meta content="text/html; charset=koi8-r">', None, id="content-alone"),
    pytest.param(
        b'<meta http-equiv="refresh" content="0; charset=koi8-r">', None, id="other-pragma"
    ),
    pytest.param(
        b'<meta http-equiv=content-type content="charset=koi8-r" charset=koi8-u>',
        "koi8-u",
        id="charset-beats-content",
    ),
    pytest.param(
        b'<meta http-equiv=content-type content="charset=koi8-r" charset=bogus>',
        None,
        id="invalid-charset-after-content",
    ),
    pytest.param(
        b'<meta charset=bogus http-equiv=content-type content="charset=koi8-r">',
        None,
        id="content-after-invalid-charset",
    ),
    pytest.param(
        b'<meta http-equiv=content-type content="charset=bogus" charset=koi8-r>',
        "koi8-r",
        id="invalid-content-then-charset",
    ),
]

CONTENT_CASES = [
    pytest.param(b"text/html; charset=koi8-r", "koi8-r", id="plain"),
    pytest.param(b"text/html;charset=koi8-r;x=y", "koi8-r", id="ends-at-semicolon"),
    pytest.param(b"text/html; charset=koi8-r x", "koi8-r", id="ends-at-space"),
    pytest.param(b"text/html; CHARSET = 'koi8-r'", "koi8-r", id="spaces-and-quotes"),
    pytest.param(b'charset="koi8-r x"', None, id="quoted-label-with-space"),
    pytest.param(b"charset='koi8-r", None, id="unmatched-quote"),
    pytest.param(b"charset=", None, id="nothing-after-equals"),
    pytest.param(b"charsetcharset=koi8-r", "koi8-r", id="word-twice"),
    pytest.param(b"charset koi8-r; charset=koi8-u", "koi8-u", id="first-without-equals"),
    pytest.param(b"charset=bogus; charset=koi8-r", None, id="only-the-first-counts"),
    pytest.param(b"text/html", None, id="no-charset"),
]

LABEL_CASES = [
    pytest.param(b'<meta charset="bogus"><meta charset=koi8-r>', "koi8-r", id="invalid-skipped"),
    pytest.param(b'<meta charset="latin-1">', None, id="python-alias-is-no-label"),
    pytest.param(b'<meta charset="utf-7">', None, id="utf-7-is-no-label"),
    pytest.param(b'<meta charset=" koi8-r\t">', "koi8-r", id="whitespace-around"),
    pytest.param(b'<meta charset="iso-8859-1">', "windows-1252", id="latin1-is-1252"),
    pytest.param(b'<meta charset="x-cp1250">', "windows-1250", id="standard-alias"),
    pytest.param(b"<meta charset=utf-16>", "utf-8", id="utf-16-means-utf-8"),
    pytest.param(b"<meta charset=utf-16be>", "utf-8", id="utf-16be-means-utf-8"),
    pytest.param(b"<meta charset=unicodefeff>", "utf-8", id="utf-16-alias-means-utf-8"),
    pytest.param(b"<meta charset=x-user-defined>", "windows-1252", id="x-user-defined-1252"),
    pytest.param(b"<meta charset=iso-2022-kr>", "replacement", id="replacement"),
]

XML_CASES = [
    pytest.param(b'<?xml version="1.0" encoding="koi8-r"?><p>', "koi8-r", id="declaration"),
    pytest.param(b"<?xml version='1.0' encoding = 'koi8-r'?>", "koi8-r", id="single-quotes"),
    pytest.param(
        b'<?xml encoding="koi8-r"?><meta charset=koi8-u>', "koi8-u", id="meta-beats-declaration"
    ),
    pytest.param(b' <?xml encoding="koi8-r"?>', None, id="not-at-the-start"),
    pytest.param(b'<?xml encoding=" koi8-r"?>', None, id="space-in-label"),
    pytest.param(b'<?xml encoding="utf-16"?>', "utf-8", id="utf-16-means-utf-8"),
    pytest.param(b'<?xml version="1.0"?><p encoding="koi8-r">', None, id="after-the-declaration"),
    pytest.param(b'<?xml encoding="koi8-r"', None, id="declaration-unclosed"),
    pytest.param(b"<\x00?\x00x\x00m\x00l\x00", "utf-16le", id="utf-16le-without-bom"),
    pytest.param(b"\x00<\x00?\x00x\x00m\x00l", "utf-16be", id="utf-16be-without-bom"),
]

META = b"<meta charset=koi8-r>"
WINDOW_CASES = [
    pytest.param(b" " * (PRESCAN_BYTES - len(META)) + META, "koi8-r", id="ends-at-the-window"),
    pytest.param(b" " * (PRESCAN_BYTES - len(META) + 1) + META, None, id="cut-by-the-window"),
    pytest.param(b" " * PRESCAN_BYTES + META, None, id="past-the-window"),
    pytest.param(b" " * 5000 + META, "koi8-r", id="past-1024-bytes"),
    pytest.param(b"<!--" + b"x" * 20000 + b"-->" + META, "koi8-r", id="after-a-long-comment"),
]


@pytest.mark.parametrize(
    ("body", "expected"), PRESCAN_CASES + LABEL_CASES + XML_CASES + WINDOW_CASES
)
def test_prescan(body: bytes, expected: str | None) -> None:
    assert prescan(body) == expected


@pytest.mark.parametrize(("content", "expected"), CONTENT_CASES)
def test_prescan_reads_content_as_the_standard_does(content: bytes, expected: str | None) -> None:
    assert not (b"'" in content and b'"' in content), "a case holds one kind of quote"
    quote = b"'" if b'"' in content else b'"'
    body = b"<meta http-equiv=Content-Type content=" + quote + content + quote + b">"
    assert prescan(body) == expected


LABEL_LOOKUP_CASES = [
    pytest.param("utf-8", "utf-8", id="name"),
    pytest.param("\t UTF8 \n", "utf-8", id="whitespace-and-case"),
    pytest.param(b"ISO_8859-2:1987", "iso-8859-2", id="bytes"),
    pytest.param("ansi_x3.4-1968", "windows-1252", id="with-a-dot"),
    pytest.param("gb2312", "gbk", id="gbk"),
    pytest.param("latin-1", None, id="python-alias"),
    pytest.param("utf-32", None, id="utf-32"),
    pytest.param("\u212aoi8-r", None, id="kelvin-sign-is-not-k"),
    pytest.param("utf-8\x0b", None, id="vertical-tab-is-not-ascii-whitespace"),
    pytest.param("", None, id="empty"),
]


@pytest.mark.parametrize(("label", "expected"), LABEL_LOOKUP_CASES)
def test_encoding_for_label(label: str | bytes, expected: str | None) -> None:
    assert encoding_for_label(label) == expected


def test_every_encoding_of_the_standard_decodes() -> None:
    # 40 encodings and 228 labels in the Encoding Standard's encodings.json.
    assert len(ENCODINGS) == 40
    assert len(prescan_module._ENCODING_OF_LABEL) == 228
    for name in ENCODINGS:
        text, chosen = decode_html(b"<p>a\x80b</p>", f"text/html; charset={name}")
        assert chosen == name
        assert text.startswith("<") or name in ("replacement", "utf-16be", "utf-16le")
    assert decode_html(b"<p>\x80</p>", "text/html; charset=x-user-defined")[0] == "<p>\uf780</p>"
    assert decode_html(b"<p>anything</p>", "text/html; charset=iso-2022-kr") == (
        "\ufffd",
        "replacement",
    )


# -- BOM, transport, prescan: which wins -------------------------------------------------

KOI8_META = '<meta charset="koi8-r">'
PRECEDENCE_CASES = [
    pytest.param(codecs.BOM_UTF8, "text/html; charset=windows-1250", "utf-8", id="bom-first"),
    pytest.param(codecs.BOM_UTF16_LE, "text/html; charset=koi8-r", "utf-16le", id="bom-16le"),
    pytest.param(codecs.BOM_UTF16_BE, None, "utf-16be", id="bom-16be"),
    pytest.param(b"\xff\xfe\x00\x00", None, "utf-16le", id="utf-32-bom-is-utf-16le"),
    pytest.param(b"", "text/html; charset=windows-1250", "windows-1250", id="header-over-meta"),
    pytest.param(b"", "text/html; charset=utf-16", "utf-16le", id="header-utf-16-kept"),
    pytest.param(b"", "text/html", "koi8-r", id="header-without-charset"),
    pytest.param(b"", "text/html; charset=bogus", "koi8-r", id="header-invalid-label"),
    pytest.param(b"", "text/html; charset=latin-1", "koi8-r", id="header-python-alias"),
    pytest.param(b"", None, "koi8-r", id="no-header"),
]


@pytest.mark.parametrize(("prefix", "header", "expected"), PRECEDENCE_CASES)
def test_bom_beats_header_beats_meta(prefix: bytes, header: str | None, expected: str) -> None:
    codec = {"utf-16le": "utf-16-le", "utf-16be": "utf-16-be"}.get(expected, "ascii")
    html = f"<html><head>{KOI8_META}</head><body>abc</body></html>"
    body = prefix + html.encode(codec)
    assert declared_encoding(body, header) == expected
    text, name = decode_html(body, header)
    assert name == expected
    if not prefix.endswith(b"\x00\x00"):
        assert text == html


TRANSPORT_CASES = [
    pytest.param("text/html; charset=koi8-r", "koi8-r", id="plain"),
    pytest.param('text/html;charset="KOI8-R"', "koi8-r", id="quoted"),
    pytest.param('text/html; charset="koi\\8-r"', "koi8-r", id="quoted-pair"),
    pytest.param("TEXT/HTML; CHARSET=koi8-r", "koi8-r", id="case"),
    pytest.param("text/html; charset=koi8-r; charset=koi8-u", "koi8-r", id="first-charset"),
    pytest.param("text/html; charset=; charset=koi8-r", "koi8-r", id="empty-then-valid"),
    pytest.param('text/html; a="x;charset=koi8-u"; charset=koi8-r', "koi8-r", id="in-quotes"),
    pytest.param("text/html; charset=koi8-r ", "koi8-r", id="trailing-space"),
    pytest.param("text/html; charset=iso_8859-1:1987", "windows-1252", id="label-with-colon"),
    pytest.param("text/html; charset=bogus", None, id="bogus"),
    pytest.param("text/html; charset=latin-1", None, id="not-a-label"),
    pytest.param("charset=koi8-r", None, id="no-mime-type"),
    pytest.param("text/html, text/html; charset=koi8-r", "koi8-r", id="two-types"),
    pytest.param("text/html; charset=koi8-r, text/html", "koi8-r", id="same-essence-keeps"),
    pytest.param("text/html; charset=koi8-r, text/plain", None, id="new-essence-resets"),
    pytest.param("text/html; charset=koi8-r, */*", "koi8-r", id="any-type-ignored"),
    pytest.param("text/html; charset=koi8-r, bogus", "koi8-r", id="invalid-type-ignored"),
    pytest.param('text/html; charset="koi8-r, x"', None, id="comma-in-quotes"),
    pytest.param("", None, id="empty"),
]


@pytest.mark.parametrize(("header", "expected"), TRANSPORT_CASES)
def test_transport_charset(header: str, expected: str | None) -> None:
    assert declared_encoding(b"<p>abc</p>", header) == expected


# -- hostile input -----------------------------------------------------------------------

HOSTILE_UNITS = [
    b"<meta",
    b"<!--",
    b"<meta ",
    b"<meta a=",
    b'<meta a="',
    b"<meta charset=bogus>",
    b"<meta http-equiv=content-type content=charset>",
    b"<a ",
    b"<a b=' ",
    b"</",
    b"<!",
    b"<?",
    b"<",
    b"-->",
    b"=",
]
HOSTILE_BODIES = [
    *[pytest.param(unit, id=unit.decode()) for unit in HOSTILE_UNITS],
    pytest.param(
        b'<meta http-equiv=content-type content="' + b"charset " * 100 + b'">', id="content"
    ),
    pytest.param(b"<?xml " + b"encoding " * 8000, id="xml-declaration"),
]
HUGE = 30 * 1024 * 1024


class CountingPattern:
    """A compiled pattern that adds up the bytes its calls cover, and the calls."""

    def __init__(self, pattern: re.Pattern[bytes], tally: list[int]) -> None:
        self.pattern = pattern
        self.tally = tally

    def _count(self, start: int, end: int) -> None:
        self.tally[0] += 1
        self.tally[1] += max(end - start, 1)

    def match(self, data: bytes, position: int = 0) -> re.Match[bytes] | None:
        found = self.pattern.match(data, position)
        self._count(position, found.end() if found else position)
        return found

    def search(
        self, data: bytes, position: int = 0, end: int = sys.maxsize
    ) -> re.Match[bytes] | None:
        found = self.pattern.search(data, position, end)
        self._count(position, found.end() if found else min(end, len(data)))
        return found


def counted_prescan(monkeypatch: pytest.MonkeyPatch) -> Callable[[bytes], tuple[int, int]]:
    """``prescan`` with every pattern of the module counting: (calls, bytes covered)."""
    tally = [0, 0]
    for name, value in vars(prescan_module).items():
        if isinstance(value, re.Pattern):
            monkeypatch.setattr(prescan_module, name, CountingPattern(value, tally))

    def run(body: bytes) -> tuple[int, int]:
        tally[:] = [0, 0]
        prescan(body)
        return tally[0], tally[1]

    return run


@pytest.mark.parametrize("unit", HOSTILE_BODIES)
def test_prescan_work_is_bounded_and_linear(unit: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    run = counted_prescan(monkeypatch)
    # A <meta> naming no encoding first: without "<meta" and "charset" in the window,
    # nothing can be declared and the scan does not start.
    huge = b"<meta charset>" + unit * (HUGE // len(unit) + 1)
    calls, covered = run(huge)
    # Nothing past the window is read: 30 MiB cost what the window alone costs.
    assert (calls, covered) == run(huge[:PRESCAN_BYTES])
    # One pattern passes over everything but a <meta>, and gives up at the first
    # construct the bytes end inside: a scan that went on from there, or went back over
    # what it had read (a quadratic one), would call its patterns for every construct
    # and cover on the order of PRESCAN_BYTES ** 2 / 2 bytes, not a few windows.
    metas = len(re.findall(rb"(?i)<meta[\t\n\f\r /]", huge[:PRESCAN_BYTES]))
    assert calls <= 20 * metas + 20
    assert covered <= 4 * PRESCAN_BYTES
    # And twice the bytes cost about twice the work (a quadratic scan: four times).
    half_calls, half_covered = run(huge[: PRESCAN_BYTES // 2])
    assert covered <= 2.5 * half_covered
    assert calls <= 2.5 * half_calls + 20


def test_decode_html_of_a_huge_hostile_body() -> None:
    for unit in (b"<meta", b"<!--"):
        text, name = decode_html(unit * (HUGE // len(unit)), None)
        assert name == "utf-8"
        assert len(text) == HUGE // len(unit) * len(unit)


# -- a reference: the Standard's steps, byte by byte -------------------------------------


class RanOut(Exception):
    """The reference's bytes ran out: its prescan is aborted."""


SPACE = b"\t\n\f\r "


def reference_prescan(data: bytes) -> str | None:
    """The HTML Standard's prescan written out step by step, one byte at a time, for the
    fuzz test: slow and plain, sharing nothing with govsi.web.prescan but the labels."""
    if data.startswith(b"<\x00?\x00x\x00"):
        return "utf-16le"
    if data.startswith(b"\x00<\x00?\x00x"):
        return "utf-16be"
    try:
        found = reference_loop(data)
    except RanOut:
        found = None
    return found or reference_xml(data)


def byte_at(data: bytes, position: int) -> int:
    if position >= len(data):
        raise RanOut
    return data[position]


def reference_loop(data: bytes) -> str | None:
    position = 0
    while position < len(data):
        rest = data[position:]
        if rest.startswith(b"<!--"):
            end = data.find(b"-->", position + 2)
            if end < 0:
                return None
            position = end + 2
        elif rest[:5].lower() == b"<meta" and rest[5:6] != b"" and rest[5] in SPACE + b"/":
            position += 5
            names: list[bytes] = []
            got_pragma, need_pragma, charset = False, None, None
            while (attribute := reference_attribute(data, position)) is not None:
                name, value, position = attribute
                if name in names:
                    continue
                names.append(name)
                if name == b"http-equiv":
                    got_pragma = got_pragma or value == b"content-type"
                elif name == b"content":
                    found = reference_content(value)
                    if found is not None and charset is None:
                        charset, need_pragma = found, True
                elif name == b"charset":
                    charset, need_pragma = encoding_for_label(value) or "failure", False
            valid = charset is not None and charset != "failure"
            if valid and need_pragma is not None and (got_pragma or not need_pragma):
                if charset in ("utf-16be", "utf-16le"):
                    return "utf-8"
                return "windows-1252" if charset == "x-user-defined" else charset
        elif rest[:1] == b"<" and (
            rest[1:2].isalpha() or (rest[1:2] == b"/" and rest[2:3].isalpha())
        ):
            while byte_at(data, position) not in SPACE + b">":
                position += 1
            while (attribute := reference_attribute(data, position)) is not None:
                position = attribute[2]
        elif rest[:2] in (b"<!", b"</", b"<?"):
            end = data.find(b">", position + 1)
            if end < 0:
                return None
            position = end
        position += 1
    return None


def reference_attribute(data: bytes, position: int) -> tuple[bytes, bytes, int] | None:
    while byte_at(data, position) in SPACE + b"/":
        position += 1
    if byte_at(data, position) == ord(">"):
        return None
    name, value = bytearray(), bytearray()
    while True:
        byte = byte_at(data, position)
        if byte == ord("=") and name:
            position += 1
            break
        if byte in SPACE:
            while byte_at(data, position) in SPACE:
                position += 1
            if byte_at(data, position) != ord("="):
                return bytes(name), b"", position
            position += 1
            break
        if byte in b"/>":
            return bytes(name), b"", position
        name += bytes([byte]).lower()
        position += 1
    while byte_at(data, position) in SPACE:
        position += 1
    byte = byte_at(data, position)
    if byte in b"\"'":
        while True:
            position += 1
            if byte_at(data, position) == byte:
                return bytes(name), bytes(value), position + 1
            value += bytes([data[position]]).lower()
    if byte == ord(">"):
        return bytes(name), b"", position
    while byte_at(data, position) not in SPACE + b">":
        value += bytes([data[position]]).lower()
        position += 1
    return bytes(name), bytes(value), position


def reference_content(value: bytes) -> str | None:
    position = 0
    while True:
        found = value.lower().find(b"charset", position)
        if found < 0:
            return None
        position = found + 7
        while position < len(value) and value[position] in SPACE:
            position += 1
        if position < len(value) and value[position] == ord("="):
            break
    position += 1
    while position < len(value) and value[position] in SPACE:
        position += 1
    if position == len(value):
        return None
    quote = value[position]
    if quote in b"\"'":
        end = value.find(bytes([quote]), position + 1)
        return None if end < 0 else encoding_for_label(value[position + 1 : end])
    end = position
    while end < len(value) and value[end] not in SPACE + b";":
        end += 1
    return encoding_for_label(value[position:end])


def reference_xml(data: bytes) -> str | None:
    if not data.startswith(b"<?xml"):
        return None
    end = data.find(b">")
    found = data.find(b"encoding", 0, end)
    if end < 0 or found < 0:
        return None
    position = found + 8
    while position < end and data[position] <= 0x20:
        position += 1
    if position >= end or data[position] != ord("="):
        return None
    position += 1
    while position < end and data[position] <= 0x20:
        position += 1
    if position >= end or data[position] not in b"\"'":
        return None
    close = data.find(data[position : position + 1], position + 1, end)
    label = data[position + 1 : close]
    if close < 0 or any(byte <= 0x20 for byte in label):
        return None
    encoding = encoding_for_label(label)
    return "utf-8" if encoding in ("utf-16be", "utf-16le") else encoding


FUZZ_PIECES = [
    b"<meta",
    b"<META",
    b"<meta ",
    b"<meta/",
    b"<a",
    b"</a",
    b"</",
    b"<!",
    b"<!--",
    b"-->",
    b"--",
    b"<?",
    b"<",
    b">",
    b"/",
    b" ",
    b"\n",
    b"=",
    b'"',
    b"'",
    b"charset",
    b"CharSet",
    b"koi8-r",
    b"utf-16",
    b"bogus",
    b"http-equiv",
    b"content-type",
    b"content",
    b";",
    b"x",
    b"charset=koi8-r",
    b"<?xml",
    b"encoding",
    b"\x80",
]


FUZZ_DECLARATIONS = [
    b"<meta charset=koi8-r>",
    b"<meta charset='koi8-u'>",
    b'<meta http-equiv="Content-Type" content="text/html; charset=iso-8859-2">',
    b"<meta content=charset=windows-1250 http-equiv=content-type>",
]


def fuzz_documents(count: int, seed: int) -> Iterator[bytes]:
    """Documents of random pieces of markup, most with a valid declaration among them,
    which the pieces before it may hide (in a comment, a quoted value...) or not."""
    rng = random.Random(seed)
    for _ in range(count):
        pieces = [rng.choice(FUZZ_PIECES) for _ in range(rng.randint(0, 30))]
        if rng.random() < 0.8:
            pieces.insert(rng.randint(0, len(pieces)), rng.choice(FUZZ_DECLARATIONS))
        yield b"".join(pieces)


@pytest.mark.parametrize("seed", range(4))
def test_prescan_reads_as_the_standards_steps(seed: int) -> None:
    # The scan skips runs of markup with one-pass patterns; these documents, built from the
    # pieces markup is made of, check that it reads every one as the steps do.
    for document in fuzz_documents(5000, seed):
        assert prescan(document) == reference_prescan(document), document
