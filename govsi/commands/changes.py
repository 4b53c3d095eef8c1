"""``scrapy changes``: the pages the crawl found new, changed, gone or moved, newest first.

scrapy changes                                   # the last 7 days
scrapy changes --since 7d uredba                 # about a topic (Slovenian words, any form)
scrapy changes --since 2026-11-01 --host www.gov.si --type pdf,docx --kind new,changed
scrapy changes --json -q "javna naročila" --limit 100
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import UTC, datetime
from typing import Any

from scrapy.commands import ScrapyCommand
from scrapy.exceptions import UsageError
from scrapy.utils.log import configure_logging

from govsi.changes.config import ChangesConfig
from govsi.changes.query import ChangeEntry, ChangeFilter, ChangeList, find_changes
from govsi.commands.crawldb import read_crawldb
from govsi.printable import json_printable, print_log_safely, printable
from govsi.store import database

__all__ = ["Command", "to_json", "to_terminal"]

# Changes one list shows at most: their texts are read and diffed (within
# CHANGES_EXCERPT_BUDGET) even when the budget is spent.
MAX_LIMIT = 1_000


class Command(ScrapyCommand):
    requires_project = True
    requires_crawler_process = False
    default_settings = {"LOG_LEVEL": "WARNING"}

    def syntax(self) -> str:
        return "[--since 7d] [--until T] [--host H] [--type T] [--kind K] [--json] [QUERY]"

    def short_desc(self) -> str:
        return "List the pages the crawl found new, changed, gone or moved"

    def long_desc(self) -> str:
        return (
            "The crawl's changes, newest first: time, kind, URL, title, and the first words "
            "added (+) and removed (-). QUERY (or -q) keeps changes whose title, URL or text "
            "has every word, matched the Slovenian way (any inflection, diacritics optional). "
            "--json prints [{id, url, change, time, title, host, type, added, removed}]. "
            "docs/changes.md."
        )

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        super().add_options(parser)
        parser.add_argument(
            "--since",
            default="7d",
            help="from when: 30m, 12h, 7d, 2w or an ISO date/time (default 7d)",
        )
        parser.add_argument("--until", default="", help="until when (the same forms)")
        parser.add_argument(
            "--host", action="append", default=[], help="only this host (repeat, or a comma list)"
        )
        parser.add_argument(
            "--type",
            action="append",
            default=[],
            help="only these page types: html, pdf, doc, docx, ppt, pptx",
        )
        parser.add_argument(
            "--kind",
            action="append",
            default=[],
            help="only these changes: new, changed, gone, moved",
        )
        parser.add_argument("-q", "--query", default="", help="search words (or as arguments)")
        parser.add_argument("--limit", type=int, default=50, help="changes at most (default 50)")
        parser.add_argument(
            "--before",
            type=int,
            default=None,
            help="the changes older than this change id (the next page)",
        )
        parser.add_argument("--json", action="store_true", help="print one JSON list")  # fmt: skip

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        assert self.settings is not None
        flt = _filter(args, opts, datetime.now(UTC).replace(tzinfo=None))
        if not 1 <= opts.limit <= MAX_LIMIT:
            raise UsageError(f"--limit must be between 1 and {MAX_LIMIT}")
        configure_logging(self.settings)
        print_log_safely()
        config = ChangesConfig.from_settings(self.settings)
        url = database.crawldb_url_of(self.settings)
        engine = read_crawldb(self, url, lambda line: print(line, file=sys.stderr))
        if engine is None:
            return
        try:
            found = find_changes(engine, flt, limit=opts.limit, before=opts.before,
                                 config=config)  # fmt: skip
        finally:
            engine.dispose()
        if opts.json:
            # Control characters from the crawl as JSON escapes: the same value, safe to
            # see on a terminal.
            print(json_printable(json.dumps(to_json(found.entries), ensure_ascii=False, indent=1)))
        else:
            print(to_terminal(found.entries), end="")
        for line in _notes(found, config):
            print(line, file=sys.stderr)


def _filter(args: list[str], opts: argparse.Namespace, now: datetime) -> ChangeFilter:
    """The filter the options name; a bad one is a UsageError (its message, no traceback)."""
    params = {
        "q": " ".join([opts.query, *args]),
        "since": opts.since,
        "until": opts.until,
        "host": ",".join(opts.host),
        "type": ",".join(opts.type),
        "kind": ",".join(opts.kind),
    }
    try:
        return ChangeFilter.from_params(params, now)
    except ValueError as e:
        raise UsageError(str(e)) from None


def _notes(found: ChangeList, config: ChangesConfig) -> list[str]:
    notes = []
    if found.stopped:
        notes.append(
            f"read the newest {found.scanned} changes in the window (CHANGES_SCAN_MAX "
            f"{config.scan_max}): more may match further back; narrow the window (--since, "
            "--until, --host, --kind, --type)"
        )
    if found.next_before is not None:
        notes.append(f"more: --before {found.next_before}")
    return notes


def _iso(when: datetime) -> str:
    return when.replace(tzinfo=UTC).isoformat().replace("+00:00", "Z")


def to_json(entries: list[ChangeEntry]) -> list[dict[str, Any]]:
    """The changes as plain values: ``time`` in ISO 8601 UTC; ``change`` the kind; ``type``
    html, pdf, ... or null; ``added``/``removed`` the excerpts (printable)."""
    return [
        {"id": e.id, "url": e.url, "change": e.kind, "time": _iso(e.time), "title": e.title,
         "host": e.host, "type": e.doc_type, "added": e.added, "removed": e.removed}
        for e in entries
    ]  # fmt: skip


def to_terminal(entries: list[ChangeEntry]) -> str:
    """The changes as lines for a terminal, a block each: time (UTC), kind, URL; the
    title; "+ " the words added, "- " those removed. Every crawled string ``printable``."""
    if not entries:
        return "no changes\n"
    blocks = []
    for e in entries:
        lines = [f"{e.time:%Y-%m-%d %H:%M}  {e.kind:7s}  {printable(e.url)}"]
        if e.title:
            lines.append(f"  {printable(' '.join(e.title.split()))}")
        if e.added:
            lines.append(f"  + {e.added}")
        if e.removed:
            lines.append(f"  - {e.removed}")
        blocks.append("\n".join(lines) + "\n")
    return "\n".join(blocks)
