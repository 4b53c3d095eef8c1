"""Items crawldb could not take before the crawl ended, kept in JSON-lines files and
loaded by the next run, oldest first."""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import json
import logging
import os
import time
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

from govsi.items import ITEM_TYPES, Item, PageText, Revisit


class ItemSink(Protocol):
    """Where replayed items go: ``CrawlWriter`` (declared here so this module needs no import
    of the writer, which imports it)."""

    def add(self, item: Item) -> None: ...

    def flush(self) -> bool: ...


logger = logging.getLogger(__name__)

# Files holding items that could not be written before the crawl ended.
SPILL_PREFIX = "crawldb-unwritten-"
SPILL_SUFFIX = ".jsonl"


SPILL_VERSION = 1


class SpillRefused(RuntimeError):
    """A spill file written for another crawldb."""


def default_spill_dir(crawldb_url: str) -> Path:
    """Beside an SQLite crawldb; else a per-user state folder. Never the working
    directory, which scrapyd shares between all its jobs."""
    from sqlalchemy.engine import make_url

    url = make_url(crawldb_url)
    if url.get_backend_name() == "sqlite" and url.database and url.database != ":memory:":
        return Path(url.database).resolve().parent
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state) / "govsi"


def save_spill(
    directory: str | Path, items: Sequence[Item], crawl_id: str = "", stamp: int = 0
) -> Path:
    """Write ``items`` to a new spill file in ``directory``, all or nothing: a temporary
    file, synced, then renamed, readable by this user only, its first line naming the
    crawldb (``crawl_id``) it belongs to. ``stamp`` (ns since the epoch, default now): when
    the items were taken, which orders the files for replay_spills."""
    folder = Path(directory)
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    path = folder / f"{SPILL_PREFIX}{stamp or time.time_ns()}-{os.getpid()}{SPILL_SUFFIX}"
    _write_whole(path, items, crawl_id)
    logger.warning("saved %d unwritten items to %s", len(items), path)
    return path


def _write_whole(path: Path, items: Sequence[Item], crawl_id: str) -> None:
    """``items`` as the spill file ``path``, all or nothing (over any file of that name)."""
    tmp = path.with_name(f".{path.name}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(json.dumps({"govsi_spill": SPILL_VERSION, "crawl_id": crawl_id}) + "\n")
            for item in items:
                fh.write(json.dumps(encode_item(item)) + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _sync_dir(path.parent)


def filter_spill(path: Path, keep: Callable[[Item], bool], crawl_id: str = "") -> int:
    """Keep in the spill file ``path`` only the items ``keep`` takes, all or nothing (it
    goes when none is left); how many were dropped. An OSError leaves it as it was."""
    items = read_spill(path, crawl_id)
    kept = [item for item in items if keep(item)]
    if len(kept) < len(items):
        if kept:
            _write_whole(path, kept, crawl_id)
        else:
            path.unlink()
    return len(items) - len(kept)


def _sync_dir(folder: Path) -> None:
    # The rename itself survives a power cut only once the folder is synced.
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        with contextlib.suppress(OSError):
            os.fsync(fd)
    finally:
        os.close(fd)


# The records a record holds, by the tag their fields are kept under.
_NESTED: dict[str, type[Revisit] | type[PageText]] = {"revisit": Revisit, "page_text": PageText}


def encode_item(item: Item) -> dict[str, Any]:
    out: dict[str, Any] = {"type": type(item).__name__}
    for field in dataclasses.fields(item):
        out[field.name] = _encode(getattr(item, field.name))
    return out


def _encode(v: Any) -> Any:
    if isinstance(v, bytes):
        return {"b64": base64.b64encode(v).decode()}
    if isinstance(v, datetime):
        return {"dt": v.isoformat()}
    for tag, kind in _NESTED.items():
        if isinstance(v, kind):
            return {tag: {f.name: _encode(getattr(v, f.name)) for f in dataclasses.fields(v)}}
    return v


def decode_item(row: dict[str, Any]) -> Item:
    kwargs = {k: _decode(v) for k, v in row.items() if k != "type"}
    return ITEM_TYPES[row["type"]](**kwargs)


def _decode(v: Any) -> Any:
    if isinstance(v, dict) and "b64" in v:
        return base64.b64decode(v["b64"])
    if isinstance(v, dict) and "dt" in v:
        return datetime.fromisoformat(v["dt"])
    if isinstance(v, dict) and len(v) == 1 and (tag := next(iter(v))) in _NESTED:
        return _NESTED[tag](**{k: _decode(x) for k, x in v[tag].items()})
    return v


def spill_files(directory: str | Path) -> list[Path]:
    return sorted(Path(directory).glob(f"{SPILL_PREFIX}*{SPILL_SUFFIX}"))


_CLAIMED = ".claimed-"


def _release_dead_claims(directory: Path) -> None:
    """Files a process claimed and then died with go back to the pool."""
    for path in directory.glob(f"{SPILL_PREFIX}*{SPILL_SUFFIX}{_CLAIMED}*"):
        pid = path.name.rpartition(_CLAIMED)[2]
        if pid.isascii() and pid.isdigit() and not _alive(int(pid)):
            # Another process may release it first.
            with contextlib.suppress(OSError):
                path.rename(path.with_name(path.name.rpartition(_CLAIMED)[0]))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def replay_spills(directory: str | Path, writer: ItemSink, crawl_id: str = "") -> int:
    """Load every spill file of this crawldb (``crawl_id``) in ``directory``, oldest
    first, deleting each once written. Each file is claimed by one process (an atomic
    rename), so processes starting together never load one twice. Files of another
    crawldb are left where they are, with an error in the log.

    Raises RuntimeError, keeping the file, when crawldb still cannot be written.
    """
    folder = Path(directory)
    if not folder.is_dir():
        return 0
    _release_dead_claims(folder)
    total = 0
    for path in spill_files(folder):
        claimed = path.with_name(f"{path.name}{_CLAIMED}{os.getpid()}")
        try:
            path.rename(claimed)
        except FileNotFoundError:
            continue  # another process took it
        try:
            n = replay(claimed, writer, crawl_id)
        except SpillRefused as e:
            claimed.rename(path)
            logger.error("%s", e)
            continue
        except BaseException:
            claimed.rename(path)
            raise
        claimed.unlink()
        logger.info("loaded %d items saved in %s when crawldb was unreachable", n, path)
        total += n
    return total


def set_spills_aside(directory: str | Path) -> list[Path]:
    """Rename spill files so they are never loaded (a fresh crawl must not get them)."""
    moved: list[Path] = []
    if not Path(directory).is_dir():
        return moved
    for path in spill_files(directory):
        target = path.with_name(path.name + ".discarded")
        path.rename(target)
        logger.warning("FRESH_START: %s is not loaded; kept as %s", path, target)
        moved.append(target)
    return moved


def read_spill(path: str | Path, crawl_id: str = "") -> list[Item]:
    """The items of a spill file. A damaged line (a file cut short, an edit) loses that
    line only; a file of another crawldb raises SpillRefused."""
    items: list[Item] = []
    with Path(path).open(encoding="utf-8", errors="replace") as fh:
        for number, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                if number == 1 and isinstance(row, dict) and "govsi_spill" in row:
                    owner = str(row.get("crawl_id") or "")
                    if crawl_id and owner and owner != crawl_id:
                        raise SpillRefused(
                            f"{path} belongs to another crawldb (crawl {owner}, this is "
                            f"{crawl_id}); not loaded. Load it with that crawldb, or delete it."
                        )
                    continue
                items.append(decode_item(row))
            except SpillRefused:
                raise
            except (ValueError, TypeError, KeyError) as e:
                logger.warning("%s, line %d: damaged, skipped (%s)", path, number, e)
    return items


def replay(path: str | Path, writer: ItemSink, crawl_id: str = "") -> int:
    """Load a spill file written by ``CrawlWriter.spill`` into crawldb."""
    items = read_spill(path, crawl_id)
    for item in items:
        writer.add(item)
    if not writer.flush():
        raise RuntimeError(f"crawldb still unreachable; {path} kept")
    return len(items)
