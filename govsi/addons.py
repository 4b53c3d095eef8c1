"""Scrapy's add-on (ADDONS) for a govsi crawl: the settings the crawl fixes whatever else
is set, and the log's lines made printable (``govsi.printable``), applied when Scrapy
builds the crawler (``scrapy crawl``, scrapyd's runner, a test's ``get_crawler`` with the
project's settings)."""

from __future__ import annotations

import logging

from scrapy.settings import BaseSettings

from govsi.printable import print_log_safely
from govsi.render.config import configure as configure_rendering
from govsi.store.database import HidePasswords

__all__ = ["GovsiAddon", "unlisted_when_off"]

# Scrapy imports every component listed in a ``*_BASE`` setting before the component's
# ``from_crawler`` finds itself switched off; these cost memory for the whole crawl even
# then (the remote control's aiohttp, the cookies' tldextract and requests: bench/README,
# bench.memory).
# (switch, list, component): the component is left out of the list while the switch is off.
_IMPORTED_WHEN_OFF = (
    ("REMOTE_CONTROL_ENABLED", "EXTENSIONS_BASE", "scrapy.extensions.remote_control.RemoteControl"),
    ("COOKIES_ENABLED", "DOWNLOADER_MIDDLEWARES_BASE",
     "scrapy.downloadermiddlewares.cookies.CookiesMiddleware"),
)  # fmt: skip


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
        # Titles, URLs and servers' messages reach the log: their control characters are
        # escaped in every record (not by Scrapy's handler: the crawler installs a new one
        # after its add-ons and extensions are built).
        print_log_safely()
        configure_rendering(settings)
        for name, components in unlisted_when_off(settings).items():
            settings.set(name, components, priority="spider")


def unlisted_when_off(settings: BaseSettings) -> dict[str, dict[str, int]]:
    """The ``*_BASE`` component lists to set, each without the components whose switch is
    off in ``settings`` (``_IMPORTED_WHEN_OFF``). A switch turned on (``-s
    COOKIES_ENABLED=true``) keeps its component, and its list is not returned."""
    lists: dict[str, dict[str, int]] = {}
    for switch, name, component in _IMPORTED_WHEN_OFF:
        if settings.getbool(switch):
            continue
        listed = lists.setdefault(name, dict(settings.getdict(name)))
        listed.pop(component, None)
    return lists
