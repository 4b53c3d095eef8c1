"""Items crawldb could not take before the crawl ended, kept in JSON-lines files and
loaded by the next run, oldest first."""

from __future__ import annotations

import base64
import dataclasses
import json
import logging
import os
import time
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from govsi.items import ITEM_TYPES, Item

if TYPE_CHECKING:
    from govsi.storage import CrawlWriter

logger = logging.getLogger(__name__)

# Files holding items that could not be written before the crawl ended.
SPILL_PREFIX = "crawldb-unwritten-"
SPILL_SUFFIX = ".jsonl"


def save_spill(directory: str | Path, items: Sequence[Item]) -> Path:
    """Write ``items`` to a new spill file in ``directory``."""
    # Names sort in the order the files were written, for replay_spills.
    path = Path(directory) / f"{SPILL_PREFIX}{time.time_ns()}-{os.getpid()}{SPILL_SUFFIX}"
    with path.open("w", encoding="utf-8") as fh:
        for item in items:
            fh.write(json.dumps(encode_item(item)) + "\n")
    logger.error("saved %d unwritten items to %s", len(items), path)
    return path


def encode_item(item: Item) -> dict[str, Any]:
    out: dict[str, Any] = {"type": type(item).__name__}
    for k, v in dataclasses.asdict(item).items():
        if isinstance(v, bytes):
            v = {"b64": base64.b64encode(v).decode()}
        elif isinstance(v, datetime):
            v = {"dt": v.isoformat()}
        out[k] = v
    return out


def decode_item(row: dict[str, Any]) -> Item:
    kwargs: dict[str, Any] = {}
    for k, v in row.items():
        if k == "type":
            continue
        if isinstance(v, dict) and "b64" in v:
            v = base64.b64decode(v["b64"])
        elif isinstance(v, dict) and "dt" in v:
            v = datetime.fromisoformat(v["dt"])
        kwargs[k] = v
    return ITEM_TYPES[row["type"]](**kwargs)  # type: ignore[no-any-return]


def spill_files(directory: str | Path) -> list[Path]:
    return sorted(Path(directory).glob(f"{SPILL_PREFIX}*{SPILL_SUFFIX}"))


def replay_spills(directory: str | Path, writer: CrawlWriter) -> int:
    """Load every spill file in ``directory``, oldest first, deleting each once written.

    Raises RuntimeError, keeping the file, when crawldb still cannot be written.
    """
    total = 0
    for path in spill_files(directory):
        n = replay(path, writer)
        path.unlink()
        logger.info("loaded %d items saved in %s when crawldb was unreachable", n, path)
        total += n
    return total


def set_spills_aside(directory: str | Path) -> list[Path]:
    """Rename spill files so they are never loaded (a fresh crawl must not get them)."""
    moved = []
    for path in spill_files(directory):
        target = path.with_name(path.name + ".discarded")
        path.rename(target)
        logger.warning("FRESH_START: %s is not loaded; kept as %s", path, target)
        moved.append(target)
    return moved


def replay(path: str | Path, writer: CrawlWriter) -> int:
    """Load a spill file written by ``CrawlWriter.spill`` into crawldb."""
    with Path(path).open(encoding="utf-8") as fh:
        items = [decode_item(json.loads(line)) for line in fh if line.strip()]
    for item in items:
        writer.add(item)
    if not writer.flush():
        raise RuntimeError(f"crawldb still unreachable; {path} kept")
    return len(items)
