"""The page ids of URLs crawldb holds, remembered by the writer for the links it writes.

A page of a ministry links its menu (tens to hundreds of URLs) on every page, and every
link is a page row: without memory, each batch inserts (ignored) and reads back the rows of
URLs it wrote a second ago. A URL's id never changes once committed (page rows are never
deleted), so the ids of the latest ``capacity`` URLs are kept, and only new URLs go to the
database. Ids read or inserted in a transaction count only once it commits. A URL is held by
its 64-bit fingerprint (``govsi.web.urls.fingerprint``), not its text: an entry's size is
the same whatever the URL's length (as text, it would grow with it, up to MAX_URL_LENGTH).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable

from govsi.web.urls import fingerprint

__all__ = ["PageIds"]


class PageIds:
    def __init__(self, capacity: int) -> None:
        """``capacity``: URLs remembered, the least recently used forgotten first (0: none)."""
        self.capacity = max(0, capacity)
        self._ids: OrderedDict[int, int] = OrderedDict()
        self._staged: dict[int, int] = {}

    def __len__(self) -> int:
        return len(self._ids)

    def known(self, urls: Iterable[str]) -> dict[str, int]:
        """The committed ids of those of ``urls`` remembered (each becomes the most recent)."""
        ids = self._ids
        found: dict[str, int] = {}
        for url in urls:
            key = fingerprint(url)
            pid = ids.get(key)
            if pid is not None:
                ids.move_to_end(key)
                found[url] = pid
        return found

    def stage(self, ids: dict[str, int]) -> None:
        """Ids the current transaction read or inserted: remembered if it commits."""
        if self.capacity:
            self._staged.update((fingerprint(url), pid) for url, pid in ids.items())

    def commit(self) -> None:
        ids = self._ids
        ids.update(self._staged)
        self._staged = {}
        while len(ids) > self.capacity:
            ids.popitem(last=False)

    def rollback(self) -> None:
        """The transaction failed: what it staged may not exist."""
        self._staged = {}
