"""What a revisit saw (govsi.revisit.change) and the validators it keeps
(govsi.revisit.conditional), as tables: a change of main content, bytes, status, type or a
redirect's target is a change; a new footer date is not; a 304 is never one; validators that
lie cost nothing but a full answer."""

from __future__ import annotations

from datetime import datetime

import pytest

from govsi.dedup.signature import exact_key
from govsi.items import Revisit
from govsi.revisit.change import Version, answer, bytes_key, change, has_copy, outcome
from govsi.revisit.conditional import ETAG_MAX, conditional_headers, validator
from tests.support.govpages import NEWS_1, NEWS_2, semantic, soup

K1, K2 = "a" * 64, "b" * 64


def html(key: str | None, status: int = 200) -> Version:
    return Version("HTML", status, key)


@pytest.mark.parametrize(
    ("before", "after", "expected"),
    [
        # Main content: the key decides.
        (html(K1), html(K1), None),
        (html(K1), html(K2), "content"),
        # A copy is still an HTML page: the same main text is no change, another is.
        (html(K1), Version("DUPLICATE", 200, K1), None),
        (Version("DUPLICATE", 200, K1), html(K2), "content"),
        # Status: gone, moved, back.
        (html(K1), html(None, 404), "status"),
        (html(K1), html(None, 410), "status"),
        (html(K1), Version("HTML", 301, target="https://a.gov.si/nova"), "status"),
        (html(None, 404), html(K1), "status"),
        (html(None, 404), html(None, 404), None),  # an error page's text is no content
        # A redirect's content is where it leads.
        (Version("HTML", 301, target="u1"), Version("HTML", 301, target="u1"), None),
        (Version("HTML", 301, target="u1"), Version("HTML", 301, target="u2"), "target"),
        (Version("HTML", 301, target="u1"), Version("HTML", 302, target="u1"), "status"),
        # Type: a page became a document, a fetch error, or came back.
        (html(K1), Version("BINARY", 200, K1), "type"),
        (html(K1), Version("ERROR"), "type"),
        (Version("ERROR"), html(K1), "type"),
        (Version("ERROR"), Version("ERROR"), None),
        (Version("OTHER", 200), Version("OTHER", 200), None),
        # Documents: their bytes' key; unknown, their size; unknown too, no change.
        (Version("BINARY", 200, K1, 10), Version("BINARY", 200, K1, 10), None),
        (Version("BINARY", 200, K1, 10), Version("BINARY", 200, K2, 10), "content"),
        (Version("BINARY", 200, None, 10), Version("BINARY", 200, K2, 11), "content"),
        (Version("BINARY", 200, None, 10), Version("BINARY", 200, K2, 10), None),
        (Version("BINARY", 200, None, None), Version("BINARY", 200, K2, 10), None),
        # An HTML page whose key was never taken: learnt now, never a made-up change.
        (html(None), html(K1), None),
        # Nothing to change from: a URL not fetched before.
        (Version("FRONTIER"), html(K1), None),
        (Version(None), html(K1), None),
    ],
)
def test_what_is_a_change(before: Version, after: Version, expected: str | None) -> None:
    assert change(before, after) == expected


@pytest.mark.parametrize(
    ("one", "other", "changed"),
    [
        # A new date beside the article, a view counter: the template, not the content.
        (semantic(NEWS_1, "23. 11. 2026"), semantic(NEWS_1, "24. 11. 2026"), False),
        (soup(NEWS_1, counter=17), soup(NEWS_1, counter=18), False),
        (semantic(NEWS_1), semantic(NEWS_2), True),
        (soup(NEWS_1), soup(NEWS_2), True),
    ],
)
def test_boilerplate_is_no_change_content_is(one: str, other: str, changed: bool) -> None:
    # The key the duplicate check stores is the key a change is told by.
    found = change(html(exact_key(one)), html(exact_key(other)))
    assert (found == "content") is changed


def redirect(target: str, status: int = 301) -> Version:
    return Version("HTML", status, target=target)


@pytest.mark.parametrize(
    ("before", "after", "expected"),
    [
        # A URL never fetched: whatever it is now, it is new.
        (Version(None), html(K1), "new"),
        (Version("FRONTIER"), html(None, 404), "new"),
        (Version("FRONTIER"), redirect("u1"), "new"),
        # Fetched again, nothing that matters changed.
        (html(K1), html(K1), "same"),
        (html(None, 404), html(None, 404), "same"),
        (redirect("u1"), redirect("u1"), "same"),
        (Version("ERROR"), Version("ERROR"), "same"),  # still no answer: nothing new
        (html(None), html(K1), "same"),  # a key learnt is no change
        # Gone: now 404 or 410, after anything else.
        (html(K1), html(None, 404), "gone"),
        (html(K1), html(None, 410), "gone"),
        (redirect("u1"), html(None, 404), "gone"),
        (html(None, 404), html(None, 410), "gone"),
        (Version("BINARY", 200, K1), html(None, 404), "gone"),
        # Moved: now a redirect, or one leading elsewhere, or another kind of redirect.
        (html(K1), redirect("u1"), "moved"),
        (redirect("u1"), redirect("u2"), "moved"),
        (redirect("u1"), redirect("u1", 302), "moved"),
        (Version("BINARY", 200, K1), redirect("u1"), "moved"),
        # Changed: content, bytes, type, any other status (back from gone included).
        (html(K1), html(K2), "changed"),
        (Version("BINARY", 200, K1), Version("BINARY", 200, K2), "changed"),
        (html(K1), Version("BINARY", 200, K1), "changed"),
        (html(K1), html(None, 403), "changed"),
        (html(None, 404), html(K1), "changed"),
        (redirect("u1"), html(K1), "changed"),
        (Version("ERROR"), html(K1), "changed"),  # answers now
        (html(K1), Version("ERROR"), "changed"),
    ],
)
def test_what_a_visit_found(before: Version, after: Version, expected: str) -> None:
    assert outcome(before, after) == expected


def test_the_bytes_key_is_their_sha256() -> None:
    assert bytes_key(b"") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    assert bytes_key(b"%PDF-1") != bytes_key(b"%PDF-2")


GOOD = Revisit(etag='"v1"', page_type="HTML", http_status_code=200)
FAILED = Revisit(page_type="ERROR")
DOWN = Revisit(page_type="HTML", http_status_code=503)


@pytest.mark.parametrize(
    ("status", "conditional", "stored", "kind"),
    [
        (304, True, GOOD, "not_modified"),
        (304, True, None, "not_modified"),  # whoever asked conditionally had a copy
        # A 304 nobody asked for says nothing: the copy stays, the reason is kept.
        (304, False, GOOD, "failed"),
        (304, False, None, "failed"),
        (304, False, FAILED, "failed"),
        (200, True, GOOD, "fetched"),  # a new ETag on every response: read, compared
        (200, False, None, "fetched"),
        (404, True, GOOD, "fetched"),  # gone is an answer
        (301, True, GOOD, "fetched"),
        # A server down or throttling over a good copy: not the page's new state.
        (503, True, GOOD, "failed"),
        (429, False, GOOD, "failed"),
        (500, True, GOOD, "failed"),
        # ... but it is the first answer for a URL, or for a copy that was an error already.
        (503, False, None, "fetched"),
        (503, False, FAILED, "fetched"),
        (503, True, DOWN, "fetched"),
    ],
)
def test_what_an_answer_means(
    status: int, conditional: bool, stored: Revisit | None, kind: str
) -> None:
    got = answer(status, conditional=conditional, stored=stored)
    assert got.kind == kind
    assert (got.reason is not None) is (kind == "failed")


def test_a_304_to_an_unconditional_request_says_so() -> None:
    reason = answer(304, conditional=False, stored=GOOD).reason
    assert reason is not None and "unconditional" in reason


def test_a_copy_is_a_url_that_answered() -> None:
    assert has_copy(GOOD) and has_copy(DOWN)
    assert not has_copy(FAILED) and not has_copy(None)


@pytest.mark.parametrize(
    ("raw", "limit", "kept"),
    [
        (b'"5f3a-1b"', 1000, '"5f3a-1b"'),
        (b'W/"weak"', 1000, 'W/"weak"'),  # weak ones too: If-None-Match compares weakly
        (b"Tue, 24 Nov 2026 08:00:00 GMT", 200, "Tue, 24 Nov 2026 08:00:00 GMT"),
        # Kept byte for byte, even a date that does not parse: the server reads it, or not.
        (b"yesterday-ish", 200, "yesterday-ish"),
        (b'  "x"\t', 1000, '"x"'),  # surrounding whitespace is not part of a value
        (b'"\xc5\xa1"', 1000, '"š"'),  # UTF-8: Scrapy sends the same bytes back
        (b'"\xe8"', 1000, None),  # not UTF-8: it could not be sent back verbatim
        (b'"a\x00b"', 1000, None),
        (b"", 1000, None),
        (None, 1000, None),
        (b'"' + b"a" * 1000 + b'"', ETAG_MAX, None),  # cut short it would never match
    ],
)
def test_validators_kept_verbatim_or_not_at_all(
    raw: bytes | None, limit: int, kept: str | None
) -> None:
    assert validator(raw, limit) == kept


def test_the_stored_validators_go_back_verbatim() -> None:
    stored = Revisit(etag='W/"x"', last_modified="Tue, 24 Nov 2026 08:00:00 GMT",
                     accessed_time=datetime(2026, 11, 24))  # fmt: skip
    assert conditional_headers(stored) == {
        "If-None-Match": 'W/"x"',
        "If-Modified-Since": "Tue, 24 Nov 2026 08:00:00 GMT",
    }
    assert conditional_headers(Revisit(page_type="HTML")) == {}
    assert conditional_headers(None) == {}
