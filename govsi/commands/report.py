"""``scrapy report``: write the crawl report of CRAWLDB_URL's crawldb to a folder.

scrapy report                                  # ./report/index.html, report.json, csv/
scrapy report -o /tmp/r -a site=evem.gov.si    # another folder, another site's page graph
scrapy report -a seeds=gov.si,evem.gov.si      # say which sites are the seed sites
CRAWLDB_URL=postgresql+psycopg2://u@host/db scrapy report
"""

from __future__ import annotations

import argparse
import logging
import time
from pathlib import Path

from scrapy.commands import ScrapyCommand
from scrapy.exceptions import UsageError
from scrapy.utils.conf import arglist_to_dict
from scrapy.utils.log import configure_logging

from govsi.printable import print_log_safely
from govsi.store import database

logger = logging.getLogger(__name__)


class Command(ScrapyCommand):
    requires_project = True
    requires_crawler_process = False
    default_settings = {"LOG_LEVEL": "INFO"}

    def syntax(self) -> str:
        return "[-o FOLDER] [-a site=HOST] [-a seeds=HOST,...]"

    def short_desc(self) -> str:
        return "Write the crawl report (statistics, link graphs) of crawldb to a folder"

    def long_desc(self) -> str:
        return (
            "Reads CRAWLDB_URL (setting or environment) in one read-only snapshot, so it may "
            "run while a crawl writes, and writes index.html (self-contained), report.json, "
            "csv/ and SVG pictures to FOLDER. -a site=HOST: the site whose page link graph is "
            "drawn (default: the largest seed site); -a seeds=HOST,...: the seed sites "
            "(default: the sites of the crawl's depth-0 pages)."
        )

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        super().add_options(parser)
        parser.add_argument(
            "-o",
            "--output",
            metavar="FOLDER",
            default=None,
            help="folder to write the report to (default: REPORT_FOLDER)",
        )
        parser.add_argument(
            "-a",
            dest="args",
            action="append",
            default=[],
            metavar="NAME=VALUE",
            help="site=HOST or seeds=HOST,HOST,... (may be repeated)",
        )

    def process_options(self, args: list[str], opts: argparse.Namespace) -> None:
        super().process_options(args, opts)
        try:
            opts.args = arglist_to_dict(opts.args)
        except ValueError:
            raise UsageError("Invalid -a value, use -a NAME=VALUE", print_help=False) from None
        unknown = set(opts.args) - {"site", "seeds"}
        if unknown:
            raise UsageError(f"unknown -a {', '.join(sorted(unknown))}: use site= or seeds=")

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        # Imported here: Scrapy imports every command at every start, `scrapy crawl`
        # included, and the report's modules (jinja2, its queries) would slow every start.
        from govsi.report.build import ReportError, build_report, report_engine
        from govsi.report.output import write_report

        assert self.settings is not None
        s = self.settings
        configure_logging(s)
        # Crawled strings (URLs, titles, servers' messages) reach the log.
        print_log_safely()
        # The crawl's own reading of CRAWLDB_URL, so the report opens the crawl's crawldb.
        url = database.crawldb_url_of(s)
        folder = Path(opts.output or s.get("REPORT_FOLDER"))
        seeds = [x for x in opts.args.get("seeds", "").split(",") if x.strip()]
        started = time.monotonic()
        try:
            engine = report_engine(url)
            try:
                report = build_report(
                    engine,
                    seeds=seeds,
                    site=opts.args.get("site"),
                    max_sites=s.getint("REPORT_GRAPH_MAX_SITES"),
                    max_pages=s.getint("REPORT_SITE_GRAPH_MAX_PAGES"),
                )
            finally:
                engine.dispose()
        except ReportError as e:
            logger.error("report: %s", e)
            self.exitcode = 1
            return
        written = write_report(report, folder, html_rows=s.getint("REPORT_HTML_ROWS"))
        logger.info(
            "report of %s written to %s (%d files) in %.1f s",
            report.crawldb,
            (folder / "index.html").resolve(),
            len(written),
            time.monotonic() - started,
        )
