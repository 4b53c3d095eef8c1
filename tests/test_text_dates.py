"""A document's date kept only when plausible (``plausible_date``), at the boundary where
documents' values enter the crawl (``document_text``)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from govsi.text.dates import plausible_date
from govsi.text.documents import document_text
from govsi.text.limits import TextLimits
from testkit.simweb.documents import make_docx, make_pdf

NOW = datetime(2026, 11, 29, 11, 0, tzinfo=UTC)
EAST, WEST = timezone(timedelta(hours=2)), timezone(timedelta(hours=-5))


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, None),
        # Within the window: kept, in UTC.
        (datetime(2024, 1, 31, 11, tzinfo=UTC), datetime(2024, 1, 31, 11, tzinfo=UTC)),
        (datetime(2024, 1, 31, 11), datetime(2024, 1, 31, 11, tzinfo=UTC)),  # naive is UTC
        (datetime(2024, 1, 31, 13, tzinfo=EAST), datetime(2024, 1, 31, 11, tzinfo=UTC)),
        (datetime(1990, 1, 1, tzinfo=UTC), datetime(1990, 1, 1, tzinfo=UTC)),  # the first
        (NOW, NOW),
        (NOW + timedelta(days=1), NOW + timedelta(days=1)),  # a clock a day ahead
        # Outside: dropped.
        (datetime(1989, 12, 31, 23, 59, 59, tzinfo=UTC), None),
        (datetime(1990, 1, 1, 1, tzinfo=EAST), None),  # 1989-12-31 23:00 UTC
        (NOW + timedelta(days=1, seconds=1), None),
        (datetime(2027, 6, 1), None),
        (datetime(1601, 1, 1), None),  # Windows' zero
        (datetime(1970, 1, 1, tzinfo=UTC), None),  # Unix's zero
        (datetime(1980, 1, 1), None),  # DOS's zero
        (datetime(1, 1, 1), None),
        (datetime(9999, 12, 31, 23, 59, 59), None),  # "never"
        # An offset that takes it past Python's own range.
        (datetime(9999, 12, 31, 23, tzinfo=WEST), None),
        (datetime(1, 1, 1, tzinfo=EAST), None),
        # Past Tantivy's range (1677 to 2262) on either side.
        (datetime(1677, 1, 1), None),
        (datetime(2263, 1, 1), None),
    ],
)  # fmt: skip
def test_plausible_date(value: datetime | None, expected: datetime | None) -> None:
    got = plausible_date(value, NOW)
    assert got == expected
    assert got is None or got.tzinfo is UTC


def test_a_naive_now_is_utc_and_an_impossible_one_keeps_nothing() -> None:
    assert plausible_date(NOW, NOW.replace(tzinfo=None)) == NOW
    assert plausible_date(NOW, datetime.max) is None


@pytest.mark.parametrize(
    ("data", "kind", "expected"),
    [
        (make_pdf(["Besedilo"], "Naslov", "D:99991231235959"), "PDF", None),
        (make_pdf(["Besedilo"], "Naslov", "D:16010101000000Z"), "PDF", None),
        (make_pdf(["Besedilo"], "Naslov", "D:99991231235959-05'00'"), "PDF", None),
        (make_pdf(["Besedilo"], "Naslov", "D:20240131120000+01'00'"), "PDF",
         datetime(2024, 1, 31, 11, tzinfo=UTC)),
        (make_docx(["Besedilo"], "Naslov", "1601-01-01T00:00:00Z"), "DOCX", None),
        (make_docx(["Besedilo"], "Naslov", "9999-12-31T23:00:00-05:00"), "DOCX", None),
        (make_docx(["Besedilo"], "Naslov", "2024-02-01T10:00:00"), "DOCX",
         datetime(2024, 2, 1, 10, tzinfo=UTC)),
    ],
)  # fmt: skip
def test_a_documents_implausible_date_is_dropped_its_text_kept(
    data: bytes, kind: str, expected: datetime | None
) -> None:
    got = document_text(data, kind, TextLimits(), now=NOW)  # type: ignore[arg-type]
    assert (got.status, got.text, got.title, got.date) == ("ok", "Besedilo", "Naslov", expected)
