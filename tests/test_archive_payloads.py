"""Which payloads a revisit may refer to: the most recently written, bounded."""

from __future__ import annotations

from govsi.archive.payloads import Capture, Payloads


def cap(n: int) -> Capture:
    return Capture(f"http://a.gov.si/{n}", "2026-11-26T00:00:00Z", f"<urn:uuid:{n}>")


def test_a_written_payload_is_found_and_others_are_not() -> None:
    p = Payloads(10)
    p.written("sha1:A", cap(1))
    assert p.original("sha1:A") == cap(1)
    assert p.original("sha1:B") is None


def test_the_least_recently_used_goes_first() -> None:
    p = Payloads(2)
    p.written("sha1:A", cap(1))
    p.written("sha1:B", cap(2))
    assert p.original("sha1:A") == cap(1)  # A used: B is now the oldest
    p.written("sha1:C", cap(3))
    assert len(p) == 2
    assert p.original("sha1:B") is None
    assert p.original("sha1:A") == cap(1) and p.original("sha1:C") == cap(3)


def test_size_zero_remembers_nothing() -> None:
    p = Payloads(0)
    p.written("sha1:A", cap(1))
    assert p.original("sha1:A") is None and len(p) == 0
