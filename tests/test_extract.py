"""Tests for govsi.extract: decoding, link and image extraction, classification."""

from __future__ import annotations

import codecs
import html as html_lib

import pytest

from govsi.extract import (
    ExtractedLinks,
    classify,
    decode_html,
    document_extension,
    extract_links,
    filename_of,
    header_says_nofollow,
    onclick_targets,
    parse_html,
    sniff_html,
)

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


# -- extract_links: links ----------------------------------------------------------------


def links_of(html: str, page_url: str = PAGE) -> list[str]:
    return extract_links(html, page_url).links


LINK_CASES = [
    pytest.param('<a href="x">', ["https://www.gov.si/a/b/x"], id="relative-name"),
    pytest.param('<a href="./x">', ["https://www.gov.si/a/b/x"], id="relative-dot"),
    pytest.param('<a href="../x">', ["https://www.gov.si/a/x"], id="relative-dotdot"),
    pytest.param('<a href="../../../../x">', ["https://www.gov.si/x"], id="dotdot-above-root"),
    pytest.param('<a href="/x">', ["https://www.gov.si/x"], id="absolute-path"),
    pytest.param('<a href="//evem.gov.si/x">', ["https://evem.gov.si/x"], id="scheme-relative"),
    pytest.param('<a href="?q=1">', [f"{PAGE}?q=1"], id="query-only"),
    pytest.param('<a href="#f">', [f"{PAGE}#f"], id="fragment-only-kept"),
    pytest.param('<a href="">', [PAGE], id="empty-href-is-the-page"),
    pytest.param('<a href="http://www.GOV.si:80/Y">', ["http://www.gov.si/Y"], id="absolute-http"),
    pytest.param(
        '<a href="x#1">a</a><a href="x#2">b</a>',
        ["https://www.gov.si/a/b/x#1", "https://www.gov.si/a/b/x#2"],
        id="fragments-not-dropped",
    ),
    pytest.param(
        '<head><base href="https://e-uprava.gov.si/sub/"></head><a href="x">',
        ["https://e-uprava.gov.si/sub/x"],
        id="base-absolute",
    ),
    pytest.param(
        '<base href="/base/"><a href="x"><a href="../y">',
        ["https://www.gov.si/base/x", "https://www.gov.si/y"],
        id="base-relative-to-page",
    ),
    pytest.param('<base href="../c/"><a href="x">', ["https://www.gov.si/a/c/x"], id="base-dotdot"),
    pytest.param(
        '<base href="/first/"><base href="/second/"><a href="x">',
        ["https://www.gov.si/first/x"],
        id="base-first-wins",
    ),
    pytest.param(
        '<base target="_blank"><base href="/second/"><a href="x">',
        ["https://www.gov.si/second/x"],
        id="base-first-with-href-wins",
    ),
    pytest.param(
        '<a href="x">a</a><base href="/late/">',
        ["https://www.gov.si/late/x"],
        id="base-after-links-still-applies",
    ),
    pytest.param(
        '<base href="javascript:void(0)"><a href="x">',
        ["https://www.gov.si/a/b/x"],
        id="base-non-http-ignored",
    ),
    pytest.param(
        '<map><area href="/area1" shape="rect"><area nohref></map>',
        ["https://www.gov.si/area1"],
        id="area-href",
    ),
    pytest.param(
        '<a href="mailto:info@gov.si">m</a><a href="tel:+38614781000">t</a>'
        '<a href="javascript:void(0)">j</a><a href="data:text/html,hi">d</a>'
        '<a href="ftp://ftp.gov.si/f">f</a><a href="/ok">ok</a>',
        ["https://www.gov.si/ok"],
        id="non-http-dropped",
    ),
    pytest.param(
        '<a href="  /spaced \n">a</a><a href="/tab\tbed\nnew">b</a>',
        ["https://www.gov.si/spaced", "https://www.gov.si/tabbednew"],
        id="whitespace-in-href",
    ),
    pytest.param(
        '<a href="/s?a=1&amp;b=2">', ["https://www.gov.si/s?a=1&b=2"], id="entity-decoded"
    ),
    pytest.param(
        '<a href="/novice/čšž dogodki">',
        ["https://www.gov.si/novice/%C4%8D%C5%A1%C5%BE%20dogodki"],
        id="non-ascii-percent-encoded",
    ),
    pytest.param(
        '<a href="/3">3</a><a href="/1">1</a><a href="/3">3</a><a href="/2">2</a>'
        '<a href="./../b/../../1">1</a>',
        ["https://www.gov.si/3", "https://www.gov.si/1", "https://www.gov.si/2"],
        id="document-order-first-occurrence",
    ),
    pytest.param(
        '<A HREF="/upper">x</A><AREA HREF="/area">',
        ["https://www.gov.si/upper", "https://www.gov.si/area"],
        id="uppercase-markup",
    ),
    pytest.param(
        '<link href="/style.css" rel="stylesheet"><script src="/s.js"></script>'
        '<!-- <a href="/commented">x</a> --><script>var s = \'<a href="/in-js">\';</script>'
        '<a name="anchor">no href</a><a href="/real">r</a>',
        ["https://www.gov.si/real"],
        id="only-a-and-area-hrefs",
    ),
    pytest.param(
        '<html><body><div><a href="/1">unclosed <p><a href=/2>x<table><tr><td><a href="/3"',
        ["https://www.gov.si/1", "https://www.gov.si/2"],
        id="malformed-unclosed",
    ),
    pytest.param(
        "</div></span><a href='/a'><b><i></b></i><a href=/b></a></a></body><a href=/c>",
        ["https://www.gov.si/a", "https://www.gov.si/b", "https://www.gov.si/c"],
        id="malformed-misnested",
    ),
    pytest.param("", [], id="empty-document"),
    pytest.param("   \n\t ", [], id="whitespace-document"),
    pytest.param("Samo besedilo brez oznak.", [], id="text-document"),
    pytest.param("<!-- only a comment -->", [], id="comment-document"),
    pytest.param(
        "\x00\x01\x02\ufffd\ud800 <a href='/after-garbage'>x</a> \x7f\x1b",
        ["https://www.gov.si/after-garbage"],
        id="garbage-characters",
    ),
    pytest.param(
        '<a title="' + "x" * 3_000_000 + '" href="/big">b</a><a href="/next">n</a>',
        ["https://www.gov.si/big", "https://www.gov.si/next"],
        id="huge-attribute",
    ),
    pytest.param(
        '<a href="/' + "p" * 100_000 + '">',
        ["https://www.gov.si/" + "p" * 100_000],
        id="huge-href",
    ),
    pytest.param(
        '<meta charset="windows-1250"><a href="/čebela">',
        ["https://www.gov.si/%C4%8Debela"],
        id="meta-charset-in-decoded-text-ignored",
    ),
    pytest.param(
        '<?xml version="1.0" encoding="utf-8"?>'
        '<html xmlns="http://www.w3.org/1999/xhtml"><body><a href="/x">x</a></body></html>',
        ["https://www.gov.si/x"],
        id="xhtml-with-xml-declaration",
    ),
    pytest.param(
        '<a href="http://[::1">bad</a><a href="https://exa mple.gov.si/">bad</a><a href=/ok>',
        ["https://www.gov.si/ok"],
        id="unparsable-href-dropped",
    ),
]


@pytest.mark.parametrize(("html", "expected"), LINK_CASES)
def test_extract_links(html: str, expected: list[str]) -> None:
    assert links_of(html) == expected


# -- extract_links: onclick ----------------------------------------------------------------


ONCLICK_CASES = [
    pytest.param("location.href='/lh1'", ["/lh1"], id="location.href-single"),
    pytest.param('location.href="/lh2"', ["/lh2"], id="location.href-double"),
    pytest.param("document.location='/dl1'", ["/dl1"], id="document.location-single"),
    pytest.param('document.location="/dl2"', ["/dl2"], id="document.location-double"),
    pytest.param("document.location.href='/dlh1'", ["/dlh1"], id="document.location.href-single"),
    pytest.param('document.location.href="/dlh2"', ["/dlh2"], id="document.location.href-double"),
    pytest.param("window.location='/wl1'", ["/wl1"], id="window.location-single"),
    pytest.param('window.location="/wl2"', ["/wl2"], id="window.location-double"),
    pytest.param("window.location.href='/wlh1'", ["/wlh1"], id="window.location.href-single"),
    pytest.param('window.location.href="/wlh2"', ["/wlh2"], id="window.location.href-double"),
    pytest.param("location='/l1'", ["/l1"], id="bare-location-single"),
    pytest.param('location = "/l2";', ["/l2"], id="bare-location-double"),
    pytest.param("top.location='/t1'", ["/t1"], id="top.location-single"),
    pytest.param('self.location.href="/s2"', ["/s2"], id="self.location.href-double"),
    pytest.param("location.assign('/a1')", ["/a1"], id="location.assign-single"),
    pytest.param('location.assign("/a2")', ["/a2"], id="location.assign-double"),
    pytest.param("location.replace('/r1')", ["/r1"], id="location.replace-single"),
    pytest.param('location.replace("/r2")', ["/r2"], id="location.replace-double"),
    pytest.param("window.location.assign('/wa')", ["/wa"], id="window.location.assign"),
    pytest.param(
        'document.location.replace( "/dr" ) ;', ["/dr"], id="document.location.replace-spaces"
    ),
    pytest.param(
        "  window . location . href  =  '/ws'  ;;  return false;",
        ["/ws"],
        id="whitespace-semicolons-return",
    ),
    pytest.param(
        "javascript:window.location.href='/label';", ["/label"], id="javascript-label-prefix"
    ),
    pytest.param(
        "if (confirm('Ste prepričani?')) { location.href='/potrdi' }",
        ["/potrdi"],
        id="inside-if-block",
    ),
    pytest.param(
        "location.href='/first'; location.replace(\"/second\")",
        ["/first", "/second"],
        id="two-navigations",
    ),
    pytest.param(r"location.href='/it\'s\x2Fok\u0021'", ["/it's/ok!"], id="js-escapes"),
    pytest.param("location.href=`/template`", ["/template"], id="template-literal"),
    pytest.param("location.href='/a?b=1&c=2'", ["/a?b=1&c=2"], id="query-in-literal"),
    pytest.param("location.href = url;", [], id="variable-ignored"),
    pytest.param("location.href='/p?id=' + id;", [], id="concatenation-ignored"),
    pytest.param("location.href=`/p/${id}`", [], id="template-interpolation-ignored"),
    pytest.param("location.assign(base + '/x')", [], id="call-with-expression-ignored"),
    pytest.param("location.replace('/x', extra)", [], id="call-with-extra-argument-ignored"),
    pytest.param("if (location.href == '/cmp') go()", [], id="comparison-ignored"),
    pytest.param("this.location='/this'", [], id="other-object-location-ignored"),
    pytest.param("mylocation='/var'", [], id="identifier-suffix-ignored"),
    pytest.param("var x = location.href.replace('a', 'b')", [], id="string-replace-ignored"),
    pytest.param("location.hash='#top'", [], id="hash-ignored"),
    pytest.param("window.open('/popup')", [], id="window-open-not-a-navigation-form"),
    pytest.param("Location.href='/case'", [], id="case-sensitive"),
]


@pytest.mark.parametrize(("script", "expected"), ONCLICK_CASES)
def test_onclick_targets(script: str, expected: list[str]) -> None:
    assert onclick_targets(script) == expected


@pytest.mark.parametrize(("script", "expected"), ONCLICK_CASES)
def test_onclick_in_document(script: str, expected: list[str]) -> None:
    # html.escape turns both quote styles into entities, which the parser decodes,
    # so every script reaches onclick_targets as written.
    html = f'<button onclick="{html_lib.escape(script)}">Klik</button>'
    assert links_of(html) == [f"https://www.gov.si{path}" for path in expected]


ONCLICK_DOCUMENT_CASES = [
    pytest.param(
        "<tr onClick=\"location.href='/row'\"><td>x</td></tr>",
        ["https://www.gov.si/row"],
        id="any-element-mixed-case-attribute",
    ),
    pytest.param(
        '<a href="#" onclick="window.location=\'/js\'; return false;">x</a>',
        [f"{PAGE}#", "https://www.gov.si/js"],
        id="href-then-onclick-same-element",
    ),
    pytest.param(
        "<base href='https://www.gov.si/base/'><div onclick=\"location.href='rel'\">",
        ["https://www.gov.si/base/rel"],
        id="onclick-resolved-against-base",
    ),
    pytest.param(
        "<div onclick=\"location.href='mailto:a@gov.si'\"><a onclick=\"location='/x'\">",
        ["https://www.gov.si/x"],
        id="onclick-non-http-dropped",
    ),
    pytest.param(
        "<a href='/same'>x</a><span onclick=\"location.href='/same'\">",
        ["https://www.gov.si/same"],
        id="onclick-duplicate-of-href",
    ),
    pytest.param(
        "<img src='/i.png' onclick=\"location.href='/big.png'\">",
        ["https://www.gov.si/big.png"],
        id="onclick-on-img",
    ),
]


@pytest.mark.parametrize(("html", "expected"), ONCLICK_DOCUMENT_CASES)
def test_onclick_document_cases(html: str, expected: list[str]) -> None:
    assert links_of(html) == expected


# -- extract_links: images, base URL, nofollow ------------------------------------------------

IMAGE_CASES = [
    pytest.param('<img src="slika.png">', ["https://www.gov.si/a/b/slika.png"], id="relative"),
    pytest.param('<img src="/img/logo.svg">', ["https://www.gov.si/img/logo.svg"], id="root"),
    pytest.param(
        '<img src="https://cdn.example.com/x.jpg">',
        ["https://cdn.example.com/x.jpg"],
        id="absolute-other-host",
    ),
    pytest.param(
        '<img src="//static.gov.si/x.gif">', ["https://static.gov.si/x.gif"], id="scheme-relative"
    ),
    pytest.param(
        '<base href="/media/"><img src="a.jpg">', ["https://www.gov.si/media/a.jpg"], id="base"
    ),
    pytest.param(
        '<img src="data:image/png;base64,iVBORw0KGgo="><img src="/real.png">',
        ["https://www.gov.si/real.png"],
        id="data-uri-dropped",
    ),
    pytest.param('<img src=""><img src="  "><img>', [], id="empty-src-dropped"),
    pytest.param(
        '<img src="/2.png"><img src="/1.png"><img src="/2.png"><img src="./../../2.png">',
        ["https://www.gov.si/2.png", "https://www.gov.si/1.png"],
        id="order-and-duplicates",
    ),
    pytest.param('<IMG SRC="/UP.PNG">', ["https://www.gov.si/UP.PNG"], id="uppercase"),
    pytest.param(
        '<img src=" /space d.png\n">', ["https://www.gov.si/space%20d.png"], id="whitespace"
    ),
    pytest.param('<img src="/čebela.jpg">', ["https://www.gov.si/%C4%8Debela.jpg"], id="non-ascii"),
    pytest.param('<img src="javascript:alert(1)">', [], id="javascript-dropped"),
    pytest.param(
        # As in a browser: a tag cut off by the end of the document is dropped.
        '<p><img src="/in-unclosed.png"<div><img src=/second.png',
        ["https://www.gov.si/in-unclosed.png"],
        id="malformed-missing-space-and-eof-in-tag",
    ),
    pytest.param(
        '<p><img src="/a.png"><div><table><img src=/b.png></td></tr><p><img src=/c.png>',
        ["https://www.gov.si/a.png", "https://www.gov.si/b.png", "https://www.gov.si/c.png"],
        id="malformed-unclosed-and-misplaced",
    ),
    pytest.param(
        '<a href="/link"><img src="/in-link.png"></a>',
        ["https://www.gov.si/in-link.png"],
        id="image-inside-link",
    ),
    pytest.param('<input type="image" src="/btn.png"><script src="/s.js">', [], id="img-only"),
]


@pytest.mark.parametrize(("html", "expected"), IMAGE_CASES)
def test_extract_images(html: str, expected: list[str]) -> None:
    assert extract_links(html, PAGE).images == expected


def test_images_are_not_links_and_links_not_images() -> None:
    found = extract_links('<a href="/l"><img src="/i.png"></a>', PAGE)
    assert found.links == ["https://www.gov.si/l"]
    assert found.images == ["https://www.gov.si/i.png"]


BASE_URL_CASES = [
    pytest.param("<a href=x>", PAGE, id="no-base"),
    pytest.param("", PAGE, id="empty-document"),
    pytest.param("<base href='/b/'>", "https://www.gov.si/b/", id="relative-base"),
    pytest.param(
        "<base href='HTTPS://E-UPRAVA.gov.si'>", "https://e-uprava.gov.si/", id="absolute-base"
    ),
    pytest.param("<base href='mailto:x@gov.si'>", PAGE, id="non-http-base"),
    pytest.param("<base href=''>", PAGE, id="empty-base-href"),
]


@pytest.mark.parametrize(("html", "base"), BASE_URL_CASES)
def test_base_url(html: str, base: str) -> None:
    assert extract_links(html, PAGE).base_url == base


NOFOLLOW_CASES = [
    pytest.param('<meta name="robots" content="nofollow">', True, id="nofollow"),
    pytest.param('<meta name="ROBOTS" content="NOINDEX,NOFOLLOW">', True, id="upper-list"),
    pytest.param('<meta name="robots" content="noindex, nofollow">', True, id="spaced-list"),
    pytest.param('<meta name="robots" content="none">', True, id="none"),
    pytest.param('<meta name="govsi-crawler" content="nofollow">', True, id="our-name"),
    pytest.param('<meta name="robots" content="index, follow">', False, id="follow"),
    pytest.param('<meta name="robots" content="noindex">', False, id="noindex-only"),
    pytest.param('<meta name="googlebot" content="nofollow">', False, id="other-crawler"),
    pytest.param('<meta name="description" content="nofollow none">', False, id="other-meta"),
    pytest.param("<a href=/x rel=nofollow>", False, id="rel-nofollow-is-not-page-level"),
    pytest.param("", False, id="empty"),
]


@pytest.mark.parametrize(("html", "nofollow"), NOFOLLOW_CASES)
def test_nofollow(html: str, nofollow: bool) -> None:
    assert extract_links(html, PAGE).nofollow is nofollow


def test_extract_links_result_shape() -> None:
    assert extract_links("", PAGE) == ExtractedLinks(
        links=[], images=[], base_url=PAGE, nofollow=False
    )


def test_extract_links_keeps_resolve_output_exactly() -> None:
    # No canonicalization here: query order, default-less ports and fragments stay.
    found = extract_links('<a href="https://www.gov.si:8443/p?b=2&a=1#x">', PAGE)
    assert found.links == ["https://www.gov.si:8443/p?b=2&a=1#x"]


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
