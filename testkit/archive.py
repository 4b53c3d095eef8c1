"""What every crawl that writes a WARC archive must leave, however it went (killed, several
workers, crawldb away for a while): every file closed and valid to warcio, no record
twice, no exchange with more records than the server answered it, and every page crawldb
holds as fetched captured."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from pathlib import Path
from urllib.parse import urlsplit

from warcio.archiveiterator import ArchiveIterator

from testkit.crawl import query

Target = tuple[str, str]  # (host, path with its query), as the simulated web logs requests


def target_of(url: str) -> Target:
    parts = urlsplit(url)
    return parts.hostname or "", (parts.path or "/") + (f"?{parts.query}" if parts.query else "")


def check_archive(warc_dir: Path, db_url: str, served: Counter[Target]) -> list[Path]:
    """Check the archive in ``warc_dir`` against crawldb and what the server answered
    (``served``: requests by target, over every run that wrote the archive); its files."""
    files = sorted(warc_dir.iterdir())
    assert files and all(p.name.endswith(".warc.gz") for p in files), files
    check = [sys.executable, "-m", "warcio.cli", "check", *map(str, files)]
    assert subprocess.run(check, capture_output=True).returncode == 0
    captured: Counter[Target] = Counter()
    ids: list[str] = []
    for path in files:
        with open(path, "rb") as f:
            for r in ArchiveIterator(f):
                ids.append(r.rec_headers.get_header("WARC-Record-ID"))
                if r.rec_type in ("response", "revisit"):
                    captured[target_of(r.rec_headers.get_header("WARC-Target-URI"))] += 1
    assert len(ids) == len(set(ids))
    assert not captured - served, captured - served
    for url, ptype in query(db_url, "SELECT url, page_type_code FROM page"):
        if ptype in ("HTML", "BINARY", "DUPLICATE"):
            assert captured[target_of(url)] >= 1, url
    return files
