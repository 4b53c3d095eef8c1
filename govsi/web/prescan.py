"""The character encoding an HTML page's bytes declare, read as the HTML Standard reads them.

``prescan`` is the HTML Standard's "prescan a byte stream to determine its encoding" (its
``<meta>`` scan, then "get an XML encoding"); ``encoding_for_label`` is the Encoding
Standard's "get an encoding". Encodings are named by the Encoding Standard, lowercased.
Hand-written: html5lib's EncodingParser (private API, no release since 2020) gets 70 of the
82 cases of html5lib-tests' encoding suite, 77 over 64 KiB; only its whole parser gets all.
"""

from __future__ import annotations

import re

__all__ = ["ENCODINGS", "PRESCAN_BYTES", "encoding_for_label", "prescan"]

# The Standard encourages a prescan of the first 1024 bytes, and its parser still obeys a
# <meta> it meets later while the encoding is a guess ("change the encoding": browsers
# reparse). Both read the same declarations and the first valid one wins, so one scan of
# the first 64 KiB answers for both (html5lib-tests counts a <meta> after 8 KiB of comment).
# The bound is the cost's; a <meta> beyond it is ignored. Past 1024 bytes this scan also
# sees a <meta> in the text of a <script> or <title>, which the parser would not.
PRESCAN_BYTES = 64 * 1024

# The Encoding Standard's labels (encodings.json of whatwg/encoding, 2026-05-21), by the
# name of the encoding they mean.
_LABELS = {
    "utf-8": "unicode-1-1-utf-8 unicode11utf8 unicode20utf8 utf-8 utf8 x-unicode20utf8",
    "ibm866": "866 cp866 csibm866 ibm866",
    "iso-8859-2": "csisolatin2 iso-8859-2 iso-ir-101 iso8859-2 iso88592 iso_8859-2 "
    "iso_8859-2:1987 l2 latin2",
    "iso-8859-3": "csisolatin3 iso-8859-3 iso-ir-109 iso8859-3 iso88593 iso_8859-3 "
    "iso_8859-3:1988 l3 latin3",
    "iso-8859-4": "csisolatin4 iso-8859-4 iso-ir-110 iso8859-4 iso88594 iso_8859-4 "
    "iso_8859-4:1988 l4 latin4",
    "iso-8859-5": "csisolatincyrillic cyrillic iso-8859-5 iso-ir-144 iso8859-5 iso88595 "
    "iso_8859-5 iso_8859-5:1988",
    "iso-8859-6": "arabic asmo-708 csiso88596e csiso88596i csisolatinarabic ecma-114 "
    "iso-8859-6 iso-8859-6-e iso-8859-6-i iso-ir-127 iso8859-6 iso88596 iso_8859-6 "
    "iso_8859-6:1987",
    "iso-8859-7": "csisolatingreek ecma-118 elot_928 greek greek8 iso-8859-7 iso-ir-126 "
    "iso8859-7 iso88597 iso_8859-7 iso_8859-7:1987 sun_eu_greek",
    "iso-8859-8": "csiso88598e csisolatinhebrew hebrew iso-8859-8 iso-8859-8-e iso-ir-138 "
    "iso8859-8 iso88598 iso_8859-8 iso_8859-8:1988 visual",
    "iso-8859-8-i": "csiso88598i iso-8859-8-i logical",
    "iso-8859-10": "csisolatin6 iso-8859-10 iso-ir-157 iso8859-10 iso885910 l6 latin6",
    "iso-8859-13": "iso-8859-13 iso8859-13 iso885913",
    "iso-8859-14": "iso-8859-14 iso8859-14 iso885914",
    "iso-8859-15": "csisolatin9 iso-8859-15 iso8859-15 iso885915 iso_8859-15 l9",
    "iso-8859-16": "iso-8859-16",
    "koi8-r": "cskoi8r koi koi8 koi8-r koi8_r",
    "koi8-u": "koi8-ru koi8-u",
    "macintosh": "csmacintosh mac macintosh x-mac-roman",
    "windows-874": "dos-874 iso-8859-11 iso8859-11 iso885911 tis-620 windows-874",
    "windows-1250": "cp1250 windows-1250 x-cp1250",
    "windows-1251": "cp1251 windows-1251 x-cp1251",
    "windows-1252": "ansi_x3.4-1968 ascii cp1252 cp819 csisolatin1 ibm819 iso-8859-1 "
    "iso-ir-100 iso8859-1 iso88591 iso_8859-1 iso_8859-1:1987 l1 latin1 us-ascii "
    "windows-1252 x-cp1252",
    "windows-1253": "cp1253 windows-1253 x-cp1253",
    "windows-1254": "cp1254 csisolatin5 iso-8859-9 iso-ir-148 iso8859-9 iso88599 iso_8859-9 "
    "iso_8859-9:1989 l5 latin5 windows-1254 x-cp1254",
    "windows-1255": "cp1255 windows-1255 x-cp1255",
    "windows-1256": "cp1256 windows-1256 x-cp1256",
    "windows-1257": "cp1257 windows-1257 x-cp1257",
    "windows-1258": "cp1258 windows-1258 x-cp1258",
    "x-mac-cyrillic": "x-mac-cyrillic x-mac-ukrainian",
    "gbk": "chinese csgb2312 csiso58gb231280 gb2312 gb_2312 gb_2312-80 gbk iso-ir-58 x-gbk",
    "gb18030": "gb18030",
    "big5": "big5 big5-hkscs cn-big5 csbig5 x-x-big5",
    "euc-jp": "cseucpkdfmtjapanese euc-jp x-euc-jp",
    "iso-2022-jp": "csiso2022jp iso-2022-jp",
    "shift_jis": "csshiftjis ms932 ms_kanji shift-jis shift_jis sjis windows-31j x-sjis",
    "euc-kr": "cseuckr csksc56011987 euc-kr iso-ir-149 korean ks_c_5601-1987 "
    "ks_c_5601-1989 ksc5601 ksc_5601 windows-949",
    "replacement": "csiso2022kr hz-gb-2312 iso-2022-cn iso-2022-cn-ext iso-2022-kr replacement",
    "utf-16be": "unicodefffe utf-16be",
    "utf-16le": "csunicode iso-10646-ucs-2 ucs-2 unicode unicodefeff utf-16 utf-16le",
    "x-user-defined": "x-user-defined",
}
_ENCODING_OF_LABEL = {label: name for name, labels in _LABELS.items() for label in labels.split()}
ENCODINGS = frozenset(_LABELS)


def encoding_for_label(label: str | bytes) -> str | None:
    """The encoding a label names (the Encoding Standard's "get an encoding"), else None.

    ASCII whitespace around the label and ASCII case do not matter; nothing else is
    forgiven (``latin-1``, ``utf-7`` and ``cp852`` name no encoding).
    """
    if isinstance(label, bytes):
        label = label.decode("latin-1")
    # No label has a non-ASCII character, and str.lower() would fold some (K, the Kelvin
    # sign) into ASCII ones.
    if not label.isascii():
        return None
    return _ENCODING_OF_LABEL.get(label.strip("\t\n\f\r ").lower())


class _End(Exception):
    """The bytes ran out inside an attribute: the prescan is aborted. (``_attribute`` only
    reads a <meta> whose tag ``_META_ATTRIBUTES`` matched whole, so this is a guard.)"""


# The attributes of a tag and its ">", from the end of its name, as the Standard's "get an
# attribute" reads them one after another; no match where the bytes run out first. Each
# branch is chosen by the next byte and nothing is given back (possessive quantifiers), so
# a match is the Standard's one reading, found in one pass.
_ATTRIBUTES = rb"""
    (?:
        [\t\n\f\r/\ ]*+
        [^\t\n\f\r/>\ ] [^\t\n\f\r/=>\ ]*+         (?# a name: its first byte may be "=")
        (?:
            [\t\n\f\r\ ]*+ = [\t\n\f\r\ ]*+
            (?: "[^"]*+" | '[^']*+' | (?=>) | [^\t\n\f\r>"'\ ] [^\t\n\f\r>\ ]*+ )
          | (?! [\t\n\f\r\ ]*+ = )                 (?# or no value: no "=" comes)
        )
    )*+
    [\t\n\f\r/\ ]*+ >
"""
# What the prescan passes over, as many as follow one another: text, comments (whose "-->"
# may use the dashes of "<!--"), tags other than "<meta" with their attributes (a "<meta"
# in a quoted value is no tag), and "<!", "</", "<?" to the next ">". It stops at a
# "<meta", at the end, or where the bytes run out inside one of them.
_PASSED_OVER = re.compile(
    rb"""
    (?:
        [^<]++
      | < (?! [!/?A-Za-z] )
      | <! (?= -- ) (?s: .*? ) -->
      | < (?! (?i: meta ) [\t\n\f\r/\ ] ) /?+ [A-Za-z] [^\t\n\f\r>\ ]*+ """
    + _ATTRIBUTES
    + rb"""
      | < (?: ! (?! -- ) | / (?! [A-Za-z] ) | \? ) [^>]*+ >
    )*+
    """,
    re.VERBOSE,
)
_META_START = re.compile(rb"<meta[\t\n\f\r /]", re.IGNORECASE)
_META_ATTRIBUTES = re.compile(_ATTRIBUTES, re.VERBOSE)
# On bytes, IGNORECASE folds ASCII letters only, as "ASCII case-insensitive" means.
_CHARSET = re.compile(rb"charset", re.IGNORECASE)
# A <meta> that may declare an encoding is read attribute by attribute with these.
_SPACES = re.compile(rb"[\t\n\f\r ]*")
_SPACES_AND_SLASHES = re.compile(rb"[\t\n\f\r /]*")
_NAME_REST = re.compile(rb"[^\t\n\f\r /=>]*")
_UNQUOTED_VALUE = re.compile(rb"[^\t\n\f\r >]*")
_DOUBLE_QUOTE = re.compile(rb'"')
_SINGLE_QUOTE = re.compile(rb"'")
_CHARSET_EQUALS = re.compile(rb"charset[\t\n\f\r ]*=[\t\n\f\r ]*", re.IGNORECASE)
_CONTENT_VALUE_END = re.compile(rb"[\t\n\f\r ;]")
_GT = re.compile(rb">")
_XML_ENCODING = re.compile(rb"encoding")
_CONTROLS_OR_SPACES = re.compile(rb"[\x00-\x20]*")
_CONTROL_OR_SPACE = re.compile(rb"[\x00-\x20]")


def prescan(body: bytes) -> str | None:
    """The encoding ``body``'s markup declares, or None (a BOM is for the caller to check).

    The first ``<meta charset>`` or ``<meta http-equiv=Content-Type content="...charset=">``
    in the first PRESCAN_BYTES bytes that names an encoding, read as the HTML Standard's
    prescan reads it (comments and other tags' attributes skipped, invalid labels passed
    over); else the encoding of an XML declaration at the very start. A ``<meta>`` naming
    UTF-16 means UTF-8, x-user-defined windows-1252. Linear in PRESCAN_BYTES at most.
    """
    data = body[:PRESCAN_BYTES]
    # A UTF-16 "<?x" without a BOM: no <meta> could be read in it.
    if data.startswith(b"<\x00?\x00x\x00"):
        return "utf-16le"
    if data.startswith(b"\x00<\x00?\x00x"):
        return "utf-16be"
    # A <meta> declares an encoding only with "charset" in an attribute's name or value:
    # most pages that declare none are answered without a scan.
    lowered = data.lower()
    if b"<meta" not in lowered or b"charset" not in lowered:
        return _xml_declaration(data)
    try:
        found = _scan(data)
    except _End:
        found = None
    return found or _xml_declaration(data)


def _scan(data: bytes) -> str | None:
    position = 0
    while True:
        position = _run_end(_PASSED_OVER, data, position)
        if _META_START.match(data, position) is None:
            return None  # the end, or the bytes ran out inside something
        tag = _META_ATTRIBUTES.match(data, position + 5)
        if tag is None:
            return None
        # Without the word, neither a charset attribute nor a content one can name an
        # encoding: most <meta> tags are passed over whole, not read attribute by attribute.
        if _CHARSET.search(data, position, tag.end()) is not None:
            encoding = _meta(data, position + 5)
            if encoding is not None:
                return encoding
        position = tag.end()


def _meta(data: bytes, position: int) -> str | None:
    """The encoding the ``<meta>`` whose attributes start at ``position`` declares, if it
    does validly."""
    names: set[bytes] = set()
    got_pragma = False
    need_pragma: bool | None = None
    # "" once a charset attribute named no encoding: the Standard's "failure", which a
    # later content attribute does not replace.
    charset: str | None = None
    while (attribute := _attribute(data, position)) is not None:
        name, value, position = attribute
        if name in names:
            continue
        names.add(name)
        if name == b"http-equiv":
            got_pragma = value == b"content-type"
        elif name == b"content":
            encoding = _encoding_from_content(value)
            if encoding is not None and charset is None:
                charset, need_pragma = encoding, True
        elif name == b"charset":
            charset, need_pragma = encoding_for_label(value) or "", False
    if need_pragma is None or (need_pragma and not got_pragma) or not charset:
        return None
    if charset in ("utf-16be", "utf-16le"):
        return "utf-8"
    return "windows-1252" if charset == "x-user-defined" else charset


def _run_end(pattern: re.Pattern[bytes], data: bytes, position: int) -> int:
    """Where a run of ``pattern``, which also matches no bytes, from ``position`` ends."""
    run = pattern.match(data, position)
    return position if run is None else run.end()


def _attribute(data: bytes, position: int) -> tuple[bytes, bytes, int] | None:
    """The Standard's "get an attribute" at ``position``: (name, value, the position after
    it), names and values in ASCII lowercase; None at the tag's ``>``."""
    position = _run_end(_SPACES_AND_SLASHES, data, position)
    if position >= len(data):
        raise _End
    if data[position] == 0x3E:  # ">"
        return None
    # The name's first byte is taken whatever it is, "=" included.
    end = _run_end(_NAME_REST, data, position + 1)
    name = data[position:end].lower()
    if end >= len(data):
        raise _End
    if data[end] in b"/>":
        return name, b"", end
    if data[end] != 0x3D:  # "="; so a space, and maybe "=" after more of them
        end = _run_end(_SPACES, data, end)
        if end >= len(data):
            raise _End
        if data[end] != 0x3D:
            return name, b"", end
    position = _run_end(_SPACES, data, end + 1)
    if position >= len(data):
        raise _End
    byte = data[position]
    if byte in b"\"'":
        close = (_DOUBLE_QUOTE if byte == 0x22 else _SINGLE_QUOTE).search(data, position + 1)
        if close is None:
            raise _End
        return name, data[position + 1 : close.start()].lower(), close.end()
    if byte == 0x3E:
        return name, b"", position
    end = _run_end(_UNQUOTED_VALUE, data, position)
    if end >= len(data):
        raise _End
    return name, data[position:end].lower(), end


def _encoding_from_content(value: bytes) -> str | None:
    """The Standard's "algorithm for extracting a character encoding from a meta element"
    (a content attribute's value), stricter than HTTP's: an unmatched quote is nothing."""
    found = _CHARSET_EQUALS.search(value)
    if found is None or found.end() == len(value):
        return None
    position = found.end()
    quote = value[position]
    if quote in b"\"'":
        close = (_DOUBLE_QUOTE if quote == 0x22 else _SINGLE_QUOTE).search(value, position + 1)
        return None if close is None else encoding_for_label(value[position + 1 : close.start()])
    end = _CONTENT_VALUE_END.search(value, position)
    return encoding_for_label(value[position : end.start() if end else len(value)])


def _xml_declaration(data: bytes) -> str | None:
    """The Standard's "get an XML encoding": the encoding an XML declaration at the very
    start names, read within the declaration; UTF-16 there means UTF-8."""
    if not data.startswith(b"<?xml"):
        return None
    end = _GT.search(data, 5)
    if end is None:
        return None
    declaration = data[: end.start()]
    found = _XML_ENCODING.search(declaration)
    if found is None:
        return None
    position = _run_end(_CONTROLS_OR_SPACES, declaration, found.end())
    if declaration[position : position + 1] != b"=":
        return None
    position = _run_end(_CONTROLS_OR_SPACES, declaration, position + 1)
    quote = declaration[position : position + 1]
    if quote not in (b'"', b"'"):
        return None
    close = (_DOUBLE_QUOTE if quote == b'"' else _SINGLE_QUOTE).search(declaration, position + 1)
    if close is None:
        return None
    label = declaration[position + 1 : close.start()]
    if _CONTROL_OR_SPACE.search(label):
        return None
    encoding = encoding_for_label(label)
    return "utf-8" if encoding in ("utf-16be", "utf-16le") else encoding
