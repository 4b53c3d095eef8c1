"""The spider's duplicate check (DUPLICATE_DETECTION): is a fetched page a copy of one
stored already, or of one fetched a moment ago? The index (``govsi.copies.index``) answers
from memory and from crawldb; crawldb is asked in a thread of its own, so the reactor goes
on with other responses while the database answers (a remote one takes milliseconds)."""

from __future__ import annotations

import logging
from typing import Any

from lxml import etree
from scrapy.utils.defer import maybe_deferred_to_future
from sqlalchemy import Engine
from sqlalchemy.exc import SQLAlchemyError
from twisted.internet.threads import deferToThreadPool
from twisted.python.threadpool import ThreadPool

from govsi.copies.index import DuplicateIndex, Verdict
from govsi.copies.rekey import rekey
from govsi.dedup.question import Question
from govsi.dedup.signature import lsh_params
from govsi.stats import Count
from govsi.store.config import DuplicateConfig

__all__ = ["Copies"]

logger = logging.getLogger(__name__)


class Copies:
    def __init__(self, config: DuplicateConfig, count: Count) -> None:
        self.config = config
        self.count = count
        self.index: DuplicateIndex | None = None
        # One thread: the index keeps one connection, and lookups answer in order.
        self._lookups: ThreadPool | None = None

    def rekey(self, engine: Engine, max_tags: int) -> None:
        """Stored keys of another main-text definition made again (``rekey``), checked or
        not: revisits judge changes by them. Call it before any page is fetched, so that
        nothing is compared across definitions; a failure is logged, never fatal."""
        c = self.config
        bands, rows = lsh_params(c.threshold, c.num_perm)
        try:
            rekey(engine, max_tags=max_tags, num_perm=c.num_perm, shingle_size=c.shingle_size,
                  bands=bands, rows=rows)  # fmt: skip
        except SQLAlchemyError as e:
            logger.error("crawldb: stored keys could not be made again (%s); pages stored "
                         "before are compared with nothing until they are", e)  # fmt: skip

    def open(self, engine: Engine) -> None:
        """Check pages against crawldb at ``engine`` (the store's), when the crawl does."""
        if not self.config.enabled:
            return
        self.index = DuplicateIndex(
            engine,
            threshold=self.config.threshold,
            num_perm=self.config.num_perm,
            shingle_size=self.config.shingle_size,
        )

    def measures(self) -> dict[str, int] | None:
        """How a page's question is made elsewhere (``read_html``); None: pages are not
        checked."""
        return self.index.measures() if self.index is not None else None

    def retract(self, url: str) -> None:
        """A revisit fetched ``url`` anew: its stored version is no original any more
        (``DuplicateIndex.retract``)."""
        if self.index is not None:
            self.index.retract(url)

    async def verdict(
        self, url: str, text: str, root: etree._Element | None, asked: Question | None
    ) -> Verdict | None:
        """The page's verdict; None when pages are not checked, or when the check failed
        (then the page is kept as an original, never lost). ``asked``: the question the
        worker made for a page read there; else it is made here, from ``root``."""
        if self.index is None:
            return None
        try:
            if asked is None:
                asked = self.index.prepare(url, text, root)
            else:
                self.count("govsi/duplicates/in_worker")
            rows = await self._rows(asked) if self.index.needs_lookup(asked) else []
            return self.index.decide(asked, rows)
        except Exception:
            logger.exception("duplicate check of %s failed; keeping the page as it is", url)
            self.count("govsi/duplicates/check_failed")
            return None

    async def _rows(self, asked: Question) -> list[Any]:
        """crawldb's answer to ``asked`` (``DuplicateIndex.lookup``), from the lookup
        thread: one at a time, in the order asked."""
        assert self.index is not None
        # Imported here: importing the reactor at module level would install the default
        # one before Scrapy installs the configured one.
        from twisted.internet import reactor

        if self._lookups is None:
            self._lookups = ThreadPool(1, 1, name="govsi-duplicate-lookups")
            self._lookups.start()
        rows: list[Any] = await maybe_deferred_to_future(
            deferToThreadPool(reactor, self._lookups, self.index.lookup, asked)
        )
        return rows

    def close(self) -> None:
        if self._lookups is not None:
            self._lookups.stop()  # waits for a lookup in progress
        if self.index is not None:
            self.index.close()
