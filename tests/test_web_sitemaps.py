"""Tests for govsi.web.sitemaps: sitemap XML, gzip, plain text and feeds, as servers serve them."""

from __future__ import annotations

import gzip
import random
import tracemalloc
import zlib
from typing import Any

import pytest

from govsi.web import sitemaps
from govsi.web.sitemaps import MAX_URLS, Sitemap, gunzip, is_gzip, parse_sitemap

URL = "https://www.gov.si/sitemap.xml"
NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
GOOGLE_NS = "http://www.google.com/schemas/sitemap/0.84"
A, B, C = "https://www.gov.si/a", "https://www.gov.si/b", "https://www.gov.si/c"
NOT_A_SITEMAP = Sitemap([], [], False, "not a sitemap")


def _cases(table: list[tuple[Any, ...]]) -> list[Any]:
    """Turn (id, *values) rows into pytest params, so ids sit next to their data."""
    return [pytest.param(*row[1:], id=row[0]) for row in table]


def urlset(*locs: str, ns: str = NS) -> bytes:
    xmlns = f' xmlns="{ns}"' if ns else ""
    entries = "".join(f"<url><loc>{loc}</loc></url>" for loc in locs)
    return f"<urlset{xmlns}>{entries}</urlset>".encode()


def index(*locs: str, ns: str = NS) -> bytes:
    xmlns = f' xmlns="{ns}"' if ns else ""
    entries = "".join(f"<sitemap><loc>{loc}</loc></sitemap>" for loc in locs)
    return f"<sitemapindex{xmlns}>{entries}</sitemapindex>".encode()


# -- XML: namespaces, extensions, encodings, entities ----------------------------------

IMAGE = 'xmlns:image="http://www.google.com/schemas/sitemap-image/1.1"'
NEWS = 'xmlns:news="http://www.google.com/schemas/sitemap-news/0.9"'
XHTML = 'xmlns:xhtml="http://www.w3.org/1999/xhtml"'
VIDEO = 'xmlns:video="http://www.google.com/schemas/sitemap-video/1.1"'

# (id, body, urls, sitemaps); every one of these reads cleanly: truncated False, error None.
XML: list[tuple[str, bytes, list[str], list[str]]] = [
    # Namespaces: the protocol's, Google's old one, none, and what servers get wrong.
    ("urlset-sitemaps-org", urlset(A, B), [A, B], []),
    ("urlset-no-namespace", urlset(A, B, ns=""), [A, B], []),
    ("urlset-google-0.84", urlset(A, B, ns=GOOGLE_NS), [A, B], []),
    (
        "urlset-misspelt-namespace",
        urlset(A, ns="https://www.sitemaps.org/schemas/sitemap/0.9/"),
        [A],
        [],
    ),
    (
        "urlset-prefixed-namespace",
        f'<sm:urlset xmlns:sm="{NS}"><sm:url><sm:loc>{A}</sm:loc></sm:url></sm:urlset>'.encode(),
        [A],
        [],
    ),
    ("index-sitemaps-org", index(A, B), [], [A, B]),
    ("index-no-namespace", index(A, ns=""), [], [A]),
    ("index-google-0.84", index(A, ns=GOOGLE_NS), [], [A]),
    ("urlset-empty", urlset(), [], []),
    ("urlset-self-closing", f'<urlset xmlns="{NS}"/>'.encode(), [], []),
    ("index-empty", index(), [], []),
    # Mixed entries: each goes where its element says, whatever the root.
    (
        "urlset-listing-a-sitemap",
        f"<urlset><url><loc>{A}</loc></url><sitemap><loc>{B}</loc></sitemap></urlset>".encode(),
        [A],
        [B],
    ),
    # Extensions: only the <loc> directly under <url> counts.
    (
        "image-extension",
        f'<urlset xmlns="{NS}" {IMAGE}><url><loc>{A}</loc><image:image>'
        f"<image:loc>{B}/slika.jpg</image:loc></image:image></url></urlset>".encode(),
        [A],
        [],
    ),
    (
        "news-extension",
        f'<urlset xmlns="{NS}" {NEWS}><url><loc>{A}</loc><news:news><news:publication>'
        "<news:name>GOV.SI</news:name><news:language>sl</news:language></news:publication>"
        "<news:title>Novica</news:title></news:news></url></urlset>".encode(),
        [A],
        [],
    ),
    (
        "xhtml-alternate-links",
        f'<urlset xmlns="{NS}" {XHTML}><url><loc>{A}</loc>'
        f'<xhtml:link rel="alternate" hreflang="en" href="{B}"/></url></urlset>'.encode(),
        [A],
        [],
    ),
    (
        "video-extension",
        f'<urlset xmlns="{NS}" {VIDEO}><url><loc>{A}</loc><video:video>'
        f"<video:content_loc>{B}.mp4</video:content_loc>"
        f"<video:player_loc>{C}</video:player_loc></video:video></url></urlset>".encode(),
        [A],
        [],
    ),
    (
        "foreign-loc-directly-under-url",
        f'<urlset xmlns="{NS}" {IMAGE}><url><image:loc>{B}</image:loc><loc>{A}</loc></url>'
        "</urlset>".encode(),
        [A],
        [],
    ),
    (
        "loc-outside-url",
        f'<urlset xmlns="{NS}"><loc>{B}</loc><url><loc>{A}</loc></url></urlset>'.encode(),
        [A],
        [],
    ),
    (
        "lastmod-changefreq-priority",
        f'<urlset xmlns="{NS}"><url><lastmod>2024-01-01</lastmod><loc>{A}</loc>'
        f"<changefreq>daily</changefreq><priority>0.5</priority></url></urlset>".encode(),
        [A],
        [],
    ),
    # What comes before the root element.
    ("declaration", b'<?xml version="1.0" encoding="UTF-8"?>\n' + urlset(A), [A], []),
    ("utf8-bom", b"\xef\xbb\xbf" + b'<?xml version="1.0" encoding="UTF-8"?>' + urlset(A), [A], []),
    ("bom-then-blank-lines", b"\xef\xbb\xbf\n\n  " + b'<?xml version="1.0"?>' + urlset(A), [A], []),
    ("leading-whitespace", b"\r\n\t  \n" + b'<?xml version="1.0"?>' + urlset(A), [A], []),
    (
        "stylesheet-and-comment",
        b'<?xml version="1.0"?><?xml-stylesheet type="text/xsl" href="/sitemap.xsl"?>'
        b"<!-- generated by Yoast -->" + urlset(A),
        [A],
        [],
    ),
    (
        "latin2-declared",
        '<?xml version="1.0" encoding="ISO-8859-2"?><urlset><url><loc>https://www.gov.si/čšž</loc>'
        "</url></urlset>".encode("iso-8859-2"),
        ["https://www.gov.si/čšž"],
        [],
    ),
    (
        "utf8-non-ascii",
        urlset("https://www.gov.si/teme/ključ"),
        ["https://www.gov.si/teme/ključ"],
        [],
    ),
    # Text in <loc>: CDATA, entities, whitespace.
    ("cdata", urlset(f"<![CDATA[{A}?x=1&y=2]]>"), [f"{A}?x=1&y=2"], []),
    ("cdata-padded", urlset(f"\n   <![CDATA[  {A}  ]]>\n  "), [A], []),
    ("entity-amp", urlset(f"{A}?x=1&amp;y=2"), [f"{A}?x=1&y=2"], []),
    ("numeric-refs", urlset(f"{A}?x=1&#38;y=2&#x26;z=3"), [f"{A}?x=1&y=2&z=3"], []),
    ("entity-apos-quot", urlset(f"{A}?q=&quot;x&quot;&apos;"), [f'{A}?q="x"\''], []),
    ("bare-amp-repaired", urlset(f"{A}?x=1&y=2&amp;z=3"), [f"{A}?x=1&y=2&z=3"], []),
    (
        "bare-amp-repaired-outside-cdata-only",
        urlset(f"<![CDATA[{A}?x=1&amp;y&z]]>", f"{B}?x=1&y=2"),
        [f"{A}?x=1&amp;y&z", f"{B}?x=1&y=2"],
        [],
    ),
    ("whitespace-around", urlset(f"\n\t  {A}  \n", f" {B}\r\n"), [A, B], []),
    ("nbsp-around", urlset(f"\u00a0{A}\u00a0"), [A], []),
    # Duplicates: the first occurrence keeps its place.
    ("duplicates", urlset(A, B, A, f"  {B} ", C), [A, B, C], []),
    ("duplicate-sitemaps", index(A, A, B), [], [A, B]),
    (
        "same-url-as-page-and-sitemap",
        f"<urlset><url><loc>{A}</loc></url><sitemap><loc>{A}</loc></sitemap></urlset>".encode(),
        [A],
        [A],
    ),
    # Only absolute http(s) URLs with a host; nothing is resolved or rewritten.
    (
        "relative-and-other-schemes-ignored",
        urlset(
            "/a",
            "a.html",
            "//www.gov.si/c",
            "mailto:info@gov.si",
            "ftp://ftp.gov.si/x",
            "javascript:void(0)",
            "tel:+38614781000",
            "http:///no-host",
            "http://[::1/broken",
            "",
            "   ",
            A,
        ),
        [A],
        [],
    ),
    ("relative-sitemap-ignored", index("/sitemap2.xml", B), [], [B]),
    ("scheme-case-kept", urlset("HTTPS://WWW.GOV.SI/A"), ["HTTPS://WWW.GOV.SI/A"], []),
    (
        "http-and-https",
        urlset("http://www.gov.si/", "https://www.gov.si/"),
        ["http://www.gov.si/", "https://www.gov.si/"],
        [],
    ),
    (
        "fragment-and-port-kept",
        urlset("https://www.gov.si:8443/a#b"),
        ["https://www.gov.si:8443/a#b"],
        [],
    ),
    # External DTDs are never fetched: the document still reads, with no network.
    (
        "external-dtd-not-loaded",
        b'<?xml version="1.0"?><!DOCTYPE urlset SYSTEM "http://127.0.0.1:9/sitemap.dtd">'
        + urlset(A),
        [A],
        [],
    ),
]


@pytest.mark.parametrize(("body", "urls", "children"), _cases(XML))
def test_xml(body: bytes, urls: list[str], children: list[str]) -> None:
    assert parse_sitemap(body, URL) == Sitemap(urls, children, False, None)


# -- XML bombs and external entities ----------------------------------------------------

LAUGHS = "".join(
    f'<!ENTITY lol{i} "{f"&lol{i - 1};" * 10}">' if i else '<!ENTITY lol0 "lol">' for i in range(10)
)
BILLION_LAUGHS = (
    f'<?xml version="1.0"?><!DOCTYPE urlset [{LAUGHS}]><urlset xmlns="{NS}">'
    f"<url><loc>{A}</loc></url><url><loc>&lol9;</loc></url><url><loc>{B}</loc></url></urlset>"
).encode()
QUADRATIC = (
    f'<?xml version="1.0"?><!DOCTYPE urlset [<!ENTITY big "{"x" * 100_000}">]><urlset>'
    f"<url><loc>{A}</loc></url><url><loc>{B}/{'&big;' * 100_000}</loc></url></urlset>"
).encode()


@pytest.mark.timeout(20)
@pytest.mark.parametrize(
    "body", _cases([("billion-laughs", BILLION_LAUGHS), ("quadratic", QUADRATIC)])
)
def test_entity_expansion_bomb_stops(body: bytes) -> None:
    # libxml2 stops at the amplification; what came before the bomb is kept.
    got = parse_sitemap(body, URL)
    assert (got.urls, got.sitemaps, got.truncated) == ([A], [], False)
    assert got.error is not None and got.error.startswith("xml: ")
    assert "lol" not in "".join(got.urls) and "xxx" not in "".join(got.urls)


EXTERNAL = [
    (
        "file-entity",
        b'<?xml version="1.0"?><!DOCTYPE urlset [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>'
        + urlset(f"{A}/&xxe;", "&xxe;", B),
    ),
    (
        "parameter-entity",
        b'<?xml version="1.0"?><!DOCTYPE urlset [<!ENTITY % pe SYSTEM "http://127.0.0.1:9/x.dtd">'
        b"%pe;]>" + urlset(B),
    ),
    (
        "internal-entity-not-expanded",
        b'<?xml version="1.0"?><!DOCTYPE urlset [<!ENTITY host "https://evil.example">]>'
        + urlset("&host;/a", B),
    ),
]


@pytest.mark.timeout(20)
@pytest.mark.parametrize("body", _cases(EXTERNAL))
def test_entities_are_not_resolved(body: bytes) -> None:
    # A <loc> holding an entity reference is not a plain URL: it is dropped, not expanded.
    assert parse_sitemap(body, URL) == Sitemap([B], [], False, None)


# -- Broken and non-sitemap bodies ------------------------------------------------------

NOT_SITEMAPS = [
    ("empty", b""),
    ("whitespace-only", b"  \r\n\t\n"),
    ("bom-only", b"\xef\xbb\xbf"),
    ("html-error-page", b"<!DOCTYPE html><html><head><title>404</title></head><body>Ni strani"),
    (
        "xhtml-page",
        b'<?xml version="1.0"?><!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Strict//EN" '
        b'"http://www.w3.org/TR/xhtml1/DTD/xhtml1-strict.dtd"><html xmlns="http://www.w3.org/1999/xhtml">'
        b'<head><link rel="canonical" href="https://www.gov.si/"/></head><body>'
        b'<a href="https://www.gov.si/a">a</a></body></html>',
    ),
    ("html-with-url-text", f"<html><body><p>{A}</p><loc>{B}</loc></body></html>".encode()),
    ("other-xml", f"<note><url><loc>{A}</loc></url></note>".encode()),
    ("xml-declaration-only", b'<?xml version="1.0"?>'),
    ("lone-angle-brackets", b"<<<<>>>>"),
    ("binary-junk", bytes(range(256)) * 40),
    ("binary-junk-starting-with-lt", b"<\x00\xff\xfe\x01" + bytes(range(256))),
    ("random-bytes", random.Random(7).randbytes(4096)),
    ("json", b'{"urls": ["https://www.gov.si/a"]}'),
    ("text-without-urls", b"Vzdrzevanje strani.\nProsimo, poskusite kasneje.\n"),
    ("text-with-relative-paths-only", b"/a\n/b\nsitemap.xml\n"),
    ("gzipped-html", gzip.compress(b"<html><body>Napaka</body></html>")),
]


@pytest.mark.parametrize("body", _cases(NOT_SITEMAPS))
def test_not_a_sitemap(body: bytes) -> None:
    assert parse_sitemap(body, URL) == NOT_A_SITEMAP


CUT = urlset(A, B)[: urlset(A, B).index(B.encode()) + 10]  # the second <loc> half written


def test_cut_document_keeps_complete_entries_only() -> None:
    assert CUT.endswith(b"<loc>https://ww")
    assert parse_sitemap(CUT, URL) == Sitemap([A], [], False, "xml: premature end of document")


def test_missing_root_end_tag_is_reported() -> None:
    body = urlset(A, B).removesuffix(b"</urlset>")
    assert parse_sitemap(body, URL) == Sitemap([A, B], [], False, "xml: premature end of document")


@pytest.mark.parametrize(
    ("body", "urls"),
    _cases(
        [
            (
                "tag-mismatch",
                f"<urlset><url><loc>{A}</loc></ur><url><loc>{B}</loc></url></urlset>".encode(),
                [A, B],
            ),
            (
                "nul-bytes",
                f"<urlset><url><loc>{A}</loc></url>\0\0<url><loc>{B}</loc></url></urlset>".encode(),
                [A, B],
            ),
            ("garbage-after-root", urlset(A) + b"<urlset><url><loc>" + B.encode(), [A]),
        ]
    ),
)
def test_recovered_xml_errors_are_reported(body: bytes, urls: list[str]) -> None:
    got = parse_sitemap(body, URL)
    assert (got.urls, got.sitemaps, got.truncated) == (urls, [], False)
    assert got.error is not None and got.error.startswith("xml: ")


@pytest.mark.timeout(20)
def test_unterminated_cdata_openers_stay_linear() -> None:
    # Escaping bare "&" skips CDATA sections; many unterminated openers must not rescan.
    body = urlset(A).removesuffix(b"</urlset>") + b"<url><loc>&x" + b"<![CDATA[" * 200_000
    assert parse_sitemap(body, URL) == Sitemap([A], [], False, "xml: premature end of document")


def test_never_raises_on_mangled_sitemaps() -> None:
    rng = random.Random(1)
    seeds = [urlset(A, B, C), index(A, B), gzip.compress(urlset(A, B)), b"https://a.si/\nx\n"]
    for _ in range(300):
        body = bytearray(rng.choice(seeds))
        for _ in range(rng.randint(1, 8)):
            pos = rng.randrange(len(body))
            body[pos : pos + rng.randint(0, 3)] = rng.randbytes(rng.randint(0, 3))
        got = parse_sitemap(bytes(body[: rng.randint(0, len(body))]), URL)
        assert isinstance(got, Sitemap)
        assert all(u.lower().startswith(("http://", "https://")) for u in got.urls + got.sitemaps)


# -- gzip --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "url", "expected"),
    _cases(
        [
            (
                "magic-bytes-xml-url",
                gzip.compress(urlset(A, B)),
                URL,
                Sitemap([A, B], [], False, None),
            ),
            ("gz-url", gzip.compress(index(A)), URL + ".gz", Sitemap([], [A], False, None)),
            ("gz-url-already-inflated", urlset(A), URL + ".gz", Sitemap([A], [], False, None)),
            (
                "zlib-level-9",
                gzip.compress(urlset(A), compresslevel=9),
                URL,
                Sitemap([A], [], False, None),
            ),
            (
                "gzipped-bom",
                gzip.compress(b"\xef\xbb\xbf" + urlset(A)),
                URL,
                Sitemap([A], [], False, None),
            ),
            (
                "gzipped-plain-text",
                gzip.compress(f"{A}\n{B}\n".encode()),
                URL,
                Sitemap([A, B], [], False, None),
            ),
            (
                "multi-member",
                gzip.compress(urlset(A, B)[:30]) + gzip.compress(urlset(A, B)[30:]),
                URL,
                Sitemap([A, B], [], False, None),
            ),
            (
                "trailing-zero-padding",
                gzip.compress(urlset(A)) + b"\0" * 512,
                URL,
                Sitemap([A], [], False, None),
            ),
        ]
    ),
)
def test_gzip(body: bytes, url: str, expected: Sitemap) -> None:
    assert parse_sitemap(body, url) == expected


def test_gzip_cut_short_keeps_complete_entries() -> None:
    doc = urlset(A, B, C)
    packed = gzip.compress(doc, compresslevel=0)  # stored: output byte i is input byte 15 + i
    body = packed[: 10 + 5 + doc.index(B.encode()) + 10]  # gzip header, block header, mid-B
    assert parse_sitemap(body, URL) == Sitemap([A], [], False, "gzip: incomplete stream")


@pytest.mark.parametrize(
    ("body", "urls"),
    _cases(
        [
            ("magic-then-junk", b"\x1f\x8b" + b"junk" * 10, []),
            (
                "second-member-corrupt",
                gzip.compress(urlset(A, B)[:110]) + b"\x1f\x8b" + b"junk" * 10,
                [A],
            ),
        ]
    ),
)
def test_corrupt_gzip(body: bytes, urls: list[str]) -> None:
    got = parse_sitemap(body, URL)
    assert (got.urls, got.sitemaps, got.truncated) == (urls, [], False)
    assert got.error is not None and got.error.startswith("gzip: ")


def _bomb(head: bytes, filler: bytes, nominal: int, members: int = 1) -> bytes:
    """A small gzip body that inflates to ``head`` plus ``nominal`` bytes of filler."""
    block = filler * (1024 * 1024 // len(filler))
    out = []
    for m in range(members):
        packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
        parts = [packer.compress(head if m == 0 else b"")]
        parts += [packer.compress(block) for _ in range(nominal // members // len(block))]
        out.append(b"".join(parts) + packer.flush())
    return b"".join(out)


@pytest.mark.parametrize("members", _cases([("one-member", 1), ("many-members", 64)]))
def test_gzip_bomb_is_cut_at_max_bytes(monkeypatch: pytest.MonkeyPatch, members: int) -> None:
    monkeypatch.setattr(sitemaps, "MAX_BYTES", 256 * 1024)
    body = _bomb(
        f'<urlset xmlns="{NS}"><url><loc>{A}</loc></url><url><loc>{B}</loc></url>'.encode(),
        b" ",
        64 * 1024 * 1024,
        members,
    )
    assert len(body) < 200 * 1024
    tracemalloc.start()
    try:
        got = parse_sitemap(body, URL)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert got == Sitemap([A, B], [], True, None)
    assert peak < 4 * 1024 * 1024  # 64 MiB inflated in one go would show here


def test_gzip_bomb_of_zeros(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sitemaps, "MAX_BYTES", 64 * 1024)
    got = parse_sitemap(_bomb(urlset(A)[:-9], b"\0", 16 * 1024 * 1024), URL)
    assert (got.urls, got.sitemaps, got.truncated) == ([A], [], True)
    assert got.error is not None and got.error.startswith("xml: ")  # NUL is not XML


def test_cut_at_max_bytes_drops_half_written_loc(monkeypatch: pytest.MonkeyPatch) -> None:
    body = urlset(A, B, C)
    monkeypatch.setattr(sitemaps, "MAX_BYTES", body.index(B.encode()) + 10)
    expected = Sitemap([A], [], True, None)
    assert parse_sitemap(body, URL) == expected
    assert parse_sitemap(gzip.compress(body), URL) == expected


def test_plain_text_cut_at_max_bytes_drops_half_written_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    body = f"{A}\n{B}\n{C}\n".encode()
    monkeypatch.setattr(sitemaps, "MAX_BYTES", len(A) + 1 + len(B) - 3)
    assert parse_sitemap(body, URL) == Sitemap([A], [], True, None)
    assert parse_sitemap(gzip.compress(body), URL) == Sitemap([A], [], True, None)


@pytest.mark.parametrize(
    ("body", "expected"),
    _cases(
        [
            ("gzip", gzip.compress(urlset(A)), urlset(A)),
            ("multi-member", gzip.compress(b"ab") + gzip.compress(b"cd"), b"abcd"),
            ("not-gzip-as-is", urlset(A), urlset(A)),
            ("empty", b"", b""),
            ("cut-short", gzip.compress(b"x" * 100, 0)[:-20], b"x" * 88),
            ("corrupt", b"\x1f\x8bjunk", b""),
        ]
    ),
)
def test_gunzip(body: bytes, expected: bytes) -> None:
    assert gunzip(body) == expected


def test_gunzip_bomb_is_cut_at_max_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sitemaps, "MAX_BYTES", 100_000)
    assert gunzip(_bomb(b"<urlset>", b" ", 16 * 1024 * 1024)) == b"<urlset>" + b" " * 99_992


@pytest.mark.parametrize(
    ("body", "expected"),
    _cases(
        [
            ("gzip", gzip.compress(b"x"), True),
            ("magic-only", b"\x1f\x8b", True),
            ("xml", urlset(A), False),
            ("empty", b"", False),
            ("one-byte", b"\x1f", False),
            ("swapped", b"\x8b\x1f", False),
            ("zlib-stream", zlib.compress(b"x"), False),
        ]
    ),
)
def test_is_gzip(body: bytes, expected: bool) -> None:
    assert is_gzip(body) is expected


# -- Limits on entries -------------------------------------------------------------------

LIMITS = [
    ("under-limit", urlset(A, B), 3, Sitemap([A, B], [], False, None)),
    ("exactly-at-limit", urlset(A, B, C), 3, Sitemap([A, B, C], [], False, None)),
    ("over-limit", urlset(A, B, C), 2, Sitemap([A, B], [], True, None)),
    ("limit-one", index(A, B, C), 1, Sitemap([], [A], True, None)),
    ("limit-zero", urlset(A), 0, Sitemap([], [], True, None)),
    ("limit-zero-empty-urlset", urlset(), 0, Sitemap([], [], False, None)),
    ("negative-limit", urlset(A), -5, Sitemap([], [], True, None)),
    ("duplicates-do-not-count", urlset(A, A, B, A), 2, Sitemap([A, B], [], False, None)),
    (
        "invalid-do-not-count",
        urlset("/x", A, "mailto:x@gov.si", B),
        2,
        Sitemap([A, B], [], False, None),
    ),
    (
        "urls-and-sitemaps-together",
        f"<urlset><url><loc>{A}</loc></url><sitemap><loc>{B}</loc></sitemap><url><loc>{C}</loc></url></urlset>".encode(),
        2,
        Sitemap([A], [B], True, None),
    ),
    ("plain-text", f"{A}\n{B}\n{C}\n".encode(), 2, Sitemap([A, B], [], True, None)),
    ("plain-text-limit-zero", f"{A}\n".encode(), 0, Sitemap([], [], True, None)),
    ("gzipped", gzip.compress(urlset(A, B, C)), 1, Sitemap([A], [], True, None)),
]


@pytest.mark.parametrize(("body", "max_urls", "expected"), _cases(LIMITS))
def test_max_urls(body: bytes, max_urls: int, expected: Sitemap) -> None:
    assert parse_sitemap(body, URL, max_urls=max_urls) == expected


def test_protocol_limit_caps_a_larger_max_urls(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sitemaps, "MAX_URLS", 2)
    assert parse_sitemap(urlset(A, B, C), URL, max_urls=10) == Sitemap([A, B], [], True, None)


def test_protocol_limit_on_a_full_size_sitemap() -> None:
    locs = [f"https://www.gov.si/p/{i}" for i in range(MAX_URLS + 1)]
    got = parse_sitemap(gzip.compress(urlset(*locs)), URL)
    assert got == Sitemap(locs[:MAX_URLS], [], True, None)


def test_stops_reading_at_the_limit() -> None:
    # Everything after the limit is garbage; reading it would report an XML error.
    body = (
        urlset(A, B).removesuffix(b"</urlset>") + b" " * 2 * 1024 * 1024 + b"\0" * 4 * 1024 * 1024
    )
    assert parse_sitemap(body, URL, max_urls=1) == Sitemap([A], [], True, None)


# -- Plain text ----------------------------------------------------------------------------

TEXT = [
    ("lf", f"{A}\n{B}\n".encode(), [A, B]),
    ("crlf-no-final-newline", f"{A}\r\n{B}".encode(), [A, B]),
    ("cr-only", f"{A}\r{B}\r".encode(), [A, B]),
    ("single-line", A.encode(), [A]),
    ("bom", f"\ufeff{A}\n{B}\n".encode(), [A, B]),
    ("blank-lines-and-padding", f"\n\n  {A}  \n\t{B}\t\n\n".encode(), [A, B]),
    ("duplicates", f"{A}\n{B}\n{A}\n".encode(), [A, B]),
    (
        "other-lines-ignored",
        f"# seznam\n{A}\n/relativna\nmailto:info@gov.si\nglej {C}\n{C} (arhiv)\n{B}\n".encode(),
        [A, B],
    ),
    ("utf8-path", "https://www.gov.si/teme/ključ\n".encode(), ["https://www.gov.si/teme/ključ"]),
    ("invalid-utf8-line-skipped", b"https://www.gov.si/\xff\xfe x\n" + A.encode(), [A]),
]


@pytest.mark.parametrize(("body", "urls"), _cases(TEXT))
def test_plain_text(body: bytes, urls: list[str]) -> None:
    assert parse_sitemap(body, URL) == Sitemap(urls, [], False, None)


# -- RSS and Atom feeds -----------------------------------------------------------------------

ATOM = "http://www.w3.org/2005/Atom"
FEEDS = [
    (
        "rss-2.0",
        f'<?xml version="1.0"?><rss version="2.0" xmlns:atom="{ATOM}"><channel><title>x</title>'
        f'<link>https://www.gov.si/</link><atom:link href="{URL}" rel="self"/>'
        f"<item><title>a</title><link>{A}</link><guid>{C}</guid></item>"
        f'<item><link> {B} </link><atom:link href="{C}"/></item>'
        f"<item><title>no link</title></item><item><link>/relative</link></item>"
        f"<item><link>{A}</link></item></channel></rss>".encode(),
        [A, B],
    ),
    (
        "rss-1.0",
        b'<?xml version="1.0"?><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" '
        b'xmlns="http://purl.org/rss/1.0/"><channel><link>https://www.gov.si/</link></channel>'
        + f'<item rdf:about="{A}"><link>{A}</link></item><item><link>{B}</link></item>'.encode()
        + b"</rdf:RDF>",
        [A, B],
    ),
    (
        "atom",
        f'<?xml version="1.0"?><feed xmlns="{ATOM}"><link href="https://www.gov.si/"/>'
        f'<link rel="self" href="{URL}"/>'
        f'<entry><link href="{A}"/></entry>'
        f'<entry><link rel="edit" href="{C}"/><link rel="alternate" href="{B}"/></entry>'
        f'<entry><link rel="enclosure" href="{C}.pdf"/><link href="/relative"/></entry>'
        f"<entry><link>{C}</link></entry></feed>".encode(),
        [A, B],
    ),
    ("rss-empty-channel", b'<rss version="2.0"><channel><title>x</title></channel></rss>', []),
]


@pytest.mark.parametrize(("body", "urls"), _cases(FEEDS))
def test_feeds(body: bytes, urls: list[str]) -> None:
    assert parse_sitemap(body, URL) == Sitemap(urls, [], False, None)


# -- lastmod: when the site says a listed page changed ----------------------------------


def test_lastmod_is_kept_per_listed_url_whichever_comes_first_in_its_entry() -> None:
    body = (
        f'<urlset xmlns="{NS}">'
        f"<url><loc>{A}</loc><lastmod>2026-11-04</lastmod><changefreq>daily</changefreq></url>"
        f"<url><lastmod> 2026-11-05T10:00:00+01:00 </lastmod><loc>{B}</loc></url>"
        f"<url><loc>{C}</loc></url>"  # none
        f"<url><loc>{A}</loc><lastmod>2030-01-01</lastmod></url>"  # listed again: the first
        "<url><lastmod>2026-01-01</lastmod></url>"  # no loc: nothing
        f'<url><loc>https://www.gov.si/d</loc><image:image xmlns:image="x"><lastmod>2026-02-02'
        "</lastmod></image:image></url>"  # another element's lastmod
        "</urlset>"
    ).encode()
    found = parse_sitemap(body, URL)
    assert found.urls == [A, B, C, "https://www.gov.si/d"]
    assert found.lastmod == {A: "2026-11-04", B: "2026-11-05T10:00:00+01:00"}
    # Not part of what a sitemap equals: it says when, not what.
    assert found == Sitemap([A, B, C, "https://www.gov.si/d"], [], False, None)


def test_a_sitemap_indexs_lastmod_is_not_a_pages() -> None:
    body = (
        f'<sitemapindex xmlns="{NS}"><sitemap><loc>{A}.xml</loc><lastmod>2026-11-04</lastmod>'
        "</sitemap></sitemapindex>"
    ).encode()
    found = parse_sitemap(body, URL)
    assert (found.sitemaps, found.lastmod) == ([f"{A}.xml"], {})
