"""``scrapy search``: the best pages and documents of the crawl for a query.

scrapy search "javna naročila"
scrapy search "potrdilo o stalnem prebivališču" type:pdf site:gov.si after:2024
scrapy search --json "obcina" -n 20
"""

from __future__ import annotations

import argparse
import json
import sys

from scrapy.commands import ScrapyCommand
from scrapy.exceptions import UsageError
from scrapy.utils.log import configure_logging

from govsi.commands.crawldb import read_crawldb
from govsi.printable import json_printable, print_log_safely
from govsi.store import database


class Command(ScrapyCommand):
    requires_project = True
    requires_crawler_process = False
    default_settings = {"LOG_LEVEL": "WARNING"}

    def syntax(self) -> str:
        return '[--json] [-n N] [--page P] "QUERY"'

    def short_desc(self) -> str:
        return "Search the crawl's pages and documents (after scrapy index)"

    def long_desc(self) -> str:
        return (
            "Ranked search (BM25, Slovenian lemmas, diacritics optional) over the index "
            'scrapy index built. Words, "phrases", and filters host:HOST, site:DOMAIN, '
            "type:pdf|html|doc|docx|ppt|pptx, after:DATE, before:DATE (YYYY[-MM[-DD]]). "
            "--json prints [{url, title, score, snippet, type, host}]. docs/search.md."
        )

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        super().add_options(parser)
        parser.add_argument("--json", action="store_true", help="print the results as JSON")
        parser.add_argument("-n", type=int, default=10, help="results per page (default 10)")
        parser.add_argument("--page", type=int, default=1, help="which page of results")

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        from govsi.search.config import SearchConfig
        from govsi.search.index import SearchIndexError
        from govsi.search.results import search_page, to_json, to_terminal

        if not args:
            raise UsageError('say what to search for: scrapy search "QUERY"')
        assert self.settings is not None
        configure_logging(self.settings)
        print_log_safely()
        config = SearchConfig.from_settings(self.settings)
        if not (config.folder / "state.sqlite3").is_file():
            print(f"no search index in {config.folder}: run scrapy index first", file=sys.stderr)
            self.exitcode = 1
            return
        url = database.crawldb_url_of(self.settings)
        engine = read_crawldb(self, url, lambda line: print(line, file=sys.stderr))
        if engine is None:
            return
        try:
            page = search_page(engine, config, " ".join(args), max(1, opts.page), max(1, opts.n))
        except SearchIndexError as e:
            print(e, file=sys.stderr)
            self.exitcode = 1
            return
        finally:
            engine.dispose()
        if opts.json:
            # Control characters from the crawl as JSON escapes: the same value, but safe
            # to see on a terminal.
            print(json_printable(json.dumps(to_json(page), ensure_ascii=False, indent=1)))
        else:
            print(to_terminal(page, color=sys.stdout.isatty()))
