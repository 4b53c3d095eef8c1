"""Which character encoding an HTML page is in, chosen as a browser chooses it.

``decode_html`` follows the HTML Standard (BOM, HTTP charset, ``<meta>`` prescan, then a
guess) with the Encoding Standard's label mapping (``iso-8859-1`` and ``ascii`` mean
windows-1252): the crawl records the text visitors read.
"""

from __future__ import annotations

import codecs
import re

import charset_normalizer
from w3lib.encoding import (
    html_body_declared_encoding,
    http_content_type_encoding,
    read_bom,
    resolve_encoding,
    to_unicode,
)

__all__ = ["decode_html"]


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
