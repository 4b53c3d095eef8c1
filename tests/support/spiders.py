"""A ``GovsiSpider`` built from the project's settings without its components (no crawldb
is opened), and responses handed to it, for tests of the spider's callbacks."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

from scrapy import Request
from scrapy.http import HtmlResponse, Response
from scrapy.utils.test import get_crawler

import govsi.settings
from govsi.spiders.govsi import GovsiSpider
from tests.support.stats import DictStats

# The crawl's settings, without its components, and pages read here: a worker's answer
# comes back through the reactor, which these tests do not run (so documents' text, read
# in the worker, is off unless a test hands the spider a worker of its own).
PROJECT = {k: v for k, v in vars(govsi.settings).items() if k.isupper()}
PROJECT.update(EXTENSIONS={}, ITEM_PIPELINES={}, ADDONS={}, WORKER_MIN_PAGE_CHARS=0,
               TEXT_EXTRACTION=False)  # fmt: skip


def spider(**settings: Any) -> tuple[GovsiSpider, DictStats]:
    crawler = get_crawler(GovsiSpider, {**PROJECT, "DUPLICATE_DETECTION": False, **settings})
    s = GovsiSpider.from_crawler(crawler)
    stats = DictStats()
    s.crawler = SimpleNamespace(stats=stats, get_extension=lambda cls: None)  # type: ignore[assignment]
    s.known = set()  # type: ignore[assignment]
    return s, stats


def respond(request: Request, status: int = 200, body: bytes = b"", **headers: str) -> Response:
    cls = HtmlResponse if headers.get("Content-Type", "").startswith("text/html") else Response
    return cls(request.url, status=status, body=body, headers=headers, request=request)


def parse(s: GovsiSpider, response: Response) -> list[Any]:
    return list(asyncio.run(s.parse_page(response)))
