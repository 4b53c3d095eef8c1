"""The helper threads' wait for the GIL: the interval a crawl asks for, set while it runs
and put back when it closes."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest
from scrapy.exceptions import NotConfigured
from scrapy.utils.test import get_crawler

from govsi.health.switching import ThreadSwitching


@pytest.fixture(autouse=True)
def _interval_kept() -> Iterator[None]:
    before = sys.getswitchinterval()
    yield
    sys.setswitchinterval(before)


def test_the_interval_is_set_for_the_crawl_and_put_back_when_it_closes() -> None:
    sys.setswitchinterval(0.005)
    crawler = get_crawler(settings_dict={"GIL_SWITCH_INTERVAL": 0.0005})
    extension = ThreadSwitching.from_crawler(crawler)
    assert sys.getswitchinterval() == pytest.approx(0.0005)
    extension.spider_closed()
    assert sys.getswitchinterval() == pytest.approx(0.005)


def test_zero_leaves_pythons_interval_alone() -> None:
    sys.setswitchinterval(0.004)
    with pytest.raises(NotConfigured):
        ThreadSwitching.from_crawler(get_crawler(settings_dict={"GIL_SWITCH_INTERVAL": 0}))
    assert sys.getswitchinterval() == pytest.approx(0.004)
