"""The text of the binary Office formats in an OLE compound file: Word 97-2003 (DOC, its
piece table, [MS-DOC] 2.4.1) and PowerPoint 97-2003 (PPT, its text atoms, [MS-PPT]
2.9), read with olefile (pure)."""

from __future__ import annotations

import io
import re
import struct
from collections.abc import Iterator
from datetime import UTC, datetime

from govsi.text.limits import Budget, DocumentText, TextLimits, memory_bounded

# Word's marks in the text stream: cell and row ends, page and column breaks, and the
# fields \x13 code \x14 result \x15, of which the result is the text shown.
_FIELD = re.compile(r"\x13[^\x13\x14\x15]*(?:\x14([^\x13\x15]*))?\x15")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")
# PowerPoint record types: TextCharsAtom (UTF-16), TextBytesAtom (8-bit), and the
# containers the text lives in are walked into (record version 0xF).
_TEXT_CHARS, _TEXT_BYTES = 0x0FA0, 0x0FA8
# The placeholder text of a master slide, which every deck repeats and nobody wrote.
_MASTER_TEXT = (
    "Click to edit Master",
    "Kliknite, če želite urediti",
    "Second level",
    "Third level",
)


class Unreadable(Exception):
    """The file is not the format it claims."""


def _word_text(word: bytes, table: bytes, limits: TextLimits) -> str:
    """The main document's text, from the piece table in the table stream's CLX."""
    if len(word) < 0x1AA or struct.unpack_from("<H", word, 0)[0] != 0xA5EC:
        raise Unreadable("no Word 97-2003 document in the file")
    flags = struct.unpack_from("<H", word, 0x0A)[0]
    if flags & 0x0100:
        raise Encrypted
    ccp_text = struct.unpack_from("<i", word, 0x4C)[0]
    fc_clx, lcb_clx = struct.unpack_from("<II", word, 0x1A2)
    clx = table[fc_clx : fc_clx + lcb_clx]
    pos = 0
    while pos < len(clx) and clx[pos] == 0x01:  # Prc: formatting, skipped
        pos += 3 + struct.unpack_from("<h", clx, pos + 1)[0]
    if pos + 5 > len(clx) or clx[pos] != 0x02:
        raise Unreadable("no piece table in the Word document")
    size = struct.unpack_from("<I", clx, pos + 1)[0]
    plc = clx[pos + 5 : pos + 5 + size]
    pieces = (len(plc) - 4) // 12
    if pieces <= 0:
        return ""
    cps = struct.unpack_from(f"<{pieces + 1}I", plc, 0)
    out: list[str] = []
    chars = 0
    wanted = min(max(ccp_text, 0), limits.max_chars)
    for i in range(pieces):
        if chars >= wanted:
            break
        count = min(cps[i + 1] - cps[i], wanted - chars)
        if count <= 0:
            continue
        fc = struct.unpack_from("<I", plc, 4 * (pieces + 1) + 8 * i + 2)[0]
        if fc & 0x40000000:  # 8-bit text (cp1252) at half the offset
            start = (fc & 0x3FFFFFFF) // 2
            out.append(word[start : start + count].decode("cp1252", "replace"))
        else:
            out.append(word[fc : fc + 2 * count].decode("utf-16-le", "replace"))
        chars += count
    return "".join(out)


class Encrypted(Exception):
    """The document needs a password."""


def _clean_word(text: str) -> str:
    text = _FIELD.sub(lambda m: m.group(1) or "", text)
    text = text.replace("\x07", "\t").replace("\r", "\n").replace("\x0b", "\n")
    return _CONTROL.sub("", text)


def _ppt_texts(stream: bytes) -> Iterator[str]:
    """The text atoms of a PowerPoint document stream, in order, each once in a row; read
    as they are taken, so a stream of millions of atoms stops at the text bound."""
    last: str | None = None
    pos, end = 0, len(stream)
    while pos + 8 <= end:
        ver_inst, rec_type, rec_len = struct.unpack_from("<HHI", stream, pos)
        pos += 8
        if ver_inst & 0x000F == 0x000F:
            continue  # a container: its records follow
        body = stream[pos : pos + rec_len]
        pos += rec_len
        if rec_type == _TEXT_CHARS:
            text = body.decode("utf-16-le", "replace")
        elif rec_type == _TEXT_BYTES:
            text = body.decode("latin-1")
        else:
            continue
        text = _CONTROL.sub("", text.replace("\r", "\n").replace("\x0b", "\n")).strip()
        if text and not text.startswith(_MASTER_TEXT) and text != last:
            last = text
            yield text


def _dates_and_title(ole: object) -> tuple[str | None, datetime | None]:
    try:
        meta = ole.get_metadata()  # type: ignore[attr-defined]
    except Exception:
        return None, None
    title = meta.title
    if isinstance(title, bytes):
        title = title.decode("cp1252", "replace")
    date = next(
        (d for d in (meta.last_saved_time, meta.create_time) if isinstance(d, datetime)), None
    )
    if date is not None and date.tzinfo is None:
        date = date.replace(tzinfo=UTC)
    if date is not None and date.year < 1980:
        date = None
    return (title or "").strip("\x00 \t") or None, date


@memory_bounded
def ole_text(data: bytes, kind: str, limits: TextLimits) -> DocumentText:
    """The text of a DOC (``kind`` "DOC") or PPT ("PPT") file."""
    import olefile

    if not olefile.isOleFile(io.BytesIO(data)):
        return DocumentText("failed", reason=f"not an OLE compound file, so not a {kind}")
    try:
        ole = olefile.OleFileIO(io.BytesIO(data))
    except MemoryError:
        raise
    except Exception as e:
        return DocumentText("failed", reason=f"unreadable compound file: {e}")
    try:
        title, date = _dates_and_title(ole)
        budget = Budget(limits)
        if kind == "DOC":
            if not ole.exists("WordDocument"):
                return DocumentText("failed", reason="no WordDocument stream: not a DOC")
            word = _stream(ole, "WordDocument", limits)
            table_name = "1Table" if struct.unpack_from("<H", word, 0x0A)[0] & 0x0200 else "0Table"
            table = _stream(ole, table_name, limits) if ole.exists(table_name) else b""
            budget.add(_clean_word(_word_text(word, table, limits)))
            return budget.result(title, date)
        if not ole.exists("PowerPoint Document"):
            return DocumentText("failed", reason="no PowerPoint Document stream: not a PPT")
        for text in _ppt_texts(_stream(ole, "PowerPoint Document", limits)):
            if not budget.add(text):
                break
        return budget.result(title, date)
    except Encrypted:
        return DocumentText("encrypted", reason=f"the {kind} needs a password")
    except (Unreadable, struct.error) as e:
        return DocumentText("failed", reason=f"unreadable {kind}: {e}")
    except MemoryError:
        raise
    except Exception as e:
        return DocumentText("failed", reason=f"unreadable {kind}: {e!r}")
    finally:
        ole.close()


def _stream(ole: object, name: str, limits: TextLimits) -> bytes:
    if ole.get_size(name) > limits.max_unpacked_bytes:  # type: ignore[attr-defined]
        raise Unreadable(f"stream {name} is over {limits.max_unpacked_bytes} bytes")
    data: bytes = ole.openstream(name).read()  # type: ignore[attr-defined]
    return data
