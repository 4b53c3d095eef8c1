"""``scrapy index``: build or update the search index of CRAWLDB_URL's crawldb.

scrapy index                                   # ./search-index (or SEARCH_INDEX)
scrapy index -s SEARCH_INDEX=/data/gov-index
"""

from __future__ import annotations

import argparse
import logging

from scrapy.commands import ScrapyCommand
from scrapy.utils.log import configure_logging

from govsi.commands.crawldb import read_crawldb
from govsi.store import database
from govsi.store.database import disk_full

logger = logging.getLogger(__name__)


class Command(ScrapyCommand):
    requires_project = True
    requires_crawler_process = False
    default_settings = {"LOG_LEVEL": "INFO"}

    def syntax(self) -> str:
        return ""

    def short_desc(self) -> str:
        return "Build or update the search index of crawldb (new and changed pages only)"

    def long_desc(self) -> str:
        return (
            "Reads the text of CRAWLDB_URL's pages and documents (page_text) into the search "
            "index in SEARCH_INDEX (default ./search-index): pages new or changed since the "
            "last run are (re)indexed, pages that lost their text are dropped, in-link counts "
            "refreshed; a page that cannot be indexed is skipped, logged and counted. "
            "docs/search.md."
        )

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        # Imported here: Scrapy imports every command at every start, `scrapy crawl` too.
        from govsi.search.config import SearchConfig
        from govsi.search.index import SearchIndex
        from govsi.search.update import log_skipped, update

        assert self.settings is not None
        configure_logging(self.settings)
        config = SearchConfig.from_settings(self.settings)
        url = database.crawldb_url_of(self.settings)
        engine = read_crawldb(self, url, logger.error)
        if engine is None:
            return
        try:
            index = SearchIndex.open_for_update(config.folder)
            try:
                done = update(engine, index,
                              lambda n, todo: logger.info("indexed %d of %d", n, todo),
                              config.processes, config.text_chars)  # fmt: skip
            finally:
                index.close()
        except Exception as e:
            if not disk_full(e):
                raise
            # Each batch goes in whole or not at all: the index answers as it stands.
            logger.error("search index %s not brought up to date: no space left on its disk "
                         "(%s); it answers as it stands, and `scrapy index` with room goes "
                         "on", config.folder.resolve(), e)  # fmt: skip
            self.exitcode = 1
            return
        finally:
            engine.dispose()
        logger.info(
            "search index %s: %d pages (re)indexed, %d dropped, %d unchanged, %d skipped,"
            " in %.1f s", config.folder.resolve(), done.added, done.removed, done.unchanged,
            done.skipped, done.seconds,
        )  # fmt: skip
        log_skipped(done)
