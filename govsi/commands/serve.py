"""``scrapy serve``: the search page of the crawl, on a local web server.

scrapy serve                                   # http://127.0.0.1:8080/
scrapy serve --bind 127.0.0.1:9000
scrapy serve --bind [::1]:8080

http://127.0.0.1:8080/changes?q=uredba&since=7d     # the Changes page
http://127.0.0.1:8080/changes.atom?q=uredba&type=pdf  # its Atom feed, for a feed reader
"""

from __future__ import annotations

import argparse
import logging

from scrapy.commands import ScrapyCommand
from scrapy.exceptions import UsageError
from scrapy.utils.log import configure_logging

from govsi.commands.crawldb import read_crawldb
from govsi.printable import print_log_safely
from govsi.store import database

logger = logging.getLogger(__name__)


class Command(ScrapyCommand):
    requires_project = True
    requires_crawler_process = False
    default_settings = {"LOG_LEVEL": "INFO"}

    def syntax(self) -> str:
        return "[--bind HOST:PORT]"

    def short_desc(self) -> str:
        return "Serve the search page (after scrapy index) and the Changes page of the crawl"

    def long_desc(self) -> str:
        return (
            "A local, read-only web page over SEARCH_INDEX's index and CRAWLDB_URL's crawldb: "
            "query box, ranked results with marked snippets, facets by type and host, paging, "
            "each result's stored copy (sandboxed); the Changes page (/changes: what the "
            "crawl found new, changed, gone or moved, filtered, each change's diff) and its "
            "Atom feed (/changes.atom?q=...&type=pdf). SEARCH_SERVE_ADDRESS or --bind says where "
            "(default 127.0.0.1:8080). docs/search.md."
        )

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        super().add_options(parser)
        parser.add_argument("--bind", default=None, metavar="HOST:PORT",
                            help="address to listen on (default SEARCH_SERVE_ADDRESS)")  # fmt: skip

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        from govsi.changes.config import ChangesConfig
        from govsi.changes.pages import ChangesSite
        from govsi.search.config import SearchConfig
        from govsi.search.hostnames import bind_address
        from govsi.search.serve import SearchSite, make_server, server_url

        assert self.settings is not None
        configure_logging(self.settings)
        # Crawled strings (URLs, titles, servers' messages) reach the log.
        print_log_safely()
        config = SearchConfig.from_settings(self.settings)
        try:
            host, port = bind_address(opts.bind or self.settings.get("SEARCH_SERVE_ADDRESS"))
        except ValueError:
            raise UsageError("--bind HOST:PORT, e.g. 127.0.0.1:8080 or [::1]:8080") from None
        if not (config.folder / "state.sqlite3").is_file():
            # The Changes page and its feed need crawldb only; a search answers 503.
            logger.warning("no search index in %s yet: searches wait for scrapy index; "
                           "the Changes page works without it", config.folder)  # fmt: skip
        url = database.crawldb_url_of(self.settings)
        engine = read_crawldb(self, url, logger.error)
        if engine is None:
            return
        try:
            changes = ChangesSite(engine, ChangesConfig.from_settings(self.settings))
            server = make_server(
                SearchSite(engine, config, links=(("Spremembe", "/changes"),)), host, port,
                timeout=self.settings.getfloat("SEARCH_SERVE_TIMEOUT"),
                connections=self.settings.getint("SEARCH_SERVE_CONNECTIONS"),
                routes=(changes.route,),
            )  # fmt: skip
        except OSError as e:
            logger.error("cannot listen on %s port %d: %s", host, port, e)
            engine.dispose()
            self.exitcode = 1
            return
        logger.info("search page on %s, changes on %schanges, their feed %schanges.atom "
                    "(Ctrl-C to stop)", *[server_url(server)] * 3)  # fmt: skip
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
        finally:
            server.server_close()
            engine.dispose()
