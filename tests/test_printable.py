"""Crawled strings made safe to print (govsi.printable): what a terminal or a log shows of
a hostile title, URL or message."""

from __future__ import annotations

import io
import json
import logging
from typing import Any

import pytest

from govsi.printable import PrintableRecord, json_printable, print_log_safely, printable


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        # Ordinary text, Slovenian letters, other scripts and symbols as they are.
        ("Vlada Republike Slovenije", "Vlada Republike Slovenije"),
        ("Občina Šentjur · Žalec \u2013 „navedek“ €", "Občina Šentjur · Žalec \u2013 „navedek“ €"),
        ("Ελληνικά русский 日本語 😀", "Ελληνικά русский 日本語 😀"),
        ("a\\b", "a\\b"),  # a backslash stays (showing, not storing)
        ("", ""),
        # The tab stays; the line feed is escaped in a line of its own.
        ("a\tb", "a\tb"),
        ("a\nb", "a\\x0ab"),
        ("a\r\nb", "a\\x0d\\x0ab"),  # a carriage return could overwrite the line
        # ESC sequences: window title (OSC 0), clipboard (OSC 52), clear screen, cursor.
        ("\x1b]0;pwned\x07", "\\x1b]0;pwned\\x07"),
        ("\x1b]52;c;cHduZWQ=\x1b\\", "\\x1b]52;c;cHduZWQ=\\x1b\\"),
        ("\x1b[2J\x1b[H", "\\x1b[2J\\x1b[H"),
        ("\x1b[1A\x1b[2K", "\\x1b[1A\\x1b[2K"),
        # Every other C0 control, NUL to US; backspace can hide what came before it.
        ("\x00\x01\x07\x08\x0b\x0c\x0e\x1f", "\\x00\\x01\\x07\\x08\\x0b\\x0c\\x0e\\x1f"),
        ("\x7f", "\\x7f"),  # DEL
        # C1 controls: CSI, OSC, DCS and ST in their one-character forms, NEL, the ends.
        ("\x9b2J", "\\x9b2J"),
        ("\x9d0;t\x9c", "\\x9d0;t\\x9c"),
        ("\x90q\x9c", "\\x90q\\x9c"),
        ("\x80\x85\x9f", "\\x80\\x85\\x9f"),
        ("\xa0\xa9", "\xa0\xa9"),  # no-break space and © are printable
        # Bidirectional embeddings, overrides and isolates (Trojan Source).
        ("\u202aa\u202bb\u202cc\u202dd\u202ee", "\\u202aa\\u202bb\\u202cc\\u202dd\\u202ee"),
        ("\u2066a\u2067b\u2068c\u2069", "\\u2066a\\u2067b\\u2068c\\u2069"),
        ("\u200e\u200f", "\u200e\u200f"),  # marks, which reorder nothing around them
        # Line and paragraph separators.
        ("a\u2028b\u2029c", "a\\u2028b\\u2029c"),
        # Lone surrogates (bytes decoded with surrogateescape), which print() refuses.
        ("a\udcff\ud800", "a\\udcff\\ud800"),
    ],
)
def test_printable(text: str, shown: str) -> None:
    assert printable(text) == shown
    assert printable(shown) == shown  # once is enough
    shown.encode("utf-8")  # prints on any UTF-8 terminal


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("a\nb\tc", "a\nb\tc"),
        ("a\r\nb", "a\\x0d\nb"),
        ("\x1b]0;t\x07\n\x9b", "\\x1b]0;t\\x07\n\\x9b"),
        ("a\u2028b", "a\\u2028b"),
    ],
)
def test_printable_with_lines(text: str, shown: str) -> None:
    assert printable(text, lines=True) == shown


def test_json_printable_is_the_same_json_safe_on_a_terminal() -> None:
    value = {"title": "a\x1b]52;c;eA==\x07 \x9b2J \u202e Šola \udcff", "n": [1, "\x7f"]}
    dumped = json.dumps(value, ensure_ascii=False)
    safe = json_printable(dumped)
    assert "Šola" in safe and "\\u009b" in safe and "\\u202e" in safe and "\\udcff" in safe
    assert "\\u001b" in safe and "\\u007f" in safe
    assert json.loads(safe) == value
    assert not any(0x7F <= ord(c) <= 0x9F or c in "\x1b\u202e" for c in safe)
    safe.encode("utf-8")


def _logged(message: str, *args: object, exc: bool = False) -> tuple[str, logging.LogRecord]:
    """What a handler installed after ``print_log_safely`` writes of one record, and the
    record."""
    print_log_safely()
    print_log_safely()  # once is enough
    assert logging.getLogRecordFactory() is PrintableRecord
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logging.Formatter("[%(name)s] %(levelname)s: %(message)s"))
    records: list[logging.LogRecord] = []
    log = logging.getLogger("govsi.test.printable")
    log.addHandler(handler)
    log.addFilter(lambda r: records.append(r) or True)
    log.propagate = False
    try:
        if exc:
            try:
                raise ValueError("\x1b]0;from the exception\x07")
            except ValueError:
                log.exception(message, *args)
        else:
            log.warning(message, *args)
    finally:
        log.removeHandler(handler)
        log.filters.clear()
        log.propagate = True
    return stream.getvalue(), records[0]


def test_log_lines_carry_crawled_strings_escaped() -> None:
    title = "\x1b]0;pwned\x07\x1b[2J\u202eabc"
    line, record = _logged("page %s titled %s", "https://a.gov.si/\x9b", title)
    assert line.startswith("[govsi.test.printable] WARNING: page https://a.gov.si/\\x9b")
    assert "\x1b" not in line and "\x9b" not in line and "\u202e" not in line
    assert "titled \\x1b]0;pwned\\x07\\x1b[2J\\u202eabc" in line
    assert record.args == ("https://a.gov.si/\x9b", title)  # as logged
    # The log's own lines stay lines: a traceback is read as one.
    trace, _ = _logged("failed: %s", "x\ny", exc=True)
    assert "failed: x\ny\nTraceback (most recent call last):\n" in trace
    assert "ValueError: \\x1b]0;from the exception\\x07" in trace and "\x1b" not in trace


def test_another_record_factory_is_left_and_said(caplog: pytest.LogCaptureFixture) -> None:
    def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        return logging.LogRecord(*args, **kwargs)

    before = logging.getLogRecordFactory()
    logging.setLogRecordFactory(factory)
    try:
        with caplog.at_level(logging.WARNING, "govsi.printable"):
            print_log_safely()
        assert logging.getLogRecordFactory() is factory
        assert "their control characters are not escaped" in caplog.text
    finally:
        logging.setLogRecordFactory(before)


def test_a_record_made_from_a_dict_keeps_its_traceback_escaped() -> None:
    # As logging.makeLogRecord and unpickling make records that crossed a process.
    record = PrintableRecord("govsi", logging.ERROR, __file__, 1, "x", None, None)
    record.__dict__.update({"msg": "failed \x9b", "exc_text": "Traceback\nValueError: \x1b[2J"})
    shown = logging.Formatter("%(message)s").format(record)
    assert shown == "failed \\x9b\nTraceback\nValueError: \\x1b[2J"
