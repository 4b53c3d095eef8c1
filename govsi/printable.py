"""Crawled strings made safe to print (pure, apart from the log's records at the end).

A page's title, a URL or a server's reason phrase is hostile input: printed as it is, an
ESC or C1 sequence in it can set a terminal's window title, write its clipboard (OSC 52),
clear the screen or move the cursor; a bidirectional override reorders what a reader
sees (Trojan Source); a lone surrogate (bytes decoded with ``surrogateescape``) makes
``print`` raise. ``printable`` writes each such character as a visible escape, the way
``repr`` spells it, and leaves every other character, Slovenian letters included, as it
is. Hand-written: Rich's ``strip_control_codes`` drops five C0 codes and no C1 or bidi
ones, and ``repr`` also quotes and escapes backslashes.

The escaped characters (``UNPRINTABLE``): C0 controls (U+0000-U+001F) but the tab, and the
line feed where a text may have lines (``lines=True``); DEL (U+007F); C1 controls
(U+0080-U+009F: CSI U+009B, OSC U+009D, DCS U+0090, ST U+009C among them); the
bidirectional embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069); the
line and paragraph separators (U+2028, U+2029); lone surrogates (U+D800-U+DFFF).
"""

from __future__ import annotations

import logging
import re

__all__ = ["UNPRINTABLE", "PrintableRecord", "json_printable", "print_log_safely", "printable"]

# A character class of what is escaped (the module docstring lists it); the line feed is
# apart, escaped unless lines are kept.
UNPRINTABLE = "\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u2028\u2029\ud800-\udfff"
_IN_A_LINE = re.compile(f"[{UNPRINTABLE}\n]")
_IN_LINES = re.compile(f"[{UNPRINTABLE}]")


def _codes(pattern: re.Pattern[str]) -> list[int]:
    return [c for c in range(0x10000) if pattern.match(chr(c))]


# str.translate tables: a Python callback per match made a long run of controls slow.
_ESCAPES_IN_A_LINE = {c: f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}" for c in _codes(_IN_A_LINE)}
_ESCAPES_IN_LINES = {c: e for c, e in _ESCAPES_IN_A_LINE.items() if c != ord("\n")}
_JSON_ESCAPES = {c: f"\\u{c:04x}" for c in _ESCAPES_IN_LINES}


def printable(text: str, lines: bool = False) -> str:
    """``text`` with every character of ``UNPRINTABLE`` (and the line feed, unless
    ``lines``) written as ``\\xNN`` or ``\\uNNNN``; the rest as it is. Not reversible (a
    backslash stays a backslash): for showing, not for storing."""
    pattern, table = (_IN_LINES, _ESCAPES_IN_LINES) if lines else (_IN_A_LINE, _ESCAPES_IN_A_LINE)
    return text.translate(table) if pattern.search(text) else text


def json_printable(dumped: str) -> str:
    """A JSON text (``json.dumps(..., ensure_ascii=False)``) with the characters of
    ``UNPRINTABLE`` written as JSON's ``\\uNNNN`` escapes: the same JSON value, safe on a
    terminal. (``json.dumps`` escapes C0 itself, and writes C1, bidi controls and lone
    surrogates as they are.)"""
    return dumped.translate(_JSON_ESCAPES) if _IN_LINES.search(dumped) else dumped


class PrintableRecord(logging.LogRecord):
    """A log record whose message and traceback text read as ``printable`` with their
    lines kept, whatever handler and formatter write it: its arguments stay as given."""

    def getMessage(self) -> str:
        return printable(super().getMessage(), lines=True)

    # Kept in the record's __dict__ under its own name, as logging.makeLogRecord and
    # pickling put it; formatters cache the traceback here before they write it.
    @property
    def exc_text(self) -> str | None:
        text = self.__dict__.get("exc_text")
        return None if text is None else printable(text, lines=True)

    @exc_text.setter
    def exc_text(self, value: str | None) -> None:
        self.__dict__["exc_text"] = value


def print_log_safely() -> None:
    """Make every log record this process makes from now on a ``PrintableRecord`` (the
    log's record factory: every logger, handler and formatter, installed whenever they
    are). Said in the log when another factory is in place, which it does not replace."""
    factory = logging.getLogRecordFactory()
    if factory is logging.LogRecord:
        logging.setLogRecordFactory(PrintableRecord)
    elif factory is not PrintableRecord:
        logging.getLogger(__name__).warning(
            "log records are made by %r: their control characters are not escaped", factory
        )
