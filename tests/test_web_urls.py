"""Tests for govsi.web.urls: browser-equal resolution, the canonical form, and scope."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from govsi.web.scope import Scope
from govsi.web.urls import (
    canonical_and_host,
    canonicalize,
    fingerprint,
    host_in_scope,
    host_of,
    in_scope,
    resolve,
    url_too_long,
)

WPT_FILE = Path(__file__).parent / "data" / "url_resolution_wpt.json"


def _cases(table: list[tuple[Any, ...]]) -> list[Any]:
    """Turn (id, *values) rows into pytest params, so ids sit next to their data."""
    return [pytest.param(*row[1:], id=row[0]) for row in table]


# -- canonicalize ----------------------------------------------------------------------

CANONICAL: list[tuple[str, str, str]] = [
    # Scheme and host case; paths keep theirs.
    ("scheme-upper", "HTTP://www.gov.si/", "http://www.gov.si/"),
    ("host-mixed-case-no-path", "http://Www.Gov.SI", "http://www.gov.si/"),
    (
        "all-upper-path-kept",
        "HTTPS://WWW.GOV.SI/Mapa/Datoteka.PDF",
        "https://www.gov.si/Mapa/Datoteka.PDF",
    ),
    ("https-stays-https", "https://www.gov.si/a", "https://www.gov.si/a"),
    ("http-stays-http", "http://www.gov.si/a", "http://www.gov.si/a"),
    ("www-kept", "http://gov.si/", "http://gov.si/"),
    # Ports.
    ("port-80-dropped", "http://www.gov.si:80/a", "http://www.gov.si/a"),
    ("port-443-dropped", "https://www.gov.si:443/a", "https://www.gov.si/a"),
    ("port-443-on-http-kept", "http://www.gov.si:443/a", "http://www.gov.si:443/a"),
    ("port-80-on-https-kept", "https://www.gov.si:80/", "https://www.gov.si:80/"),
    ("port-8080-kept", "http://www.gov.si:8080/a", "http://www.gov.si:8080/a"),
    ("port-leading-zeros", "http://www.gov.si:0080/", "http://www.gov.si/"),
    ("port-empty", "http://www.gov.si:/a", "http://www.gov.si/a"),
    # Empty path.
    ("empty-path-https", "https://e-uprava.gov.si", "https://e-uprava.gov.si/"),
    ("empty-path-with-query", "http://www.gov.si?a=1", "http://www.gov.si/?a=1"),
    # Dot segments and slashes.
    ("dot-segments", "http://www.gov.si/a/./b/../c", "http://www.gov.si/a/c"),
    ("dot-segments-above-root", "http://www.gov.si/../../a", "http://www.gov.si/a"),
    ("dot-segments-encoded", "http://www.gov.si/a/%2e%2E/b", "http://www.gov.si/b"),
    ("trailing-single-dot", "http://www.gov.si/a/b/.", "http://www.gov.si/a/b/"),
    ("trailing-double-dot", "http://www.gov.si/a/b/..", "http://www.gov.si/a/"),
    ("three-dots-not-a-segment", "http://www.gov.si/a/.../b", "http://www.gov.si/a/.../b"),
    ("backslashes", "http://www.gov.si\\a\\b", "http://www.gov.si/a/b"),
    ("trailing-slash-kept", "http://www.gov.si/a/", "http://www.gov.si/a/"),
    ("no-trailing-slash-kept", "http://www.gov.si/a", "http://www.gov.si/a"),
    ("double-slash-kept", "http://www.gov.si//a", "http://www.gov.si//a"),
    ("index-file-kept", "http://www.gov.si/index.html", "http://www.gov.si/index.html"),
    # Percent-encoding.
    ("tilde-decoded", "http://www.gov.si/%7Euser", "http://www.gov.si/~user"),
    ("tilde-lower-hex-decoded", "http://www.gov.si/%7euser", "http://www.gov.si/~user"),
    ("alpha-decoded", "http://www.gov.si/%41%42c", "http://www.gov.si/ABc"),
    ("digits-decoded", "http://www.gov.si/%31%32", "http://www.gov.si/12"),
    ("unreserved-marks-decoded", "http://www.gov.si/x%2d%2E%5fy", "http://www.gov.si/x-._y"),
    ("slash-escape-kept-upper", "http://www.gov.si/a%2fb", "http://www.gov.si/a%2Fb"),
    ("utf8-escape-upper", "http://www.gov.si/%c4%8d", "http://www.gov.si/%C4%8D"),
    ("space-escape-kept", "http://www.gov.si/a%20b", "http://www.gov.si/a%20b"),
    ("space-raw-encoded", "http://www.gov.si/a b", "http://www.gov.si/a%20b"),
    ("percent-escape-kept", "http://www.gov.si/a%25b", "http://www.gov.si/a%25b"),
    ("lone-percent-kept", "http://www.gov.si/100%", "http://www.gov.si/100%"),
    ("bad-escape-kept", "http://www.gov.si/a%zz", "http://www.gov.si/a%zz"),
    ("non-ascii-path", "http://www.gov.si/čšž", "http://www.gov.si/%C4%8D%C5%A1%C5%BE"),
    ("non-ascii-path-upper", "http://www.gov.si/ČŠŽ", "http://www.gov.si/%C4%8C%C5%A0%C5%BD"),
    ("non-ascii-query", "http://www.gov.si/?q=čšž", "http://www.gov.si/?q=%C4%8D%C5%A1%C5%BE"),
    ("non-ascii-query-key", "http://www.gov.si/?ž=1", "http://www.gov.si/?%C5%BE=1"),
    ("pipe-in-path-encoded", "http://www.gov.si/a|b", "http://www.gov.si/a%7Cb"),
    (
        "brackets-in-query-encoded",
        "http://www.gov.si/?a[]=1&a[]=2",
        "http://www.gov.si/?a%5B%5D=1&a%5B%5D=2",
    ),
    (
        "curly-caret-backtick-in-query",
        "http://www.gov.si/?q={^`}",
        "http://www.gov.si/?q=%7B%5E%60%7D",
    ),
    ("quote-in-query-encoded", "http://www.gov.si/?q='x'", "http://www.gov.si/?q=%27x%27"),
    ("query-escapes-normalized", "http://www.gov.si/?q=%7e%2f", "http://www.gov.si/?q=~%2F"),
    (
        "ampersand-escape-is-data",
        "http://www.gov.si/?b=1&a=1%262",
        "http://www.gov.si/?a=1%262&b=1",
    ),
    ("equals-escape-is-data", "http://www.gov.si/?a%3Db=1", "http://www.gov.si/?a%3Db=1"),
    ("plus-not-decoded", "http://www.gov.si/?q=a+b", "http://www.gov.si/?q=a+b"),
    ("plus-and-space-distinct", "http://www.gov.si/?q=a%20b", "http://www.gov.si/?q=a%20b"),
    # Fragments.
    ("fragment-dropped", "http://www.gov.si/a#frag", "http://www.gov.si/a"),
    ("fragment-after-query-dropped", "http://www.gov.si/a?b=1#f", "http://www.gov.si/a?b=1"),
    ("empty-fragment-dropped", "http://www.gov.si/a#", "http://www.gov.si/a"),
    ("query-like-fragment-dropped", "http://www.gov.si/a#b?c=1", "http://www.gov.si/a"),
    # Query parameters.
    ("query-sorted", "http://www.gov.si/?b=2&a=1", "http://www.gov.si/?a=1&b=2"),
    ("query-repeated-keys", "http://www.gov.si/?a=2&b=1&a=1", "http://www.gov.si/?a=1&a=2&b=1"),
    ("query-blank-vs-bare", "http://www.gov.si/?a=&b&a", "http://www.gov.si/?a&a=&b"),
    ("query-name-before-value", "http://www.gov.si/?a-b=1&a=2", "http://www.gov.si/?a=2&a-b=1"),
    (
        "query-names-case-sensitive",
        "http://www.gov.si/?b=1&B=2&a=3",
        "http://www.gov.si/?B=2&a=3&b=1",
    ),
    ("query-value-with-equals", "http://www.gov.si/?a=b=c&a=b", "http://www.gov.si/?a=b&a=b=c"),
    ("query-sorted-after-decoding", "http://www.gov.si/?%62=1&a=2", "http://www.gov.si/?a=2&b=1"),
    ("query-empty-dropped", "http://www.gov.si/a?", "http://www.gov.si/a"),
    ("query-only-separators-dropped", "http://www.gov.si/a?&&", "http://www.gov.si/a"),
    ("query-empty-params-dropped", "http://www.gov.si/?a=1&&b=2&", "http://www.gov.si/?a=1&b=2"),
    ("query-empty-with-fragment", "http://www.gov.si/a?#x", "http://www.gov.si/a"),
    # Internationalized and odd hosts.
    ("idn-host", "http://žička.gov.si/", "http://xn--ika-fqa77c.gov.si/"),
    ("idn-host-upper", "http://ŽIČKA.gov.si/", "http://xn--ika-fqa77c.gov.si/"),
    ("punycode-host-kept", "http://xn--ika-fqa77c.gov.si/", "http://xn--ika-fqa77c.gov.si/"),
    ("trailing-dot-host", "http://www.gov.si./", "http://www.gov.si/"),
    ("trailing-dot-host-with-port", "http://www.gov.si.:8080/a", "http://www.gov.si:8080/a"),
    ("trailing-dots-host", "http://www.gov.si../", "http://www.gov.si/"),
    ("ipv4-hex", "http://0x7f.1/", "http://127.0.0.1/"),
    ("ipv6-compressed", "http://[0:0::1]:80/", "http://[::1]/"),
    # Userinfo.
    ("userinfo-dropped", "http://user:secret@www.gov.si/a", "http://www.gov.si/a"),
    ("username-dropped", "http://user@www.gov.si/", "http://www.gov.si/"),
    ("password-only-dropped", "https://:pw@www.gov.si/", "https://www.gov.si/"),
    # Session identifiers.
    ("jsessionid-path", "http://www.gov.si/a.jsp;jsessionid=0A1B2C", "http://www.gov.si/a.jsp"),
    (
        "jsessionid-path-with-query",
        "http://www.gov.si/a;jsessionid=X?b=1",
        "http://www.gov.si/a?b=1",
    ),
    ("jsessionid-path-upper", "http://www.gov.si/a;JSESSIONID=X", "http://www.gov.si/a"),
    (
        "jsessionid-mid-path",
        "http://www.gov.si/app;jsessionid=X/page",
        "http://www.gov.si/app/page",
    ),
    (
        "jsessionid-after-other-param",
        "http://www.gov.si/a;v=1;jsessionid=X",
        "http://www.gov.si/a;v=1",
    ),
    (
        "jsessionid-exposes-dot-segment",
        "http://www.gov.si/a/..;jsessionid=X/b",
        "http://www.gov.si/b",
    ),
    ("jsessionid-encoded-name", "http://www.gov.si/a;jsess%69onid=X", "http://www.gov.si/a"),
    ("other-path-param-kept", "http://www.gov.si/a;v=1", "http://www.gov.si/a;v=1"),
    ("jsessionid-query", "http://www.gov.si/?jsessionid=X&a=1", "http://www.gov.si/?a=1"),
    ("phpsessid-query", "http://www.gov.si/a?PHPSESSID=abc", "http://www.gov.si/a"),
    ("phpsessid-query-lower", "http://www.gov.si/?b=1&phpsessid=abc", "http://www.gov.si/?b=1"),
    ("sid-kept", "http://www.gov.si/?sid=5", "http://www.gov.si/?sid=5"),
    ("utm-kept", "http://www.gov.si/?utm_source=x", "http://www.gov.si/?utm_source=x"),
    # Whitespace the parser strips or removes.
    ("surrounding-and-embedded-whitespace", "  http://www.gov.si/a\tb\n ", "http://www.gov.si/ab"),
]


@pytest.mark.parametrize(("url", "expected"), _cases(CANONICAL))
def test_canonicalize(url: str, expected: str) -> None:
    assert canonicalize(url) == expected


@pytest.mark.parametrize(("url", "expected"), _cases(CANONICAL))
def test_canonicalize_is_idempotent(url: str, expected: str) -> None:
    once = canonicalize(url)
    assert canonicalize(once) == once


@pytest.mark.parametrize(
    "url",
    [
        pytest.param("", id="empty"),
        pytest.param("/relative/path", id="relative"),
        pytest.param("www.gov.si", id="no-scheme"),
        pytest.param("mailto:info@gov.si", id="mailto"),
        pytest.param("javascript:void(0)", id="javascript"),
        pytest.param("ftp://ftp.gov.si/a", id="ftp"),
        pytest.param("file:///etc/passwd", id="file"),
        pytest.param("http://", id="no-host"),
        pytest.param("http://a b.gov.si/", id="space-in-host"),
        pytest.param("http://www.gov.si:99999/", id="port-out-of-range"),
        pytest.param("http://./", id="host-only-dots"),
        pytest.param("http://www.gov.si/\ud800", id="lone-surrogate"),
    ],
)
def test_canonicalize_rejects(url: str) -> None:
    with pytest.raises(ValueError):
        canonicalize(url)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        pytest.param("http://www.gov.si/", "https://www.gov.si/", id="scheme"),
        pytest.param("http://www.gov.si/", "http://gov.si/", id="www"),
        pytest.param("http://www.gov.si/a", "http://www.gov.si/a/", id="trailing-slash"),
        pytest.param("http://www.gov.si/A", "http://www.gov.si/a", id="path-case"),
        pytest.param("http://www.gov.si/", "http://www.gov.si:8080/", id="port"),
        pytest.param("http://www.gov.si/a%2Fb", "http://www.gov.si/a/b", id="encoded-slash"),
        pytest.param("http://www.gov.si/?a", "http://www.gov.si/?a=", id="bare-vs-blank"),
        pytest.param("http://www.gov.si/?q=a+b", "http://www.gov.si/?q=a%20b", id="plus-vs-space"),
        pytest.param("http://www.gov.si/?a=1&b", "http://www.gov.si/?a=1%26b", id="amp-vs-escape"),
        pytest.param("http://www.gov.si/?sid=1", "http://www.gov.si/?sid=2", id="sid"),
    ],
)
def test_canonicalize_keeps_distinct(a: str, b: str) -> None:
    assert canonicalize(a) != canonicalize(b)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        pytest.param("http://WWW.gov.si:80", "http://www.gov.si/#top", id="case-port-fragment"),
        pytest.param("http://www.gov.si/?b=2&a=1", "http://www.gov.si/?a=1&b=2", id="order"),
        pytest.param("http://www.gov.si/~a", "http://www.gov.si/%7ea", id="tilde"),
        pytest.param("http://www.gov.si/č", "http://www.gov.si/%c4%8d", id="utf8"),
        pytest.param("http://www.gov.si/a/b/../c", "http://www.gov.si/a/./c", id="dots"),
    ],
)
def test_canonicalize_merges(a: str, b: str) -> None:
    assert canonicalize(a) == canonicalize(b)


def test_enough_canonicalization_cases() -> None:
    assert len(CANONICAL) >= 50
    assert len({row[0] for row in CANONICAL}) == len(CANONICAL), "duplicate case ids"


# -- resolve ---------------------------------------------------------------------------

BASE = "https://www.gov.si/drzavni-organi/ministrstva/index.html?x=1#top"

RESOLVE: list[tuple[str, str, str | None]] = [
    ("parent", "../vlada/", "https://www.gov.si/drzavni-organi/vlada/"),
    ("dot-slash", "./a.pdf", "https://www.gov.si/drzavni-organi/ministrstva/a.pdf"),
    ("bare-relative", "a.pdf", "https://www.gov.si/drzavni-organi/ministrstva/a.pdf"),
    ("root", "/", "https://www.gov.si/"),
    ("absolute-path-dots", "/./a/../b", "https://www.gov.si/b"),
    ("above-root", "../../../../x", "https://www.gov.si/x"),
    ("scheme-relative", "//e-uprava.gov.si/storitve", "https://e-uprava.gov.si/storitve"),
    ("query-only", "?q=1", "https://www.gov.si/drzavni-organi/ministrstva/index.html?q=1"),
    (
        "fragment-only",
        "#vsebina",
        "https://www.gov.si/drzavni-organi/ministrstva/index.html?x=1#vsebina",
    ),
    ("absolute", "http://www.gov.si/x", "http://www.gov.si/x"),
    ("absolute-upper", "HTTP://WWW.GOV.SI", "http://www.gov.si/"),
    ("absolute-other-host", "https://www.uradni-list.si/a?b#c", "https://www.uradni-list.si/a?b#c"),
    ("http-scheme-only-relative", "http:a", "http://a/"),
    ("same-scheme-relative", "https:a", "https://www.gov.si/drzavni-organi/ministrstva/a"),
    ("backslashes", "\\a\\b", "https://www.gov.si/a/b"),
    ("backslash-scheme-relative", "\\\\x.gov.si\\y", "https://x.gov.si/y"),
    ("surrounding-spaces", "  /a  ", "https://www.gov.si/a"),
    ("embedded-tab-newline", "/a\tb\nc", "https://www.gov.si/abc"),
    ("newlines-around", "\n/novice/\r\n", "https://www.gov.si/novice/"),
    ("space-inside", "/a b", "https://www.gov.si/a%20b"),
    ("non-ascii", "/čšž?q=ž", "https://www.gov.si/%C4%8D%C5%A1%C5%BE?q=%C5%BE"),
    ("three-dots", "...", "https://www.gov.si/drzavni-organi/ministrstva/..."),
    ("empty-is-base", "", "https://www.gov.si/drzavni-organi/ministrstva/index.html?x=1"),
    ("whitespace-is-base", "   ", "https://www.gov.si/drzavni-organi/ministrstva/index.html?x=1"),
    ("mailto", "mailto:info@gov.si", None),
    ("mailto-upper", "MAILTO:info@gov.si", None),
    ("tel", "tel:+38614781000", None),
    ("javascript", "javascript:void(0)", None),
    ("javascript-mixed-case-padded", " JavaScript:void(0)", None),
    ("data", "data:text/html,hi", None),
    ("ftp", "ftp://ftp.gov.si/a", None),
    ("file", "file:///etc/passwd", None),
    ("websocket", "wss://www.gov.si/ws", None),
    ("about", "about:blank", None),
    ("unclosed-ipv6", "http://[::1", None),
    ("space-in-host", "http://a b/", None),
    ("port-out-of-range", "http://www.gov.si:99999/", None),
    ("no-host", "https://", None),
    ("lone-surrogate", "/\ud800", None),
]


@pytest.mark.parametrize(("href", "expected"), _cases(RESOLVE))
def test_resolve(href: str, expected: str | None) -> None:
    assert resolve(BASE, href) == expected


def test_resolve_needs_a_valid_base() -> None:
    # Like the browser's URL(href, base) constructor: an unparsable base fails outright.
    assert resolve("not a url", "a") is None
    assert resolve("not a url", "http://www.gov.si/") is None


def _wpt_cases() -> list[Any]:
    rows = json.loads(WPT_FILE.read_text(encoding="utf-8"))
    params = []
    for i, row in enumerate(rows):
        label = repr(row["input"])
        if len(label) > 48:
            label = label[:45] + "..."
        params.append(pytest.param(row["input"], row["base"], row["href"], id=f"{i:03d}:{label}"))
    return params


WPT = _wpt_cases()


def test_wpt_file_is_complete() -> None:
    assert len(WPT) == 166


@pytest.mark.parametrize(("href", "base", "expected"), WPT)
def test_resolve_wpt(href: str, base: str, expected: str | None) -> None:
    # null in the WPT data means the parser must fail; every other expectation here is
    # an http(s) URL, so resolve must reproduce it exactly.
    assert resolve(base, href) == expected


@pytest.mark.parametrize(("href", "base", "expected"), WPT)
def test_canonicalize_is_idempotent_on_wpt(href: str, base: str, expected: str | None) -> None:
    resolved = resolve(base, href)
    if resolved is None:
        return
    try:
        once = canonicalize(resolved)
    except ValueError:
        return
    assert canonicalize(once) == once


# -- in_scope --------------------------------------------------------------------------

GOV = ["gov.si"]

IN_SCOPE: list[tuple[str, str, list[str], bool]] = [
    ("subdomain", "https://www.gov.si/", GOV, True),
    ("apex", "https://gov.si/", GOV, True),
    ("hyphenated-subdomain", "https://e-uprava.gov.si/a", GOV, True),
    ("deep-subdomain-with-port", "http://a.b.c.gov.si:8080/x", GOV, True),
    ("upper-case-url", "HTTPS://WWW.GOV.SI/", GOV, True),
    ("trailing-dot-host", "https://www.gov.si./", GOV, True),
    ("idn-subdomain", "https://žička.gov.si/", GOV, True),
    ("userinfo-ignored", "https://evil.com@www.gov.si/", GOV, True),
    ("not-label-boundary", "https://notgov.si/", GOV, False),
    ("suffix-glued", "https://evilgov.si/", GOV, False),
    ("suffix-as-subdomain-elsewhere", "https://gov.si.example.com/", GOV, False),
    ("suffix-in-path", "https://example.com/gov.si", GOV, False),
    ("suffix-in-query", "https://example.com/?u=www.gov.si", GOV, False),
    ("suffix-in-fragment", "https://example.com#.gov.si", GOV, False),
    ("suffix-as-userinfo", "https://gov.si@example.com/", GOV, False),
    ("parent-domain", "https://si/", GOV, False),
    ("ipv4", "http://127.0.0.1/", GOV, False),
    ("ipv4-decimal", "http://2130706433/", GOV, False),
    ("ipv6", "http://[::1]/", GOV, False),
    ("ftp", "ftp://ftp.gov.si/", GOV, False),
    ("mailto", "mailto:info@gov.si", GOV, False),
    ("malformed", "http://a b.gov.si/", GOV, False),
    ("relative", "/a/b", GOV, False),
    ("empty-url", "", GOV, False),
    ("suffix-leading-dot", "https://www.gov.si/", [".gov.si"], True),
    ("suffix-upper-case", "https://www.gov.si/", ["GOV.SI"], True),
    ("suffix-padded-trailing-dot", "https://www.gov.si/", ["  gov.si. "], True),
    ("suffix-leading-dot-apex", "https://gov.si/", [".gov.si"], True),
    ("second-suffix", "https://www.e-uprava.si/", ["gov.si", "e-uprava.si"], True),
    ("idn-suffix", "https://xn--ika-fqa77c.si/", ["žička.si"], True),
    ("no-suffixes", "https://www.gov.si/", [], False),
    ("empty-suffix-matches-nothing", "https://example.com/", [""], False),
    ("dot-suffix-matches-nothing", "https://example.com/", ["."], False),
]


@pytest.mark.parametrize(("url", "suffixes", "expected"), _cases(IN_SCOPE))
def test_in_scope(url: str, suffixes: list[str], expected: bool) -> None:
    assert in_scope(url, suffixes) is expected


def _canonical_in_scope(url: str, suffixes: list[str]) -> str | None:
    # What Scope.canonical answers, the long way: canonicalize, then parse it again.
    try:
        canonical = canonicalize(url)
    except ValueError:
        return None
    return canonical if in_scope(canonical, suffixes) else None


@pytest.mark.parametrize(("url", "suffixes", "expected"), _cases(IN_SCOPE))
def test_scope_canonical_is_canonicalize_then_in_scope(
    url: str, suffixes: list[str], expected: bool
) -> None:
    # The one-parse answer, asked twice (the second from its memory), and for a URL too
    # long to be remembered, is the two-parse one.
    scope = Scope(tuple(suffixes))
    long = url + ("?" if "?" not in url else "&") + "q=" + "x" * 3000 if url else url
    for u in (url, url, long):
        assert scope.canonical(u) == (_canonical_in_scope(u, suffixes), False)


def test_scope_canonical_remembers_a_bounded_number_of_short_urls() -> None:
    from govsi.web import scope as module

    scope = Scope(("gov.si",))
    for i in range(10_000):
        scope.canonical(f"https://www.gov.si/{i}")
    assert module._remembered.cache_info().currsize == module._MEMO_URLS
    # A URL too long to remember is answered without asking the memory.
    before = module._remembered.cache_info()
    assert scope.canonical("https://www.gov.si/" + "b" * 600)[0] is not None
    assert module._remembered.cache_info() == before


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        pytest.param("https://WWW.Gov.SI./a/../b", ("https://www.gov.si/b", "www.gov.si", True),
                     id="name"),
        pytest.param("http://127.0.0.1:8080/", ("http://127.0.0.1:8080/", "127.0.0.1", False),
                     id="ipv4"),
        pytest.param("http://[::1]/", ("http://[::1]/", "[::1]", False), id="ipv6"),
        pytest.param("http://x.gov.si/a;jsessionid=1/..;jsessionid=2",
                     ("http://x.gov.si/", "x.gov.si", True), id="session-ids-again"),
    ],
)  # fmt: skip
def test_canonical_and_host(url: str, expected: tuple[str, str, bool]) -> None:
    assert canonical_and_host(url) == expected
    assert canonical_and_host(url)[:2] == (canonicalize(url), host_of(canonicalize(url)))


@pytest.mark.parametrize(
    ("host", "suffixes", "expected"),
    [
        pytest.param("www.gov.si", ["gov.si"], True, id="under"),
        pytest.param("gov.si", [".GOV.SI."], True, id="at-suffix-spelled-loosely"),
        pytest.param("xn--ika-fqa77c.si", ["žička.si"], True, id="idn-suffix"),
        pytest.param("notgov.si", ["gov.si"], False, id="not-label-boundary"),
        pytest.param("", ["gov.si"], False, id="no-host"),
        pytest.param("example.com", [""], False, id="empty-suffix"),
    ],
)
def test_host_in_scope(host: str, suffixes: list[str], expected: bool) -> None:
    assert host_in_scope(host, suffixes) is expected


# -- host_of ---------------------------------------------------------------------------

HOST_OF: list[tuple[str, str, str]] = [
    ("plain", "https://www.gov.si/a", "www.gov.si"),
    ("case-and-port", "http://WWW.Gov.SI:8080/a", "www.gov.si"),
    ("userinfo", "http://user:pw@www.gov.si/", "www.gov.si"),
    ("idn", "http://žička.gov.si/", "xn--ika-fqa77c.gov.si"),
    ("trailing-dot", "http://www.gov.si./", "www.gov.si"),
    ("ipv4", "http://127.0.0.1:80/", "127.0.0.1"),
    ("ipv6", "http://[::1]:8080/", "[::1]"),
    ("empty", "", ""),
    ("malformed", "not a url", ""),
    ("relative", "/relative", ""),
    ("mailto", "mailto:info@gov.si", ""),
]


@pytest.mark.parametrize(("url", "expected"), _cases(HOST_OF))
def test_host_of(url: str, expected: str) -> None:
    assert host_of(url) == expected


# -- url_too_long ----------------------------------------------------------------------

URL_20 = "http://www.gov.si/ab"


@pytest.mark.parametrize(
    ("max_length", "expected"),
    [
        pytest.param(0, False, id="zero-is-no-limit"),
        pytest.param(-1, False, id="negative-is-no-limit"),
        pytest.param(20, False, id="exactly-at-limit"),
        pytest.param(21, False, id="under-limit"),
        pytest.param(19, True, id="over-limit"),
    ],
)
def test_url_too_long(max_length: int, expected: bool) -> None:
    assert len(URL_20) == 20
    assert url_too_long(URL_20, max_length) is expected


# -- fingerprint -----------------------------------------------------------------------


def test_fingerprint_is_stable_unsigned_and_distinct() -> None:
    keys = [f"page https://www.gov.si/novice/{i}" for i in range(100_000)] + ["", "é\ud800"]
    prints = [fingerprint(k) for k in keys]
    assert prints == [fingerprint("".join(k)) for k in keys]  # another str, the same value
    assert all(0 <= p < 1 << 64 for p in prints)
    assert len(set(prints)) == len(keys)
    # All 64 bits carry the key: 100 000 keys fill about 51 300 of 65 536 16-bit values.
    assert len({p >> 48 for p in prints}) > 50_000 and len({p & 0xFFFF for p in prints}) > 50_000


def test_fingerprint_is_keyed_per_process() -> None:
    # A site cannot compute which URLs collide: another process hashes differently.
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "PYTHONHASHSEED"}
    code = "from govsi.web.urls import fingerprint; print(fingerprint('page https://www.gov.si/'))"
    runs = {subprocess.check_output([sys.executable, "-c", code], env=env) for _ in range(3)}
    assert len(runs) == 3
