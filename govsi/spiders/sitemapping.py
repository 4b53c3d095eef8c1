"""The sitemap half of GovsiSpider: sitemap requests (from robots.txt and sitemap
indexes), the URLs they list, and what is kept of the documents, within per-site budgets."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

from scrapy import Request
from scrapy.http import Response
from twisted.python.failure import Failure

from govsi.items import DiscoveredPage, SitemapFile
from govsi.requestmeta import KIND_SITEMAP, META_KIND, META_SITEMAP, META_URL
from govsi.web import sitemaps
from govsi.web.urls import host_of

logger = logging.getLogger(__name__)


class SitemapMixin:
    """Uses the spider's ``crawler``, ``admit``, ``page_request``, ``failure_reason``,
    ``max_size`` and the sitemap budgets and counters set in ``from_crawler``."""

    crawler: Any
    max_size: int
    sitemap_max_files: int
    sitemap_max_urls: int
    sitemap_store_max: int
    _sitemap_files: dict[str, int]
    _sitemap_urls: dict[str, int]
    _sitemap_stored: dict[str, int]

    def admit(self, url: str | None) -> str | None:
        raise NotImplementedError

    def page_request(self, url: str, depth: int) -> Request:
        raise NotImplementedError

    def failure_reason(self, failure: Failure) -> str:
        raise NotImplementedError

    def sitemap_request(self, url: str, site: str) -> Request | None:
        """The request for a sitemap of ``site`` (from its robots.txt or a sitemap index),
        or None when it is out of scope or the site's sitemap budget is spent."""
        target = self.admit(url)
        if target is None:
            return None
        taken = self._sitemap_files.get(site, 0)
        if taken >= self.sitemap_max_files:
            self.crawler.stats.inc_value("govsi/sitemaps/files_over_budget")
            return None
        self._sitemap_files[site] = taken + 1
        return Request(
            target,
            callback=self.parse_sitemap,
            errback=self.sitemap_failed,
            dont_filter=True,
            meta={
                META_KIND: KIND_SITEMAP,
                META_URL: target,
                "govsi_site": site,
                "dont_retry": True,
                # The protocol allows 50 MB per file, more than a page may be.
                "download_maxsize": max(self.max_size, sitemaps.MAX_BYTES),
            },
        )

    def parse_sitemap(self, response: Response) -> Iterator[Any]:
        site: str = response.meta["govsi_site"]
        url: str = response.meta[META_URL]
        left = self.sitemap_max_urls - self._sitemap_urls.get(site, 0)
        if response.status != 200 or left <= 0:
            self.crawler.stats.inc_value("govsi/sitemaps/skipped")
            return
        found = sitemaps.parse_sitemap(response.body, url, max_urls=left)
        if found.error:
            logger.warning("sitemap %s: %s", url, found.error)
            self.crawler.stats.inc_value("govsi/sitemaps/errors")
        self.crawler.stats.inc_value("govsi/sitemaps/files")
        yield from self._sitemap_file(site, url, sitemaps.gunzip(response.body))
        for child in found.sitemaps:
            request = self.sitemap_request(child, site)
            if request is not None:
                yield request
        self._sitemap_urls[site] = self._sitemap_urls.get(site, 0) + len(found.urls)
        # sitemaps.org: a sitemap lists its own host's URLs, and another host's only when
        # that host's robots.txt names it (then ``site`` is that host).
        hosts = {host_of(url), site}
        foreign = 0
        for listed in found.urls:
            if host_of(listed) not in hosts:
                foreign += 1
                continue
            page = self.admit(listed)
            if page is not None:
                self.crawler.stats.inc_value("govsi/sitemaps/urls")
                # One hop below the host's root page, whatever depth the sitemap came at.
                yield DiscoveredPage(url=page, depth=1)
                request = self.page_request(page, 1)
                # Queued after the pages links lead to at that depth (govsi.frontier.queue).
                request.meta[META_SITEMAP] = True
                yield request
        if foreign:
            self.crawler.stats.inc_value("govsi/sitemaps/other_host_ignored", foreign)
            logger.info("sitemap %s: %d URLs of other hosts ignored", url, foreign)

    def _sitemap_file(self, site: str, url: str, body: bytes) -> Iterator[SitemapFile]:
        # site.sitemap_content keeps what was read, up to SITEMAP_STORE_MAX_BYTES per site
        # (an index may lead to 100 files of 50 MB; a PostgreSQL text holds 1 GB at most).
        # The writer holds the same cap across runs. 0 = no limit.
        room = len(body)
        if self.sitemap_store_max > 0:
            room = self.sitemap_store_max - self._sitemap_stored.get(site, 0)
        if room <= 0:
            return
        text = body[:room].decode("utf-8", "replace").replace("\x00", "")
        if len(body) > room:
            text += "\n<!-- cut at SITEMAP_STORE_MAX_BYTES -->"
        self._sitemap_stored[site] = self._sitemap_stored.get(site, 0) + min(len(body), room)
        yield SitemapFile(site, url, text)

    def sitemap_failed(self, failure: Failure) -> None:
        logger.warning("sitemap %s: %s", failure.request.url, self.failure_reason(failure))  # type: ignore[attr-defined]
        self.crawler.stats.inc_value("govsi/sitemaps/errors")
