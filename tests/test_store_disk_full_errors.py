"""An error read as a full disk (``disk_full``): crawldb that cannot be opened, and ``scrapy
index``, say so in one line."""

from __future__ import annotations

import errno
import os
import sqlite3

import pytest

from govsi.store.database import disk_full


def _os(code: int) -> OSError:
    return OSError(code, os.strerror(code))


CASES: dict[str, tuple[BaseException, bool]] = {
    "ENOSPC": (_os(errno.ENOSPC), True),
    "a quota reached": (_os(errno.EDQUOT), True),
    "SQLite's words": (sqlite3.OperationalError("database or disk is full"), True),
    "PostgreSQL's words": (
        ValueError('could not extend file "base/16385/16413": No space left on device'),
        True,
    ),
    "Tantivy's words": (ValueError("Failed to write: No space left on device (os error 28)"), True),
    "permission denied": (_os(errno.EACCES), False),
    "a locked SQLite file": (sqlite3.OperationalError("database is locked"), False),
    "a bug": (ValueError("invalid literal"), False),
}


@pytest.mark.parametrize("case", CASES)
def test_a_full_disk_is_known_by_its_error(case: str) -> None:
    error, full = CASES[case]
    assert disk_full(error) is full
