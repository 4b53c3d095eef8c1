"""The add-on's settings: Scrapy components switched off are not even imported; the
crawl's log lines printable."""

from __future__ import annotations

import logging
import subprocess
import sys
from pathlib import Path

import pytest
from scrapy.settings import Settings

from govsi.addons import GovsiAddon, unlisted_when_off
from govsi.printable import PrintableRecord
from testkit.crawl import project_env
from testkit.imports import loaded_after

REMOTE = "scrapy.extensions.remote_control.RemoteControl"
COOKIES = "scrapy.downloadermiddlewares.cookies.CookiesMiddleware"


def project(**overrides: object) -> Settings:
    s = Settings()
    s.setmodule("govsi.settings", priority="project")
    s.setdict(overrides, priority="cmdline")
    return s


@pytest.mark.parametrize(
    ("overrides", "extension_listed", "cookies_listed"),
    [
        ({}, False, False),
        ({"COOKIES_ENABLED": True}, False, True),
        ({"REMOTE_CONTROL_ENABLED": True}, True, False),
        ({"COOKIES_ENABLED": True, "REMOTE_CONTROL_ENABLED": True}, True, True),
    ],
)
def test_a_component_is_unlisted_only_while_its_switch_is_off(
    overrides: dict[str, object], extension_listed: bool, cookies_listed: bool
) -> None:
    s = project(**overrides)
    for name, components in unlisted_when_off(s).items():
        s.set(name, components, priority="spider")
    assert (REMOTE in s.getdict("EXTENSIONS_BASE")) is extension_listed
    assert (COOKIES in s.getdict("DOWNLOADER_MIDDLEWARES_BASE")) is cookies_listed
    # Everything else Scrapy lists stays.
    assert "scrapy.extensions.corestats.CoreStats" in s.getdict("EXTENSIONS_BASE")
    assert len(s.getdict("DOWNLOADER_MIDDLEWARES_BASE")) == 13 + cookies_listed


def test_nothing_to_leave_out_sets_nothing() -> None:
    assert unlisted_when_off(project(COOKIES_ENABLED=True, REMOTE_CONTROL_ENABLED=True)) == {}


def test_a_crawler_with_the_project_settings_never_imports_them(tmp_path: Path) -> None:
    # The remote control's aiohttp (~9 MB) and the cookies' tldextract and requests (~4 MB)
    # stay out of the crawl's memory: every listed component is loaded, as Scrapy does.
    code = (
        "from scrapy.utils.project import get_project_settings;"
        "from scrapy.utils.misc import load_object;"
        "from scrapy.utils.test import get_crawler;"
        "from scrapy.utils.conf import build_component_list;"
        "from scrapy.utils.reactor import install_reactor;"
        "install_reactor('twisted.internet.asyncioreactor.AsyncioSelectorReactor');"
        "from govsi.spiders.govsi import GovsiSpider;"
        "c = get_crawler(GovsiSpider, get_project_settings().copy_to_dict());"
        "names = ('EXTENSIONS', 'DOWNLOADER_MIDDLEWARES', 'SPIDER_MIDDLEWARES');"
        "[load_object(p) for n in names for p in build_component_list(c.settings.getwithbase(n))]"
    )
    assert loaded_after(code, ["aiohttp", "tldextract", "requests"], cwd=tmp_path) == []


def test_the_crawls_log_records_are_printable() -> None:
    before = logging.getLogRecordFactory()
    logging.setLogRecordFactory(logging.LogRecord)
    try:
        GovsiAddon().update_settings(project())
        assert logging.getLogRecordFactory() is PrintableRecord
        record = logging.makeLogRecord({"msg": "title %s", "args": ("\x1b]0;x\x07",)})
        assert record.getMessage() == "title \\x1b]0;x\\x07"
    finally:
        logging.setLogRecordFactory(before)


# A crawl of the project's settings (its add-on) whose spider logs what a server sent.
_CRAWL_LOGGING = """
import sys
import scrapy
from scrapy.crawler import CrawlerProcess
from scrapy.utils.project import get_project_settings

class Logs(scrapy.Spider):
    name = "logs"

    async def start(self):
        self.logger.warning("title %s", "\\x1b]0;pwned\\x07\\x9b2J")
        return
        yield

settings = get_project_settings()
settings.set("LOG_FILE", sys.argv[1])
settings.set("CRAWLDB_URL", sys.argv[2])
settings.set("SCHEDULER", "scrapy.core.scheduler.Scheduler")  # the frontier's needs govsi's
settings.set("DUPEFILTER_CLASS", "scrapy.dupefilters.RFPDupeFilter")
process = CrawlerProcess(settings)
process.crawl(Logs)
process.start()
"""


def test_a_crawls_log_file_gets_no_control_character(tmp_path: Path) -> None:
    # Scrapy installs its log handler again after the add-ons: the lines must still be
    # escaped in the file a crawl writes.
    log = tmp_path / "crawl.log"
    db = f"sqlite:///{tmp_path / 'crawldb.sqlite3'}"
    cmd = [sys.executable, "-c", _CRAWL_LOGGING, str(log), db]
    done = subprocess.run(
        cmd, cwd=tmp_path, env=project_env(), capture_output=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    text = log.read_bytes()
    assert b"title \\x1b]0;pwned\\x07\\x9b2J" in text
    assert b"\x1b" not in text and "\x9b".encode() not in text
