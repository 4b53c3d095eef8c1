"""Scrapy extension ``ThreadSwitching``: the crawl's helper threads get the GIL within
``GIL_SWITCH_INTERVAL`` instead of Python's 5 ms.

The reactor's thread holds the GIL nearly all the time in a fast crawl. A thread that
wakes (a worker process's outcome arrived, a duplicate lookup or a crawldb write returned)
waits for the switch interval before it runs, and each page passes several of them, so
a page read in the worker process waited there far longer at Python's interval, and a
host's next level of pages waited with it (bench/README, ``GIL_SWITCH_INTERVAL``).
``sys.setswitchinterval`` is process-wide; it is set when the extension is built and put
back when the spider closes.
"""

from __future__ import annotations

import sys

from scrapy import signals
from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured

__all__ = ["ThreadSwitching"]


class ThreadSwitching:
    def __init__(self) -> None:
        self.previous = sys.getswitchinterval()

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> ThreadSwitching:
        interval = crawler.settings.getfloat("GIL_SWITCH_INTERVAL")
        if interval <= 0:
            raise NotConfigured
        extension = cls()
        sys.setswitchinterval(interval)
        crawler.signals.connect(extension.spider_closed, signal=signals.spider_closed)
        return extension

    def spider_closed(self) -> None:
        sys.setswitchinterval(self.previous)
