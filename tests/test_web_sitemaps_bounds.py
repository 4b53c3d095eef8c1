"""One sitemap costs bounded work whatever it holds: reading stops at a limit on URLs,
bytes or elements of any kind, and says which one stopped it."""

from __future__ import annotations

import gzip
import random

import pytest

from govsi.web import sitemaps
from govsi.web.sitemaps import read_sitemap
from testkit.simweb.floodweb import gzipped

URL = "https://www.gov.si/sitemap.xml"
A, B = "https://www.gov.si/a", "https://www.gov.si/b"


def urlset(*locs: str) -> bytes:
    return ("<urlset>" + "".join(f"<url><loc>{u}</loc></url>" for u in locs)).encode()


@pytest.mark.parametrize(
    ("filler", "stopped"),
    [
        (b"<url/>", sitemaps.STOPPED_ELEMENTS),  # 8 M empty elements: 28 s of parsing
        (b"<a:b/>", sitemaps.STOPPED_ELEMENTS),  # elements of no sitemap kind count too
        (b"\n", sitemaps.STOPPED_ELEMENTS),  # a text sitemap of 50 M blank lines
    ],
    ids=["empty-url", "foreign", "blank-lines"],
)
def test_50_mb_of_empty_entries_stop_at_the_element_limit(
    monkeypatch: pytest.MonkeyPatch, filler: bytes, stopped: str
) -> None:
    monkeypatch.setattr(sitemaps, "MAX_ELEMENTS", 20_000)  # read as the worker reads it
    head = urlset(A) if filler != b"\n" else A.encode() + b"\n"
    body = gzipped(head, filler, 50 * 2**20, urlset(B)[len(b"<urlset>") :] + b"</urlset>")
    assert len(body) < 200_000
    found = read_sitemap(body, URL).sitemap
    assert found.urls == [A]
    assert found.truncated and found.stopped == stopped


@pytest.mark.parametrize(
    ("body", "max_urls", "stopped"),
    [
        (urlset(A, B) + b"</urlset>", 10, None),
        (urlset(A, B) + b"</urlset>", 1, sitemaps.STOPPED_URLS),
        (gzip.compress(urlset(A, B) + b"</urlset>"), 1, sitemaps.STOPPED_URLS),
        (f"{A}\n{B}\n".encode(), 1, sitemaps.STOPPED_URLS),
    ],
)
def test_the_limit_that_stopped_the_reading_is_named(
    body: bytes, max_urls: int, stopped: str | None
) -> None:
    found = read_sitemap(body, URL, max_urls=max_urls).sitemap
    assert found.stopped == stopped
    assert found.truncated == (stopped is not None)


def test_a_document_past_max_bytes_stops_at_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    body = urlset(A, B) + b"</urlset>"
    monkeypatch.setattr(sitemaps, "MAX_BYTES", body.index(B.encode()) + 10)
    found = read_sitemap(gzip.compress(body), URL).sitemap
    assert (found.urls, found.stopped) == ([A], sitemaps.STOPPED_BYTES)


def test_read_sitemap_gives_the_head_of_the_inflated_document() -> None:
    body = urlset(A, B) + b"</urlset>"
    read = read_sitemap(gzip.compress(body), URL, keep=12)
    assert (read.head, read.size, read.sitemap.urls) == (body[:12], len(body), [A, B])


def test_lines_are_splitlines_in_pieces(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(3)
    parts = ["\n", "\r", "\r\n", "\x0b", "\x85", "\u2028", " ", "ab", "c"]
    for chunk in (1, 2, 3, 5, 8):
        monkeypatch.setattr(sitemaps, "_FEED_CHUNK", chunk)
        for _ in range(500):
            text = "".join(rng.choice(parts) for _ in range(rng.randrange(30)))
            got = [line for line in sitemaps._lines(text) if line]
            expected = [line for line in text.splitlines() if line]
            # Whole lines only; one as long as a piece may be skipped (64 KiB: no URL).
            assert all(line in expected for line in got)
            assert [x for x in got if len(x) < chunk] == [x for x in expected if len(x) < chunk]
