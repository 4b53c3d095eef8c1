"""What a response is and what it points to: decoding, link extraction, classification.

Pure functions over plain data (bytes and strings in, dataclasses and lists out), so
they are tested without Scrapy and called for every page. Each decision follows what a
browser does, since the crawl should record the web as its visitors see it:

- ``decode_html`` picks the character encoding as the HTML Standard does (BOM, HTTP
  charset, ``<meta>`` prescan, then a guess), with the Encoding Standard's label
  mapping (``iso-8859-1`` and ``ascii`` mean windows-1252).
- ``extract_links`` resolves ``<a>``/``<area>`` hrefs, ``onclick`` navigations and
  ``<img src>`` against the document base URL (``<base href>``) exactly as a browser
  does, through ``govsi.urls.resolve``. It does not canonicalize or filter by scope;
  the caller does.
- ``classify`` trusts the Content-Type and falls back to the path's extension and to
  content sniffing only when the server sent no useful type.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass, field
from urllib.parse import unquote, urlsplit

import ada_url
import charset_normalizer
from lxml import etree
from w3lib.encoding import (
    html_body_declared_encoding,
    http_content_type_encoding,
    read_bom,
    resolve_encoding,
    to_unicode,
)

from govsi.urls import resolve

__all__ = [
    "ExtractedLinks",
    "classify",
    "decode_html",
    "document_extension",
    "extract_links",
    "filename_of",
    "header_says_nofollow",
    "onclick_targets",
    "parse_html",
    "sniff_html",
]

# -- decoding ---------------------------------------------------------------------------

# The encodings of the WHATWG Encoding Standard (the only ones browsers decode), by
# their standard name, with the Python codec that implements each. Anything else a
# label or a guess may name (utf-7, base64, unicode-escape, cp852...) is refused:
# some are not text encodings at all, and a label a browser would not honor must not
# change how we read the page.
_WHATWG_CODECS = {
    "utf-8": "utf-8",
    "ibm866": "cp866",
    **{f"iso-8859-{n}": f"iso8859-{n}" for n in (2, 3, 4, 5, 6, 7, 8, 10, 13, 14, 15, 16)},
    "koi8-r": "koi8-r",
    "koi8-u": "koi8-u",
    "macintosh": "mac-roman",
    "windows-874": "cp874",
    **{f"windows-{n}": f"cp{n}" for n in range(1250, 1259)},
    "x-mac-cyrillic": "mac-cyrillic",
    "gb18030": "gb18030",
    "big5": "big5hkscs",
    "euc-jp": "euc_jp",
    "iso-2022-jp": "iso2022_jp",
    "shift_jis": "cp932",
    "euc-kr": "cp949",
    "utf-16be": "utf-16-be",
    "utf-16le": "utf-16-le",
}
# Keyed by codecs.lookup(...).name, which is what w3lib's resolve_encoding returns.
_NAME_OF_CODEC = {codecs.lookup(codec).name: name for name, codec in _WHATWG_CODECS.items()}
# The label "utf-16" means UTF-16LE in the Encoding Standard, while Python's "utf-16"
# codec would guess the byte order; a BOM, when there is one, is handled before this.
_NAME_OF_CODEC[codecs.lookup("utf-16").name] = "utf-16le"

# A <meta> can only be read because the bytes are ASCII-compatible, so a UTF-16
# declaration there is false; the HTML Standard reads such a page as UTF-8.
_META_OVERRIDES = {"utf-16be": "utf-8", "utf-16le": "utf-8"}

# Detection looks at a prefix: enough text for a confident guess, bounded cost on
# large pages.
_DETECT_BYTES = 64 * 1024

# For Slovenian text the detector often cannot tell windows-1250 from ISO-8859-2 and
# sometimes answers with another Latin code page (Baltic, Nordic). They agree on most
# letters, including č, and differ exactly in where they put š ž Š Ž. So the guess is
# checked against the two Central European code pages: whichever decoding yields the
# most of those four letters wins, the detector's own guess on a tie. Pages in other
# languages contain none of them in any of the three decodings and keep the guess
# (windows-1252 has š and ž at the same bytes as windows-1250, so it is never "fixed").
_CENTRAL_EUROPEAN = ("windows-1250", "iso-8859-2")
_SZ_LETTERS = re.compile("[šžŠŽ]")
_SINGLE_BYTE = frozenset(
    name
    for name, codec in _WHATWG_CODECS.items()
    if codecs.lookup(codec).name.startswith(("iso8859", "cp12", "cp87", "mac-", "koi8"))
)


def _whatwg_name(codec: str | None) -> str | None:
    return _NAME_OF_CODEC.get(codec) if codec else None


def _label_name(label: str) -> str | None:
    """The WHATWG encoding name for a label or a detector's codec name, else None."""
    try:
        return _whatwg_name(resolve_encoding(label))
    except (LookupError, ValueError, TypeError):
        return None


def _decode(data: bytes, name: str) -> tuple[str, str]:
    text = to_unicode(data, _WHATWG_CODECS[name])
    # The HTML parser turns NUL characters into U+FFFD (or drops them) anyway, and
    # PostgreSQL text columns cannot hold them at all.
    if "\x00" in text:
        text = text.replace("\x00", "\ufffd")
    return text, name


def _is_utf8(body: bytes) -> bool:
    try:
        body.decode("utf-8")
    except UnicodeDecodeError as error:
        # A download cut short (size limit) can end inside a character; the rest of
        # the body being valid UTF-8 is what matters.
        return error.reason == "unexpected end of data" and error.start >= len(body) - 3
    return True


def _detect(body: bytes) -> str:
    # Valid UTF-8 with non-ASCII bytes is practically never anything else, and
    # checking it is far cheaper and surer than statistical detection. Pure ASCII
    # reads the same in every candidate, so it needs no guess either.
    if body.isascii() or _is_utf8(body):
        return "utf-8"
    sample = body[:_DETECT_BYTES]
    name = None
    for match in charset_normalizer.from_bytes(sample, preemptive_behaviour=False):
        name = _label_name(match.encoding)
        # Browsers never guess UTF-16 (without a BOM, markup in it would be full of
        # NULs), while the detector readily proposes it for short 8-bit bodies.
        if name is not None and not name.startswith("utf-16"):
            break
        name = None
    if name is None:
        return "utf-8"
    if name in _SINGLE_BYTE:
        return _central_european_check(sample, name)
    return name


def _central_european_check(sample: bytes, guess: str) -> str:
    def sz_letters(name: str) -> int:
        return len(_SZ_LETTERS.findall(sample.decode(_WHATWG_CODECS[name], "replace")))

    best, best_count = guess, sz_letters(guess)
    for name in _CENTRAL_EUROPEAN:
        if name != guess and (count := sz_letters(name)) > best_count:
            best, best_count = name, count
    return best


def decode_html(body: bytes, header_content_type: str | None) -> tuple[str, str]:
    """Decode an HTML body; returns ``(text, WHATWG encoding name)``.

    The encoding is the first of: a byte order mark; the charset of the HTTP
    Content-Type; a ``<meta charset>`` / ``<meta http-equiv=Content-Type>`` (or XML
    declaration) in the first 4 KiB; a guess (UTF-8 if the bytes are valid UTF-8,
    else charset-normalizer); UTF-8. Unknown labels are skipped, never fatal. Bytes
    invalid in the chosen encoding become U+FFFD.
    """
    # A BOM overrides the HTTP header, as in browsers (HTML Standard, "decode"): a
    # server's default charset is often wrong, a BOM at the start of a file is not.
    bom_codec, bom = read_bom(body)
    if bom_codec is not None and bom is not None:
        name = _whatwg_name(codecs.lookup(bom_codec).name)
        if name is not None:
            return _decode(body[len(bom) :], name)

    name = _whatwg_name(http_content_type_encoding(header_content_type))
    if name is not None:
        return _decode(body, name)

    name = _whatwg_name(html_body_declared_encoding(body))
    if name is not None:
        return _decode(body, _META_OVERRIDES.get(name, name))

    return _decode(body, _detect(body))


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


# Where an onclick navigation could be. Most pages have none, and then walking only
# the a/area/img elements is several times cheaper than visiting every element (an
# XPath union would be slower still: libxml2 merges node sets in quadratic time).
_ONCLICK_ATTRIBUTE = re.compile(r"onclick\s*=", re.IGNORECASE)
# The HTML Standard uses the first <base> that has an href, wherever it is.
_BASE_HREF = etree.XPath("(//base[@href])[1]/@href")
_META = etree.XPath("//meta[@name and @content]")

_ROBOTS_META_NAMES = frozenset({"robots", "govsi-crawler"})
_ROBOTS_TOKEN_SPLIT = re.compile(r"[\s,]+")

# A navigation in an onclick handler: assigning a string literal to location (or
# location.href) of the window, or passing one to location.assign()/replace().
# Only a literal is followed: anything computed ('a' + id, a variable) would be a
# guess. The lookbehind keeps other objects' properties out (this.location,
# obj.location); the conditional at the end requires an assignment to end right after
# the literal (so 'a' + id is refused) and a call to close right after it.
_JS_STRING = r"""
    (?:'(?P<sq>[^'\\\r\n]*(?:\\.[^'\\\r\n]*)*)'
      |"(?P<dq>[^"\\\r\n]*(?:\\.[^"\\\r\n]*)*)"
      |`(?P<bq>(?:[^`\\$]|\\.|\$(?!\{))*)`)
"""
_ONCLICK_NAVIGATION = re.compile(
    r"""
    (?<![\w$.])
    (?:(?:window|document|top|self|parent)\s*\.\s*)*
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


def onclick_targets(script: str) -> list[str]:
    """The literal URLs an onclick handler navigates to, in order, unresolved."""
    targets = []
    for match in _ONCLICK_NAVIGATION.finditer(script):
        literal = match.group("sq")
        if literal is None:
            literal = match.group("dq")
        if literal is None:
            literal = match.group("bq")
        if "\\" in literal:
            literal = _JS_ESCAPE.sub(_js_unescape, literal)
        targets.append(literal)
    return targets


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


def extract_links(html: str, page_url: str, root: etree._Element | None = None) -> ExtractedLinks:
    """Links and images of an HTML document, resolved as a browser resolves them.

    ``root`` is the document already parsed by ``parse_html``, when the caller has it (it
    is left as it is). Never raises on malformed input: what the parser can recover is
    used, and a document it cannot parse has no links.
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

    def absolute(reference: str) -> str | None:
        if reference in resolved:
            return resolved[reference]
        url = resolved[reference] = resolve(base_url, reference)
        return url

    with_onclick = "location" in html and _ONCLICK_ATTRIBUTE.search(html) is not None
    elements = root.iter(etree.Element) if with_onclick else root.iter("a", "area", "img")
    links: dict[str, None] = {}
    images: dict[str, None] = {}
    for element in elements:
        tag = element.tag
        if tag == "img":
            src = element.get("src")
            # Browsers fetch nothing for an empty src; data: URIs are not fetched.
            if src and not src.isspace() and (url := absolute(src)) is not None:
                images.setdefault(url)
        elif tag == "a" or tag == "area":
            href = element.get("href")
            if href is not None and (url := absolute(href)) is not None:
                links.setdefault(url)
        if with_onclick:
            onclick = element.get("onclick")
            if onclick and "location" in onclick:
                for target in onclick_targets(onclick):
                    if (url := absolute(target)) is not None:
                        links.setdefault(url)

    return ExtractedLinks(
        links=list(links),
        images=list(images),
        base_url=base_url,
        nofollow=_is_nofollow(root),
    )


# -- classification -----------------------------------------------------------------------

_TYPE_CODES = {
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
_EXTENSION_CODES = {"pdf": "PDF", "doc": "DOC", "docx": "DOCX", "ppt": "PPT", "pptx": "PPTX"}

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


def document_extension(url: str) -> str | None:
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


def classify(content_type: str | None, url: str, body_start: bytes = b"") -> str | None:
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
