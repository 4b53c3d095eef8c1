"""Which character encoding an HTML page is in, chosen as a browser chooses it.

``decode_html`` follows the HTML Standard's encoding sniffing algorithm: a byte order mark,
the charset of the HTTP Content-Type, the ``<meta>`` prescan (``govsi.web.prescan``), then
a guess; labels are the Encoding Standard's (``iso-8859-1`` and ``ascii`` mean
windows-1252): the crawl records the text visitors read.
"""

from __future__ import annotations

import codecs
import re

import charset_normalizer
from w3lib.encoding import resolve_encoding

from govsi.web.prescan import encoding_for_label, prescan

__all__ = ["declared_encoding", "decode_html"]


# The Python codec that decodes each encoding of the Encoding Standard (the only ones
# browsers decode), by its name there; replacement and x-user-defined are decoded apart.
# Anything else a guess may name (utf-7, base64, unicode-escape, cp852...) is refused:
# some are not text encodings at all.
_WHATWG_CODECS = {
    "utf-8": "utf-8",
    "ibm866": "cp866",
    **{f"iso-8859-{n}": f"iso8859-{n}" for n in (2, 3, 4, 5, 6, 7, 8, 10, 13, 14, 15, 16)},
    # Visual and logical Hebrew differ in layout, not in bytes.
    "iso-8859-8-i": "iso8859-8",
    "koi8-r": "koi8-r",
    "koi8-u": "koi8-u",
    "macintosh": "mac-roman",
    "windows-874": "cp874",
    **{f"windows-{n}": f"cp{n}" for n in range(1250, 1259)},
    "x-mac-cyrillic": "mac-cyrillic",
    # The Encoding Standard decodes GBK with its gb18030 decoder.
    "gbk": "gb18030",
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
_NAME_OF_CODEC = {
    codecs.lookup(codec).name: name
    for name, codec in _WHATWG_CODECS.items()
    if name not in ("iso-8859-8-i", "gbk")
}
# The Encoding Standard's x-user-defined: bytes 0x80-0xFF are U+F780-U+F7FF.
_X_USER_DEFINED = {byte: 0xF700 + byte for byte in range(0x80, 0x100)}
_BOMS = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_BE, "utf-16be"),
    (codecs.BOM_UTF16_LE, "utf-16le"),
)

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

# Fetch's and MIME Sniffing's grammar for a Content-Type value.
_HTTP_WHITESPACE = "\t\n\r "
_TOKEN = re.compile(r"[-!#$%&'*+.^_`|~0-9A-Za-z]+")
_QUOTED_STRING_CHARS = re.compile(r"[\t\x20-\x7e\x80-\xff]*")
_HTTP_WHITESPACE_RUN = re.compile(r"[\t\n\r ]*")
_UNQUOTED = re.compile(r'[^",]*')
_PARAMETER_NAME = re.compile(r"[^;=]*")
_NOT_SEMICOLON = re.compile(r"[^;]*")
_QUOTED_STRING_RUN = re.compile(r'[^"\\]*')


def _label_name(label: str) -> str | None:
    """The encoding name of a detector's codec name (cp1250, iso8859_2...), else None."""
    try:
        return _NAME_OF_CODEC.get(resolve_encoding(label) or "")
    except (LookupError, ValueError, TypeError):
        return None


def _bom_encoding(body: bytes) -> tuple[str, int] | None:
    for bom, name in _BOMS:
        if body.startswith(bom):
            return name, len(bom)
    return None


def _decode(body: bytes, name: str) -> tuple[str, str]:
    # The Encoding Standard's "decode": a BOM is never text, whatever chose the encoding
    # (and when there is one, it chose it).
    bom = _bom_encoding(body)
    data = body[bom[1] :] if bom else body
    if name == "replacement":
        # ISO-2022-KR and its kin, whose escapes can hide markup: the Encoding Standard
        # decodes all of it as one U+FFFD, and so does a browser.
        text = "\ufffd" if data else ""
    elif name == "x-user-defined":
        text = data.decode("latin-1").translate(_X_USER_DEFINED)
    else:
        text = data.decode(_WHATWG_CODECS[name], "replace")
    # The HTML parser turns NUL characters into U+FFFD (or drops them) anyway, and
    # PostgreSQL text columns cannot hold them at all.
    if "\x00" in text:
        text = text.replace("\x00", "\ufffd")
    return text, name


def _skip(pattern: re.Pattern[str], text: str, position: int) -> int:
    run = pattern.match(text, position)
    assert run is not None  # each of these patterns matches the empty string too
    return run.end()


def _quoted_string(value: str, position: int) -> tuple[str, int]:
    """Fetch's "collect an HTTP quoted string" (value extracted) from the quote at
    ``position``: the string and the position after it."""
    parts = []
    position += 1
    while True:
        end = _skip(_QUOTED_STRING_RUN, value, position)
        parts.append(value[position:end])
        position = end
        if position >= len(value):
            break
        position += 1
        if value[position - 1] == '"':
            break
        # A backslash: the next character is taken as it is; one at the end is itself.
        if position >= len(value):
            parts.append("\\")
            break
        parts.append(value[position])
        position += 1
    return "".join(parts), position


def _charset_parameter(mime_type: str) -> tuple[str, str | None] | None:
    """MIME Sniffing's "parse a MIME type", reduced to what the encoding needs: (essence,
    its charset parameter or None), or None when ``mime_type`` is not one."""
    text = mime_type.strip(_HTTP_WHITESPACE)
    type_, slash, rest = text.partition("/")
    subtype, _, _ = rest.partition(";")
    subtype = subtype.rstrip(_HTTP_WHITESPACE)
    if not slash or not _TOKEN.fullmatch(type_) or not _TOKEN.fullmatch(subtype):
        return None
    position = len(type_) + 1 + rest.find(";") if ";" in rest else len(text)
    while position < len(text):
        position += 1
        position = _skip(_HTTP_WHITESPACE_RUN, text, position)
        name_end = _skip(_PARAMETER_NAME, text, position)
        name, position = text[position:name_end].lower(), name_end
        if position < len(text):
            if text[position] == ";":
                continue
            position += 1
        if position >= len(text):
            break
        if text[position] == '"':
            value, position = _quoted_string(text, position)
            position = _skip(_NOT_SEMICOLON, text, position)
        else:
            end = _skip(_NOT_SEMICOLON, text, position)
            value, position = text[position:end].rstrip(_HTTP_WHITESPACE), end
            if not value:
                continue
        # Only the first charset counts; a malformed one is passed over, not fatal.
        if name == "charset" and _QUOTED_STRING_CHARS.fullmatch(value):
            return f"{type_}/{subtype}".lower(), value
    return f"{type_}/{subtype}".lower(), None


def _transport_encoding(content_type: str | None) -> str | None:
    """The encoding a Content-Type header names: Fetch's "extract a MIME type" (a value
    may hold several types, split at commas outside quotes), then its charset's label."""
    if not content_type:
        return None
    essence: str | None = None
    charset: str | None = None
    parts: list[str] = []
    position = 0
    while True:
        end = _skip(_UNQUOTED, content_type, position)
        parts.append(content_type[position:end])
        position = end
        if position < len(content_type) and content_type[position] == '"':
            end = _quoted_string(content_type, position)[1]
            parts.append(content_type[position:end])
            position = end
            if position < len(content_type):
                continue
        parsed = _charset_parameter("".join(parts).strip(" \t"))
        parts.clear()
        if parsed is not None and parsed[0] != "*/*":
            # A later type of another essence resets the charset; one of the same
            # essence without a charset keeps the earlier type's.
            if parsed[0] != essence:
                essence, charset = parsed
            elif parsed[1] is not None:
                charset = parsed[1]
        if position >= len(content_type):
            break
        position += 1  # past the comma
    return encoding_for_label(charset) if charset is not None else None


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


def declared_encoding(body: bytes, header_content_type: str | None) -> str | None:
    """The encoding an HTML page declares, by the HTML Standard's sniffing algorithm short
    of a guess: a byte order mark; else the charset of the HTTP Content-Type; else the
    ``<meta>`` prescan (``prescan``). None when none names an encoding."""
    bom = _bom_encoding(body)
    if bom is not None:
        return bom[0]
    return _transport_encoding(header_content_type) or prescan(body)


def decode_html(body: bytes, header_content_type: str | None) -> tuple[str, str]:
    """Decode an HTML body; returns ``(text, encoding name)``, the name the Encoding
    Standard's, lowercased.

    The encoding is ``declared_encoding``'s; else a guess (UTF-8 if the bytes are valid
    UTF-8, else charset-normalizer's, checked for Slovenian); else UTF-8. Unknown labels
    are passed over, never fatal. Bytes invalid in the encoding become U+FFFD.
    """
    return _decode(body, declared_encoding(body, header_content_type) or _detect(body))
