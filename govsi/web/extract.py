"""What an HTML page points to: links, ``onclick`` navigations, images and feeds.

Pure functions over plain data (strings in, dataclasses and lists out), so they are tested
without Scrapy and called for every page. ``extract_links`` resolves ``<a>``/``<area>``
hrefs, ``onclick`` navigations and ``<img src>`` against the document base URL
(``<base href>``) exactly as a browser does, through ``govsi.web.urls.resolve``. It does not
canonicalize or filter by scope; the caller does. Decoding is ``govsi.web.encoding``'s job,
telling HTML from documents ``govsi.web.contenttypes``'.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from lxml import etree

from govsi.web.feeds import feed_links
from govsi.web.urls import resolve

__all__ = [
    "ExtractedLinks",
    "cut_markup",
    "extract_links",
    "header_says_nofollow",
    "held_elements",
    "onclick_targets",
    "outermost",
    "parse_html",
    "refresh_target",
]

# -- links ------------------------------------------------------------------------------


@dataclass(slots=True)
class ExtractedLinks:
    """What a page points to, as absolute URLs (not canonicalized, not scope-checked)."""

    # <a href>, <area href> and onclick navigations, document order, first occurrence.
    links: list[str] = field(default_factory=list)
    # <img src>, document order, first occurrence; data: URIs and empty src left out.
    images: list[str] = field(default_factory=list)
    # The document base URL the links were resolved against.
    base_url: str = ""
    # <meta name="robots"> (or name="govsi-crawler") says nofollow or none.
    nofollow: bool = False
    # Distinct references beyond ``max_links`` (links and images counted apart), not
    # taken (nor resolved, unless the other kind had them).
    dropped: int = 0
    # Set by ``govsi.page.links.canonical_links``: the links are canonical, in scope
    # and not too long, the images canonical; ``too_long`` links were left out.
    canonical: bool = False
    too_long: int = 0
    # RSS and Atom feeds the page declares (``govsi.web.feeds.feed_links``), document order.
    feeds: list[str] = field(default_factory=list)


# Where an onclick navigation could be. Most pages have none, and then walking only
# the a/area/img elements is several times cheaper than visiting every element (an
# XPath union would be slower still: libxml2 merges node sets in quadratic time).
_ONCLICK_ATTRIBUTE = re.compile(r"onclick\s*=", re.IGNORECASE)
# The HTML Standard uses the first <base> that has an href, wherever it is.
_BASE_HREF = etree.XPath("(//base[@href])[1]/@href")
_META = etree.XPath("//meta[@name and @content]")
_HTTP_EQUIV = etree.XPath("//meta[@http-equiv and @content]")


def refresh_target(content: str) -> str | None:
    """The URL of a ``<meta http-equiv="refresh" content=...>``, unresolved, as the HTML
    Standard's declarative refresh reads it ("5; url='/x'", "0;URL=/x", "3, /x"); None
    when it only reloads the page."""
    s = content.strip()
    i = 0
    while i < len(s) and (s[i] in "0123456789."):
        i += 1
    if i == 0:
        return None
    rest = s[i:].lstrip()
    if rest[:1] in (";", ","):
        rest = rest[1:].lstrip()
    if rest[:3].lower() == "url":
        after = rest[3:].lstrip()
        if after.startswith("="):
            rest = after[1:].lstrip()
    if rest[:1] in ("'", '"'):
        end = rest.find(rest[0], 1)
        rest = rest[1:end] if end != -1 else rest[1:]
    return rest.strip() or None


def _refresh_targets(root: etree._Element) -> list[str]:
    return [
        target
        for meta in _HTTP_EQUIV(root)
        if str(meta.get("http-equiv")).strip().lower() == "refresh"
        and (target := refresh_target(str(meta.get("content")))) is not None
    ]


_ROBOTS_META_NAMES = frozenset({"robots", "govsi-crawler"})
_ROBOTS_TOKEN_SPLIT = re.compile(r"[\s,]+")

# A navigation in an onclick handler: assigning a string literal to location (or
# location.href) of the window, or passing one to location.assign()/replace().
# Only a literal is followed: anything computed ('a' + id, a variable) would be a
# guess. What stands before ``location`` (window./document./top./... or nothing, never
# this.location or obj.location) is checked by ``_window_location`` scanning back: a
# regex for that prefix would be tried again from every word of a long
# ``window . window . ...`` chain, quadratic in its length. The conditional at the end
# requires an assignment to end right after the literal (so 'a' + id is refused) and a
# call to close right after it. The literal's loops are possessive: nothing they give
# back could end it, and an unterminated one then fails without unwinding.
_JS_STRING = r"""
    (?:'(?P<sq>[^'\\\r\n]*+(?:\\.[^'\\\r\n]*+)*+)'
      |"(?P<dq>[^"\\\r\n]*+(?:\\.[^"\\\r\n]*+)*+)"
      |`(?P<bq>(?:[^`\\$]|\\.|\$(?!\{))*+)`)
"""
_ONCLICK_NAVIGATION = re.compile(
    r"""
    location\s*
    (?:(?P<assign>(?:\.\s*href\s*)?=(?!=))
      |\.\s*(?:assign|replace)\s*\()
    \s*"""
    + _JS_STRING
    + r"""(?(assign)(?=[ \t]*(?:[;}),\r\n]|$))|\s*\))""",
    re.VERBOSE | re.DOTALL,
)
_JS_ESCAPE = re.compile(r"\\(u\{[0-9a-fA-F]{1,6}\}|u[0-9a-fA-F]{4}|x[0-9a-fA-F]{2}|\r\n|.)", re.S)
_JS_SIMPLE_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "v": "\v", "0": "\0"}


def _js_unescape(match: re.Match[str]) -> str:
    seq = match.group(1)
    if seq[0] in "ux" and len(seq) > 1:
        code = int(seq.strip("ux{}"), 16)
        return chr(code) if code <= 0x10FFFF else "\ufffd"
    if seq in ("\n", "\r", "\r\n", "\u2028", "\u2029"):
        return ""  # a line continuation
    return _JS_SIMPLE_ESCAPES.get(seq, seq)


_WINDOW_OBJECTS = ("window", "document", "top", "self", "parent")


def _is_word(ch: str) -> bool:
    return ch.isalnum() or ch in "_$"


def _window_location(script: str, start: int) -> bool:
    """Whether the ``location`` at ``start`` is the window's: preceded by nothing but a
    chain of ``window.``/``document.``/``top.``/``self.``/``parent.``, itself not part of a
    longer name or member expression. Scans back over that chain only, and chains before
    two matches never overlap (a match's ``location`` ends the chain before it)."""
    i = start
    while True:
        j = i
        while j > 0 and script[j - 1].isspace():
            j -= 1
        if j == 0 or script[j - 1] != ".":
            return i == 0 or not (_is_word(script[i - 1]) or script[i - 1] == ".")
        j -= 1
        while j > 0 and script[j - 1].isspace():
            j -= 1
        name = next((n for n in _WINDOW_OBJECTS if script.endswith(n, 0, j)), None)
        if name is None:
            return False  # this.location, obj.location
        i = j - len(name)


def onclick_targets(script: str) -> list[str]:
    """The literal URLs an onclick handler navigates to, in order, unresolved. Linear in
    the length of ``script``."""
    targets = []
    for match in _ONCLICK_NAVIGATION.finditer(script):
        if not _window_location(script, match.start()):
            continue
        literal = match.group("sq")
        if literal is None:
            literal = match.group("dq")
        if literal is None:
            literal = match.group("bq")
        if "\\" in literal:
            literal = _JS_ESCAPE.sub(_js_unescape, literal)
        targets.append(literal)
    return targets


def cut_markup(html: str, max_tags: int) -> tuple[str, int]:
    """``html`` before its (``max_tags`` + 1)-th ``<``, and how many ``<`` were cut off
    (0: nothing was). The parsed tree of a page costs hundreds of bytes per element, so a
    page of bare tags takes many times its size (bench/README, bench.worst_page --worker).
    Linear: one count, and a scan only when over. 0 = no cut."""
    if max_tags <= 0:
        return html, 0
    total = html.count("<")
    if total <= max_tags:
        return html, 0
    at = -1
    for _ in range(max_tags + 1):
        at = html.find("<", at + 1)
    return html[:at], total - max_tags


def parse_html(html: str) -> etree._Element | None:
    if not html or html.isspace():
        return None
    # Handing libxml2 UTF-8 bytes with the encoding fixed makes it ignore any <meta
    # charset> in the already decoded text; NULs would end its input early, and lone
    # surrogates (possible in any str) cannot be encoded.
    data = html.replace("\x00", "").encode("utf-8", "replace")
    # huge_tree lifts libxml2's 10 MB text-node limit, past which it would stop parsing
    # and silently lose the rest of the page; download size is bounded elsewhere.
    parser = etree.HTMLParser(recover=True, encoding="utf-8", huge_tree=True, no_network=True)
    try:
        return etree.fromstring(data, parser)
    except (etree.LxmlError, ValueError):
        return None


def held_elements(root: etree._Element) -> list[etree._Element]:
    """The elements of ``root``'s tree that have children, to be held while the caller
    walks the tree in Python.

    When lxml drops an element's proxy it walks up to the first ancestor that still has
    one (or to the document): in a loop that lets each element go as it moves on, that is
    a walk to the root per element, up to libxml2's 2047 levels (links under 2000 nested
    divs cost 8 x as much). With every parent held the walk ends at the parent, and the
    list lets go of its last element first, children before their parents. Leaves are
    not held: on a flat page that would cost more than it saves."""
    return [element for element in root.iter(etree.Element) if len(element)]


def outermost(root: etree._Element, tags: tuple[str, ...]) -> Iterator[etree._Element]:
    """The elements of ``tags`` in ``root`` (itself included) that no other of them
    encloses, in document order. Each subtree is walked once and no element's ancestors
    are looked up: either would be quadratic on a chain of them nested 2000 deep."""
    inner: set[etree._Element] = set()
    for element in root.iter(*tags):
        if element not in inner:
            inner.update(element.iter(*tags))
            yield element


def _is_nofollow(root: etree._Element) -> bool:
    for meta in _META(root):
        if meta.get("name", "").strip().lower() in _ROBOTS_META_NAMES:
            tokens = _ROBOTS_TOKEN_SPLIT.split(meta.get("content", "").lower())
            if "nofollow" in tokens or "none" in tokens:
                return True
    return False


# X-Robots-Tag rules that carry a value after a colon, so that "rule: value" is not read
# as "crawler: rules".
_VALUED_RULES = frozenset(
    {"unavailable_after", "max-snippet", "max-image-preview", "max-video-preview"}
)


def header_says_nofollow(values: list[str], token: str) -> bool:
    """Whether X-Robots-Tag header values forbid following links, for everyone or for
    ``token`` by name ("nofollow", "none", "govsi-crawler: nofollow"; not "otherbot: none")."""
    for value in values:
        agent, colon, rules = value.partition(":")
        agent = agent.strip().lower()
        if colon and agent and agent not in _VALUED_RULES and not _ROBOTS_TOKEN_SPLIT.search(agent):
            if agent != token.lower():
                continue
            value = rules
        if {"nofollow", "none"} & set(_ROBOTS_TOKEN_SPLIT.split(value.lower())):
            return True
    return False


def extract_links(
    html: str, page_url: str, root: etree._Element | None = None, max_links: int = 0
) -> ExtractedLinks:
    """Links and images of an HTML document, resolved as a browser resolves them.

    ``root`` is the document already parsed by ``parse_html``, when the caller has it (it
    is left as it is). Never raises on malformed input: what the parser can recover is
    used, and a document it cannot parse has no links. A ``<meta http-equiv="refresh">``
    target is a link like any other. With ``max_links``, at most that many links and as
    many images are kept (document order); the rest are counted, not resolved.
    """
    if root is None:
        root = parse_html(html)
    if root is None:
        return ExtractedLinks(base_url=page_url)

    base_url = page_url
    base_hrefs = _BASE_HREF(root)
    if base_hrefs:
        # As in browsers, the base is itself resolved against the page URL, and one
        # that does not resolve (or is not http(s)) leaves the page URL as the base.
        base_url = resolve(page_url, str(base_hrefs[0])) or page_url

    # Pages repeat the same href (menus, icons) many times, and the base is fixed for
    # the page, so each distinct reference is resolved once.
    resolved: dict[str, str | None] = {}
    links: dict[str, None] = {}
    images: dict[str, None] = {}
    over_links: set[str] = set()
    over_images: set[str] = set()

    def absolute(reference: str, into: dict[str, None]) -> str | None:
        if reference in resolved:
            url = resolved[reference]
            # Resolved for the other kind (an image also linked to): the cap still holds.
            if url is None or url in into or not max_links or len(into) < max_links:
                return url
        elif not max_links or len(into) < max_links:
            url = resolved[reference] = resolve(base_url, reference)
            return url
        (over_images if into is images else over_links).add(reference)
        return None

    held = held_elements(root)  # noqa: F841 (see held_elements)
    with_onclick = "location" in html and _ONCLICK_ATTRIBUTE.search(html) is not None
    elements = root.iter(etree.Element) if with_onclick else root.iter("a", "area", "img")
    for target in _refresh_targets(root):
        if (url := absolute(target, links)) is not None:
            links.setdefault(url)
    for element in elements:
        tag = element.tag
        if tag == "img":
            src = element.get("src")
            # Browsers fetch nothing for an empty src; data: URIs are not fetched.
            if src and not src.isspace() and (url := absolute(src, images)) is not None:
                images.setdefault(url)
        elif tag == "a" or tag == "area":
            href = element.get("href")
            if href is not None and (url := absolute(href, links)) is not None:
                links.setdefault(url)
        if with_onclick:
            onclick = element.get("onclick")
            if onclick and "location" in onclick:
                for target in onclick_targets(onclick):
                    if (url := absolute(target, links)) is not None:
                        links.setdefault(url)

    return ExtractedLinks(
        links=list(links),
        images=list(images),
        base_url=base_url,
        nofollow=_is_nofollow(root),
        dropped=len(over_links) + len(over_images),
        feeds=feed_links(root, base_url),
    )
