"""Tests for govsi.web.extract: links, onclick navigations, images, base URL, nofollow."""

from __future__ import annotations

import html as html_lib
from typing import Any

import pytest

from govsi.web.extract import (
    ExtractedLinks,
    extract_links,
    onclick_targets,
    parse_html,
    refresh_target,
)
from tests.support.growth import LINEAR_BOUND, cpu_cost, growth

PAGE = "https://www.gov.si/a/b/page.html"

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


# -- hostile pages stay linear ------------------------------------------------------------
def test_a_long_window_chain_in_onclick_costs_linear_time() -> None:
    # 72 KB of "window . window . ..." took 5.5 s with a regex for the prefix.
    assert growth(onclick_targets, lambda n: "window . " * n + "locatio", 4000) < LINEAR_BOUND
    assert growth(onclick_targets, lambda n: "window . " * n + "location='/x'", 4000) < (
        LINEAR_BOUND
    )
    assert onclick_targets("window . " * 8000 + "location.href='/x'") == ["/x"]


@pytest.mark.parametrize(
    ("script", "expected"),
    [
        ("window.location='/a'", ["/a"]),
        ("window . document . location . href = '/a'", ["/a"]),
        ("top.location.replace('/a')", ["/a"]),
        ("  location='/a'", ["/a"]),
        ("this.location='/a'", []),
        ("obj.window.location='/a'", []),
        ("xwindow.location='/a'", []),
        ("mylocation='/a'", []),
        ("$location='/a'", []),
        ("window . this . location='/a'", []),
    ],
)
def test_whose_location_it_is(script: str, expected: list[str]) -> None:
    assert onclick_targets(script) == expected


def test_links_per_page_are_capped_and_the_rest_counted_not_resolved() -> None:
    items = "".join(f'<a href="/p{i}">x</a><img src="/i{i}.png">' for i in range(50))
    page = f'<html><body>{items}<a href="/p3">again</a></body></html>'
    found = extract_links(page, "http://a.gov.si/", max_links=10)
    assert found.links == [f"http://a.gov.si/p{i}" for i in range(10)]
    assert found.images == [f"http://a.gov.si/i{i}.png" for i in range(10)]
    assert found.dropped == 80  # 40 links and 40 images, each counted once
    assert extract_links(page, "http://a.gov.si/").dropped == 0


def test_the_cap_holds_for_a_reference_already_taken_as_the_other_kind() -> None:
    # An href already resolved as an image src (and the reverse) went past a full cap.
    page = ('<img src="/a"><img src="/b"><a href="/x">x</a><a href="/y">y</a>'
            '<a href="/a">a</a><a href="/b">b</a><a href="/x">x</a><img src="/x">')  # fmt: skip
    found = extract_links(f"<html><body>{page}</body></html>", "http://a.gov.si/", max_links=2)
    assert found.links == ["http://a.gov.si/x", "http://a.gov.si/y"]
    assert found.images == ["http://a.gov.si/a", "http://a.gov.si/b"]
    assert found.dropped == 3  # links /a and /b, image /x


def test_two_hundred_thousand_links_cost_linear_time() -> None:
    def page(n: int) -> str:
        return "<html><body>" + "".join(f'<a href="/p{i}">{i}</a>' for i in range(n)) + "</body>"

    def links(html: str) -> object:
        return extract_links(html, "http://a.gov.si/", max_links=10_000)

    assert growth(links, page, 50_000) < LINEAR_BOUND
    assert len(links(page(200_000)).links) == 10_000  # type: ignore[attr-defined]


def test_links_deep_in_a_page_cost_what_they_cost_at_the_top() -> None:
    # lxml let each element go with a walk up to the root: 50 000 links under 2000
    # nested divs cost 8 x as much as at the top.
    def parsed(depth: int) -> tuple[str, Any]:
        html = "<html><body>" + "<div>" * depth + '<a href="/x">x</a>' * 20_000
        return html, parse_html(html)

    def links(page: tuple[str, Any]) -> object:
        return extract_links(page[0], "http://a.gov.si/", page[1])

    assert cpu_cost(links, parsed(2000)) / cpu_cost(links, parsed(10)) < 2.5


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("0; url=/nov", "/nov"),
        ("5;URL='/nov'", "/nov"),
        ('3, url="/nov naslov"', "/nov naslov"),
        ("0;url=http://zunaj.example.com/", "http://zunaj.example.com/"),
        ("1.5; /nov", "/nov"),
        ("0", None),  # a reload of the same page
        ("0;", None),
        ("url=/nov", None),  # no time: not a refresh
        ("", None),
        ("  10 ;  URL = /a?b=1  ", "/a?b=1"),
    ],
)
def test_meta_refresh_target(content: str, expected: str | None) -> None:
    assert refresh_target(content) == expected


def test_a_meta_refresh_is_a_link_of_the_page() -> None:
    page = ('<html><head><meta http-equiv="Refresh" content="0; url=/cilj"></head>'
            '<body><a href="/a">a</a></body></html>')  # fmt: skip
    assert extract_links(page, "http://a.gov.si/x").links == [
        "http://a.gov.si/cilj", "http://a.gov.si/a",
    ]  # fmt: skip
