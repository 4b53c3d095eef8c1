"""The text of DOCX and PPTX files (Office Open XML: XML parts in a zip), read with the
standard library's zipfile and lxml, every part's unpacked size bounded (pure)."""

from __future__ import annotations

import io
import re
import zipfile
from collections.abc import Iterator
from datetime import datetime

from lxml import etree

from govsi.text.limits import Budget, DocumentText, TextLimits

_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
_DC = "{http://purl.org/dc/elements/1.1/}"
_DCTERMS = "{http://purl.org/dc/terms/}"
_SLIDE = re.compile(r"ppt/slides/slide(\d+)\.xml")
# No DTDs, entities or network: a part is data, never instructions.
_PARSER_ARGS = {"resolve_entities": False, "no_network": True, "huge_tree": False}


class TooBig(Exception):
    """A part unpacks past ``max_unpacked_bytes``."""


def _read(zf: zipfile.ZipFile, name: str, left: list[int]) -> bytes:
    """Part ``name``, at most ``left[0]`` bytes unpacked (what it took is counted)."""
    with zf.open(name) as part:
        data = part.read(left[0] + 1)
    if len(data) > left[0]:
        raise TooBig(name)
    left[0] -= len(data)
    return data


def _events(data: bytes) -> Iterator[tuple[str, etree._Element]]:
    yield from etree.iterparse(io.BytesIO(data), events=("start", "end"), **_PARSER_ARGS)


def _paragraphs(data: bytes, text_tag: str, paragraph_tag: str) -> Iterator[str]:
    """The text of each paragraph of an XML part: its ``text_tag`` elements joined, tabs
    and breaks as spaces and new lines (Word's ``w:tab``, ``w:br``)."""
    words: list[str] = []
    for event, el in _events(data):
        if event != "end":
            continue
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
        if tag == paragraph_tag:
            el.clear()  # bounded memory on a long document
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
                if not all(budget.add(p) for p in _paragraphs(_read(zf, name, left), *tags)):
                    break
        except TooBig as e:
            return DocumentText(
                "failed", budget.text(), f"{e} unpacks past {limits.max_unpacked_bytes} bytes"
            )
        except (zipfile.BadZipFile, etree.XMLSyntaxError, ValueError, OSError, EOFError) as e:
            if not budget.text():
                return DocumentText("failed", reason=f"unreadable {kind}: {e}")
            budget.truncated = True  # what was read before the broken part stays
        pages = len(parts) if kind == "PPTX" else None
        return budget.result(title, date, pages, timed_out)
