"""Scrapy's add-on (ADDONS) for a govsi crawl: the settings the crawl fixes whatever else
is set, applied when Scrapy builds the crawler (``scrapy crawl``, scrapyd's runner, a test's
``get_crawler`` with the project's settings)."""

from __future__ import annotations

import logging

from scrapy.settings import BaseSettings

from govsi.render.config import configure as configure_rendering
from govsi.store.database import HidePasswords

__all__ = ["GovsiAddon"]


class GovsiAddon:
    """Sets what it sets at spider priority, as the spider's ``update_settings`` did: over
    settings.py, under ``-s``."""

    def update_settings(self, settings: BaseSettings) -> None:
        # Delays are the frontier's (govsi.frontier.scheduler), per host and per address,
        # counted from when a request reached the server; Scrapy's per-slot delay would add
        # to them.
        settings.set("DOWNLOAD_DELAY", 0, priority="spider")
        # Scrapy logs the settings a run overrides next, CRAWLDB_URL among them.
        for name in ("scrapy.crawler", "scrapy.addons"):
            log = logging.getLogger(name)
            if not any(isinstance(f, HidePasswords) for f in log.filters):
                log.addFilter(HidePasswords())
        configure_rendering(settings)
