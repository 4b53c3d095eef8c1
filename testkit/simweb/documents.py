"""Real documents made in the tests, for reading their text back: PDF (Helvetica, with
Slovenian letters), DOCX and PPTX (zip of XML parts), DOC and PPT (an OLE compound file
written here, since no library writes one)."""

from __future__ import annotations

import io
import struct
import zipfile
import zlib
from datetime import datetime

# Helvetica's WinAnsi encoding has š, ž, Š, Ž; č and Č get two codes it leaves unused.
_PDF_CODES = {"Č": 0x81, "č": 0x82}


def _pdf_string(text: str) -> bytes:
    out = bytearray()
    for ch in text:
        code = _PDF_CODES.get(ch)
        b = bytes([code]) if code else ch.encode("cp1252")
        if b in (b"(", b")", b"\\"):
            out += b"\\"
        out += b
    return bytes(out)


def make_pdf(pages: list[str], title: str = "", date: str = "") -> bytes:
    """A PDF of ``pages``, each a list of lines separated by newlines; ``title`` and
    ``date`` (a PDF date such as ``D:20240131120000+01'00'``) in its Info dictionary."""
    objects: list[bytes] = []
    font = 3 + 2 * len(pages)
    kids = " ".join(f"{3 + 2 * i} 0 R" for i in range(len(pages)))
    objects.append(b"<< /Type /Catalog /Pages 2 0 R >>")
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {len(pages)} >>".encode())
    for i, page in enumerate(pages):
        lines = [b"BT /F1 12 Tf 14 TL 72 760 Td"]
        lines += [b"(" + _pdf_string(line) + b") Tj T*" for line in page.split("\n")]
        lines.append(b"ET")
        stream = b"\n".join(lines)
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {4 + 2 * i} 0 R "
            f"/Resources << /Font << /F1 {font} 0 R >> >> >>".encode()
        )
        objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    objects.append(
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding << /Type /Encoding "
        b"/BaseEncoding /WinAnsiEncoding /Differences [129 /Ccaron /ccaron] >> >>"
    )
    title_hex = ("feff" + title.encode("utf-16-be").hex()) if title else ""
    info = f"<< /Title <{title_hex}> /ModDate ({date}) >>".encode() if title or date else None
    if info:
        objects.append(info)
    return _pdf_file(objects, info=bool(info))


def _pdf_file(objects: list[bytes], info: bool = False) -> bytes:
    """A PDF of ``objects`` (numbered from 1, the catalog first; the Info dictionary last
    when ``info``), with its cross-reference table."""
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    trailer = f"<< /Size {len(objects) + 1} /Root 1 0 R"
    trailer += f" /Info {len(objects)} 0 R >>" if info else " >>"
    out += b"trailer\n" + trailer.encode() + b"\nstartxref\n%d\n%%%%EOF\n" % xref
    return bytes(out)


def pdf_bomb(compressed: int) -> bytes:
    """A one-page PDF whose content stream is ``compressed`` bytes of Flate-compressed
    spaces (about a thousand times as many unpacked): pdfium unpacks it whole."""
    stream = _deflated_spaces(compressed)
    return _pdf_file([
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>",
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(stream) + stream
        + b"\nendstream",
    ])  # fmt: skip


_CORE = (
    '<?xml version="1.0" encoding="UTF-8"?><cp:coreProperties '
    'xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" '
    'xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:dcterms="http://purl.org/dc/terms/">'
    "<dc:title>{title}</dc:title><dcterms:modified>{modified}</dcterms:modified>"
    "</cp:coreProperties>"
)
_W = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'
_A = 'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main"'


def _zip(parts: dict[str, bytes | str]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, body in parts.items():
            zf.writestr(name, body)
    return buf.getvalue()


def make_docx(paragraphs: list[str], title: str = "", modified: str = "") -> bytes:
    """A DOCX whose body is ``paragraphs`` (each split in two runs, as Word does)."""
    run = "<w:r><w:t>{}</w:t></w:r>"
    body = "".join(
        "<w:p>" + run.format(p[: len(p) // 2]) + run.format(p[len(p) // 2 :]) + "</w:p>"
        for p in paragraphs
    )
    document = f'<?xml version="1.0"?><w:document {_W}><w:body>{body}</w:body></w:document>'
    return _zip({
        "[Content_Types].xml": "<Types/>",
        "word/document.xml": document,
        "docProps/core.xml": _CORE.format(title=title, modified=modified),
    })  # fmt: skip


def make_pptx(slides: list[list[str]], title: str = "") -> bytes:
    """A PPTX of ``slides``, each a list of paragraphs."""
    parts: dict[str, bytes | str] = {"[Content_Types].xml": "<Types/>"}
    for i, paras in enumerate(slides, 1):
        text = "".join(f"<a:p><a:r><a:t>{p}</a:t></a:r></a:p>" for p in paras)
        parts[f"ppt/slides/slide{i}.xml"] = (
            f'<?xml version="1.0"?><p:sld {_A} xmlns:p="p">{text}</p:sld>'
        )
    parts["docProps/core.xml"] = _CORE.format(title=title, modified="")
    return _zip(parts)


def zip_bomb_docx(unpacked: int) -> bytes:
    """A DOCX whose body unpacks to ``unpacked`` bytes of one repeated paragraph."""
    para = f"<w:p><w:r><w:t>{'a' * 1000}</w:t></w:r></w:p>".encode()
    body = b'<?xml version="1.0"?><w:document ' + _W.encode() + b"><w:body>"
    buf = io.BytesIO()
    with (
        zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf,
        zf.open("word/document.xml", "w", force_zip64=True) as part,
    ):
        part.write(body)
        for _ in range(unpacked // len(para)):
            part.write(para)
        part.write(b"</w:body></w:document>")
    return buf.getvalue()


def _deflated_spaces(compressed: int) -> bytes:
    """About ``compressed`` bytes of a zlib stream of MiBs of spaces, made from one MiB's
    block repeated (each ends in a full flush, so none refers to the one before): zlib
    takes 9 s to compress the gigabyte itself."""
    spaces = b" " * 2**20
    deflate = zlib.compressobj(9)
    first = deflate.compress(spaces) + deflate.flush(zlib.Z_FULL_FLUSH)
    block = first[2:]  # without the zlib header
    count = max(1, compressed // len(block))
    check = 1
    for _ in range(count):
        check = zlib.adler32(spaces, check)
    # An empty final block (fixed Huffman), then the checksum of all the spaces.
    return first + block * (count - 1) + b"\x03\x00" + struct.pack(">I", check)


def tree_bomb_docx(unpacked: int) -> bytes:
    """A DOCX whose body unpacks to ``unpacked`` bytes of empty runs in one paragraph: no
    text, millions of elements (a parser that keeps its tree keeps them all)."""
    runs = b"<w:r/>" * 10_000
    buf = io.BytesIO()
    with (
        zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf,
        zf.open("word/document.xml", "w", force_zip64=True) as part,
    ):
        part.write(b'<?xml version="1.0"?><w:document ' + _W.encode() + b"><w:body><w:p>")
        for _ in range(unpacked // len(runs)):
            part.write(runs)
        part.write(b"</w:p></w:body></w:document>")
    return buf.getvalue()


# OLE compound files (version 3, 512-byte sectors). Every stream is padded to 4 096 bytes
# or more, so none goes in the mini stream and one FAT describes them all.
_SECTOR = 512
_END, _FREE, _FATSECT, _NOSTREAM = 0xFFFFFFFE, 0xFFFFFFFF, 0xFFFFFFFD, 0xFFFFFFFF


def make_ole(streams: dict[str, bytes]) -> bytes:
    """A compound file holding ``streams`` (name: bytes) in its root storage."""
    names = list(streams)
    data = [
        streams[n].ljust(max(4096, -(-len(streams[n]) // _SECTOR) * _SECTOR), b"\0") for n in names
    ]
    fat: list[int] = []
    starts = []
    for blob in data:
        count = len(blob) // _SECTOR
        starts.append(len(fat))
        fat += [len(fat) + k + 1 for k in range(count - 1)] + [_END]
    entries = [_dir_entry("Root Entry", 5, _END, 0, child=1 if names else _NOSTREAM)]
    for i, name in enumerate(names):
        right = i + 2 if i + 1 < len(names) else _NOSTREAM
        # The padded size: under 4 096 bytes a stream would be looked for in the mini stream.
        entries.append(_dir_entry(name, 2, starts[i], len(data[i]), right=right))
    directory = b"".join(entries)
    directory = directory.ljust(-(-len(directory) // _SECTOR) * _SECTOR, b"\0")
    dir_start = len(fat)
    dir_count = len(directory) // _SECTOR
    fat += [dir_start + k + 1 for k in range(dir_count - 1)] + [_END]
    fat_count = 1
    while (len(fat) + fat_count) > fat_count * (_SECTOR // 4):
        fat_count += 1
    fat_start = len(fat)
    fat += [_FATSECT] * fat_count
    fat += [_FREE] * (fat_count * (_SECTOR // 4) - len(fat))
    difat = [fat_start + k for k in range(fat_count)] + [_FREE] * (109 - fat_count)
    header = struct.pack(
        "<8s16sHHHHH6sIIIIIIIII",
        b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", b"\0" * 16, 0x3E, 3, 0xFFFE, 9, 6, b"\0" * 6,
        0, fat_count, dir_start, 0, 4096, _END, 0, _END, 0,
    ) + struct.pack("<109I", *difat)  # fmt: skip
    return header + b"".join(data) + directory + struct.pack(f"<{len(fat)}I", *fat)


def _dir_entry(name: str, kind: int, start: int, size: int, child: int = _NOSTREAM,
               right: int = _NOSTREAM) -> bytes:  # fmt: skip
    encoded = (name + "\0").encode("utf-16-le")
    return struct.pack(
        "<64sHBBIII16sIQQIQ", encoded, len(encoded), kind, 1, _NOSTREAM, right, child,
        b"\0" * 16, 0, 0, 0, start, size,
    )  # fmt: skip


def make_doc(pieces: list[tuple[str, bool]], encrypted: bool = False) -> bytes:
    """A Word 97 DOC whose text is ``pieces``: (text, compressed), compressed pieces in
    cp1252, the others in UTF-16; paragraphs end in ``\\r`` as Word writes them."""
    text_at = 0x800
    word = bytearray(text_at)
    struct.pack_into("<HH", word, 0, 0xA5EC, 0xC1)
    struct.pack_into("<H", word, 0x0A, 0x0200 | (0x0100 if encrypted else 0))
    cps, pcds, cp = [0], [], 0
    for text, compressed in pieces:
        if compressed:
            pcds.append(struct.pack("<HIH", 0, 0x40000000 | (len(word) * 2), 0))
            word += text.encode("cp1252")
        else:
            pcds.append(struct.pack("<HIH", 0, len(word), 0))
            word += text.encode("utf-16-le", "surrogatepass")  # a lone surrogate stays broken
        cp += len(text)
        cps.append(cp)
    struct.pack_into("<i", word, 0x4C, cp)
    plc = struct.pack(f"<{len(cps)}I", *cps) + b"".join(pcds)
    clx = b"\x01" + struct.pack("<h", 2) + b"\0\0" + b"\x02" + struct.pack("<I", len(plc)) + plc
    struct.pack_into("<II", word, 0x1A2, 0, len(clx))
    return make_ole({"WordDocument": bytes(word), "1Table": clx})


def _record(kind: int, body: bytes, container: bool = False) -> bytes:
    return struct.pack("<HHI", 0x000F if container else 0, kind, len(body)) + body


def make_ppt(slides: list[str], master: str = "Click to edit Master title style") -> bytes:
    """A PowerPoint 97 PPT whose slides' text is ``slides`` (UTF-16 atoms; those without
    letters past Latin-1 as 8-bit atoms, as PowerPoint does), after a master's placeholder."""
    atoms = [_record(0x0FA8, master.encode("latin-1"))]
    for text in slides:
        try:
            atoms.append(_record(0x0FA8, text.encode("latin-1")))
        except UnicodeEncodeError:
            atoms.append(_record(0x0FA0, text.encode("utf-16-le")))
    document = _record(0x03E8, _record(0x0FF0, b"".join(atoms), container=True), container=True)
    return make_ole({"PowerPoint Document": document, "Current User": b"\0" * 64})


def stamp(value: datetime) -> str:
    """``value`` as a PDF date (UTC)."""
    return value.strftime("D:%Y%m%d%H%M%SZ")
