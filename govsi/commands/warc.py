"""``scrapy warc pack``: index a crawl's WARC files and package them as a WACZ.

scrapy warc pack                               # WARC_DIR -> WARC_DIR/index.cdxj, crawl.wacz
scrapy warc pack -o /tmp/gov.wacz --title "gov.si 2026"
"""

from __future__ import annotations

import argparse
import logging
import time
from collections.abc import Iterator
from pathlib import Path

from scrapy.commands import ScrapyCommand
from scrapy.exceptions import UsageError
from scrapy.utils.log import configure_logging
from sqlalchemy import Engine, select

from govsi.archive.pack import PageEntry, pack, title_of
from govsi.commands.crawldb import read_crawldb
from govsi.printable import print_log_safely
from govsi.store import database
from govsi.store.schema import PAGE

logger = logging.getLogger(__name__)


def html_pages(engine: Engine) -> Iterator[PageEntry]:
    """The crawl's HTML pages fetched with success, with their titles, streamed."""
    query = (
        select(PAGE.c.url, PAGE.c.html_content)
        .where(PAGE.c.page_type_code == "HTML", PAGE.c.http_status_code == 200)
        .order_by(PAGE.c.id)
    )
    with engine.connect() as conn:
        for url, content in conn.execution_options(yield_per=500).execute(query):
            yield PageEntry(url, title_of(content))


class Command(ScrapyCommand):
    requires_project = True
    requires_crawler_process = False
    default_settings = {"LOG_LEVEL": "INFO"}

    def syntax(self) -> str:
        return "pack [-o FILE.wacz] [--title TITLE]"

    def short_desc(self) -> str:
        return "Index the crawl's WARC files (CDXJ) and package them as a WACZ for replay"

    def long_desc(self) -> str:
        return (
            "Reads WARC_DIR's closed files, writes index.cdxj beside them (cdxj-indexer) and "
            "a WACZ package (py-wacz) whose pages.jsonl lists crawldb's HTML pages with their "
            "titles; ReplayWeb.page opens it, pywb replays the files. docs/archive.md."
        )

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        super().add_options(parser)
        parser.add_argument("-o", "--output", metavar="FILE", default=None,
                            help="the WACZ to write (default: WARC_DIR/crawl.wacz)")  # fmt: skip
        parser.add_argument("--title", default="", help="the package's title")

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        if args != ["pack"]:
            raise UsageError("say what to do: scrapy warc pack")
        assert self.settings is not None
        s = self.settings
        configure_logging(s)
        # Crawled strings (URLs, titles, servers' messages) reach the log.
        print_log_safely()
        directory = (s.get("WARC_DIR") or "").strip()
        if not directory:
            raise UsageError("WARC_DIR is not set: -s WARC_DIR=the crawl's archive folder")
        url = database.crawldb_url_of(s)
        output = Path(opts.output or Path(directory) / "crawl.wacz")
        started = time.monotonic()
        engine = read_crawldb(self, url, lambda line: logger.error("warc pack: %s", line))
        if engine is None:
            return
        try:
            index, wacz = pack(directory, output, html_pages(engine), opts.title)
        except (FileNotFoundError, RuntimeError) as e:
            logger.error("warc pack: %s", e)
            self.exitcode = 1
            return
        finally:
            engine.dispose()
        logger.info("indexed into %s and packed into %s in %.1f s", index, wacz.resolve(),
                    time.monotonic() - started)  # fmt: skip
