"""The text of DOCX and PPTX files (Office Open XML: XML parts in a zip), read with the
standard library's zipfile and lxml, every part's unpacked size bounded (pure)."""

from __future__ import annotations

import io
import re
import zipfile
from collections.abc import Iterator
from datetime import datetime

from lxml import etree

from govsi.text.limits import Budget, DocumentText, TextLimits, memory_bounded

_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
_DC = "{http://purl.org/dc/elements/1.1/}"
_DCTERMS = "{http://purl.org/dc/terms/}"
_SLIDE = re.compile(r"ppt/slides/slide(\d+)\.xml")
# No DTDs, entities or network: a part is data, never instructions.
_PARSER_ARGS = {"resolve_entities": False, "no_network": True, "huge_tree": False}


class TooBig(Exception):
    """A part unpacks past ``max_unpacked_bytes``."""


class _Bounded(io.RawIOBase):
    """Part ``name`` of the zip as a stream that fails with ``TooBig`` once more than
    ``left[0]`` bytes are unpacked from the document's parts together (counted there):
    the parser reads it piece by piece, so memory stays bounded too."""

    def __init__(self, zf: zipfile.ZipFile, name: str, left: list[int]) -> None:
        self._part = zf.open(name)
        self._name = name
        self._left = left

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        data = self._part.read(min(len(buffer), self._left[0] + 1))
        if len(data) > self._left[0]:
            raise TooBig(self._name)
        self._left[0] -= len(data)
        buffer[: len(data)] = data
        return len(data)

    def close(self) -> None:
        self._part.close()
        super().close()


def _read(zf: zipfile.ZipFile, name: str, left: list[int]) -> bytes:
    """Part ``name`` whole, within the bound (for the small metadata part)."""
    with _Bounded(zf, name, left) as part:
        return part.read()


class OutOfTime(Exception):
    """The time bound ran out inside a part."""


# Elements read between two looks at the clock: a small fraction of the time bound.
_CLOCK_EVERY = 4096


def _paragraphs(
    source: io.RawIOBase, text_tag: str, paragraph_tag: str, budget: Budget
) -> Iterator[str]:
    """The text of each paragraph of an XML part: its ``text_tag`` elements joined, tabs
    and breaks as spaces and new lines (Word's ``w:tab``, ``w:br``). Every element is
    dropped once read: the tree never holds more than the open elements and one sibling
    each, however many a part has (a paragraph of millions of empty runs: bench/README,
    bench.hostile_crawl --only bomb);
    ``OutOfTime`` when ``budget``'s time runs out, however long the part."""
    words: list[str] = []
    for n, (_event, el) in enumerate(etree.iterparse(source, events=("end",), **_PARSER_ARGS)):
        if n % _CLOCK_EVERY == 0 and budget.out_of_time():
            raise OutOfTime
        tag = el.tag
        if tag == text_tag:
            words.append(el.text or "")
        elif tag == _W + "tab":
            words.append("\t")
        elif tag in (_W + "br", _W + "cr", _A + "br"):
            words.append("\n")
        elif tag == paragraph_tag:
            if words:
                yield "".join(words)
            words = []
        el.clear(keep_tail=False)
        parent = el.getparent()
        while parent is not None and el.getprevious() is not None:
            del parent[0]
    if words:
        yield "".join(words)


def _core(zf: zipfile.ZipFile, left: list[int]) -> tuple[str | None, datetime | None]:
    """Title and date (modified, else created) from ``docProps/core.xml``."""
    try:
        data = _read(zf, "docProps/core.xml", left)
        root = etree.fromstring(data, etree.XMLParser(**_PARSER_ARGS))
    except (KeyError, etree.XMLSyntaxError, zipfile.BadZipFile, ValueError):
        return None, None
    title = (root.findtext(_DC + "title") or "").strip() or None
    date = None
    for name in ("modified", "created"):
        value = (root.findtext(_DCTERMS + name) or "").strip()
        try:
            date = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            continue
        break
    return title, date


def _open(data: bytes) -> zipfile.ZipFile | DocumentText:
    try:
        return zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, ValueError, OSError) as e:
        return DocumentText("failed", reason=f"not a readable zip file: {e}")


@memory_bounded
def ooxml_text(data: bytes, kind: str, limits: TextLimits) -> DocumentText:
    """The text of a DOCX (``kind`` "DOCX": the body, then footnotes) or a PPTX ("PPTX":
    the slides in order, at most ``max_pages``)."""
    zf = _open(data)
    if isinstance(zf, DocumentText):
        return zf
    with zf:
        names = set(zf.namelist())
        if kind == "DOCX":
            parts = [n for n in ("word/document.xml", "word/footnotes.xml") if n in names]
            tags = (_W + "t", _W + "p")
        else:
            slides = sorted((int(m.group(1)), n) for n in names if (m := _SLIDE.fullmatch(n)))
            parts = [n for _, n in slides]
            tags = (_A + "t", _A + "p")
        if not parts:
            return DocumentText("failed", reason=f"no {kind} content in the zip file")
        left = [limits.max_unpacked_bytes]
        budget = Budget(limits)
        timed_out = False
        try:
            title, date = _core(zf, left)
            for number, name in enumerate(parts):
                if kind == "PPTX" and number >= limits.max_pages:
                    budget.truncated = True
                    break
                if budget.out_of_time():
                    timed_out = True
                    break
                with _Bounded(zf, name, left) as part:
                    if not all(budget.add(p) for p in _paragraphs(part, *tags, budget)):
                        break
        except OutOfTime:
            timed_out = True
        except TooBig as e:
            return DocumentText(
                "failed", budget.text(), f"{e} unpacks past {limits.max_unpacked_bytes} bytes"
            )
        except (zipfile.BadZipFile, etree.XMLSyntaxError, ValueError, OSError, EOFError) as e:
            if isinstance(e, etree.XMLSyntaxError) and e.code == etree.ErrorTypes.ERR_NO_MEMORY:
                raise MemoryError(str(e)) from e  # libxml2 past the memory bound
            if not budget.text():
                return DocumentText("failed", reason=f"unreadable {kind}: {e}")
            budget.truncated = True  # what was read before the broken part stays
        pages = len(parts) if kind == "PPTX" else None
        return budget.result(title, date, pages, timed_out)
