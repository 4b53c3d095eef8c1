"""The dupefilter admits each canonical URL once, pages and images apart."""

from __future__ import annotations

import pytest
from scrapy import Request

from govsi.frontier.seen import CanonicalDupeFilter
from govsi.requestmeta import KIND_IMAGE, KIND_PAGE, META_KIND


def page(url: str) -> Request:
    return Request(url, meta={META_KIND: KIND_PAGE})


def image(url: str) -> Request:
    return Request(url, meta={META_KIND: KIND_IMAGE})


@pytest.mark.parametrize(
    ("first", "second", "seen"),
    [
        (page("http://www.gov.si/a"), page("HTTP://WWW.GOV.SI:80/a#x"), True),
        (page("http://www.gov.si/?b=2&a=1"), page("http://www.gov.si/?a=1&b=2"), True),
        (page("http://www.gov.si/%7Ex"), page("http://www.gov.si/~x"), True),
        (page("http://www.gov.si/x/../a"), page("http://www.gov.si/a"), True),
        (page("http://www.gov.si"), page("http://www.gov.si/"), True),
        (page("http://www.gov.si/a"), page("https://www.gov.si/a"), False),
        (page("http://www.gov.si/a"), page("http://www.gov.si/a/"), False),
        (page("http://www.gov.si/a"), page("http://www.gov.si/A"), False),
        (page("http://www.gov.si/a"), page("http://evem.gov.si/a"), False),
        (page("http://www.gov.si/i.png"), image("http://www.gov.si/i.png"), False),
        (image("http://www.gov.si/i.png"), image("http://WWW.gov.si/i.png#z"), True),
    ],
)
def test_canonical_duplicates(first: Request, second: Request, seen: bool) -> None:
    df = CanonicalDupeFilter()
    assert df.request_seen(first) is False
    assert df.request_seen(second) is seen


def test_too_long_urls_are_dropped() -> None:
    df = CanonicalDupeFilter(max_url_length=60)
    assert df.request_seen(page("http://www.gov.si/" + "a" * 100)) is True
    assert df.request_seen(page("http://www.gov.si/short")) is False
