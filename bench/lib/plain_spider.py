"""A minimal plain Scrapy spider, the baseline govsi is compared with in the benchmarks.

It follows every ``<a href>`` to a host under the allowed suffixes, and nothing else (no
images, no sitemaps); everything else is Scrapy's defaults unless set with ``-s``. Run it
with ``scrapy runspider`` from a directory without a ``scrapy.cfg``:

    GOVSI_TEST_HOSTS='{"a.gov.si": "127.0.0.2"}' PYTHONPATH=. \\
    scrapy runspider bench/lib/plain_spider.py -a seeds=http://a.gov.si/ \\
        -s TWISTED_DNS_RESOLVER=testkit.simweb.resolver.SimWebResolver

With ``-a typical=1`` it is instead the typical breadth-first spider issue 30 compares CPU
per page with: a ``LinkExtractor`` over every page (its links in scope followed), Scrapy's
default dupefilter, breadth-first queues (``TYPICAL_SETTINGS``) and a JSON feed of the
pages (URL, status, title and HTML) to ``pages.json`` in its directory.

With ``-s PLAIN_STATS_FILE=path`` the crawl's stats are written there as JSON every
``PLAIN_STATS_INTERVAL`` seconds (default 2) and when the crawl ends, so that a
benchmark can watch ``scheduler/enqueued`` (URLs known) while the crawl runs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from typing import Any
from urllib.parse import urlsplit

import scrapy
from scrapy import signals
from scrapy.crawler import Crawler
from scrapy.http import Response, TextResponse
from twisted.internet import task

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


# What makes a Scrapy spider breadth-first (Scrapy's FAQ), and its JSON feed.
TYPICAL_SETTINGS: dict[str, object] = {
    "DEPTH_PRIORITY": 1,
    "SCHEDULER_DISK_QUEUE": "scrapy.squeues.PickleFifoDiskQueue",
    "SCHEDULER_MEMORY_QUEUE": "scrapy.squeues.FifoMemoryQueue",
    "FEEDS": json.dumps({"pages.json": {"format": "json", "encoding": "utf8"}}),
}


class PlainSpider(scrapy.Spider):
    name = "plain"

    def __init__(
        self,
        *args: Any,
        seeds: str = "",
        domains: str = "gov.si",
        typical: str = "",
        **kw: Any,
    ) -> None:
        super().__init__(*args, **kw)
        self.typical = typical not in ("", "0", "false")
        self.links: Any = None
        if self.typical:
            from scrapy.linkextractors import LinkExtractor

            self.links = LinkExtractor()
        self.seed_urls = [u.strip() for u in seeds.split(",") if u.strip()]
        self.suffixes = [d.strip().lower() for d in domains.split(",") if d.strip()]
        self._dump: task.LoopingCall | None = None
        self._stats_file = ""

    @classmethod
    def from_crawler(cls, crawler: Crawler, *args: Any, **kwargs: Any) -> PlainSpider:
        spider: PlainSpider = super().from_crawler(crawler, *args, **kwargs)
        spider._stats_file = crawler.settings.get("PLAIN_STATS_FILE", "")
        if spider._stats_file:
            crawler.signals.connect(spider._opened, signal=signals.spider_opened)
            crawler.signals.connect(spider._stopped, signal=signals.engine_stopped)
        return spider

    def _opened(self, spider: scrapy.Spider) -> None:
        interval = self.crawler.settings.getfloat("PLAIN_STATS_INTERVAL", 2.0)
        self._dump = task.LoopingCall(self._write_stats)
        self._dump.start(interval, now=True)

    def _stopped(self) -> None:
        if self._dump is not None and self._dump.running:
            self._dump.stop()
        self._write_stats()

    def _write_stats(self) -> None:
        tmp = self._stats_file + ".tmp"
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(self.crawler.stats.get_stats(), fh, default=str)
        os.replace(tmp, self._stats_file)

    def in_scope(self, url: str) -> bool:
        parts = urlsplit(url)
        host = (parts.hostname or "").lower()
        return parts.scheme in ("http", "https") and any(
            host == s or host.endswith("." + s) for s in self.suffixes
        )

    async def start(self) -> AsyncIterator[Any]:
        for url in self.seed_urls:
            yield scrapy.Request(url, callback=self.parse)

    def parse(self, response: Response) -> Iterator[Any]:
        if not isinstance(response, TextResponse):
            return
        if self.links is not None:
            yield {"url": response.url, "status": response.status,
                   "title": response.css("title::text").get(), "html": response.text}  # fmt: skip
            for link in self.links.extract_links(response):
                if self.in_scope(link.url):
                    yield scrapy.Request(link.url, callback=self.parse)
            return
        for href in response.css("a::attr(href)").getall():
            url = response.urljoin(href.strip())
            if self.in_scope(url):
                yield scrapy.Request(url, callback=self.parse)


def start_plain(
    hosts: dict[str, str],
    seeds: list[str],
    workdir: str,
    *,
    typical: bool = False,
    **settings: object,
) -> subprocess.Popen[bytes]:
    """``scrapy runspider`` this spider (the ``typical`` one when asked) in a subprocess
    against a simulated web whose host -> address map is ``hosts``; its log goes to
    ``workdir``/crawl.log and its stats to ``workdir``/stats.json. Scrapy's defaults apply
    except for ``settings``."""
    merged: dict[str, object] = {
        **(TYPICAL_SETTINGS if typical else {}),
        "TWISTED_DNS_RESOLVER": "testkit.simweb.resolver.SimWebResolver",
        "LOG_FILE": os.path.join(workdir, "crawl.log"),
        "LOG_LEVEL": "INFO",
        "PLAIN_STATS_FILE": os.path.join(workdir, "stats.json"),
        **settings,
    }
    cmd = [sys.executable, "-m", "scrapy", "runspider", os.path.join(HERE, "plain_spider.py")]
    cmd += ["-a", "seeds=" + ",".join(seeds)]
    if typical:
        cmd += ["-a", "typical=1"]
    for k, v in merged.items():
        cmd += ["-s", f"{k}={v}"]
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")]),
        "GOVSI_TEST_HOSTS": json.dumps(hosts),
    }
    # No project settings: from a directory without scrapy.cfg, Scrapy's defaults rule.
    env.pop("SCRAPY_SETTINGS_MODULE", None)
    with open(os.path.join(workdir, "output.txt"), "wb") as out:
        return subprocess.Popen(cmd, cwd=workdir, env=env, stdout=out, stderr=subprocess.STDOUT)
