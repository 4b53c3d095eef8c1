"""The search index: a Tantivy index (BM25) in a folder beside crawldb, and the small
SQLite file there that remembers which version of each page it holds and each page's
in-links (the link prior), so that an update reads only what changed.

Fields: ``body`` and ``title`` hold each word's ``term`` (lemma, folded), ``body_ascii`` and
``title_ascii`` its ``ascii_term`` (what the word typed without diacritics becomes),
``body_stem`` and ``title_stem`` the ``stem`` of its folded form (its inflections, when
lemmagen3 gives them different lemmas); ``body_stem`` then every other key of the page
(``stem_field``: a query of several words asks each word there alone); ``body_pair`` the
``pairs`` of neighbouring common stems (chosen once per index, ``choose_common``): a
phrase of two common words is its pair term, a longer one is asked only of the pages
holding its pairs. Positions, for phrases, only in ``body_stem`` and the title's lemmas
and stems. ``page_id``, ``url``, ``host``, ``kind``, ``title_text`` and ``date`` are
stored for results; ``host``, ``kind``, ``domains`` and ``date`` filter and facet.
"""

from __future__ import annotations

import json
import logging
import sqlite3
from collections.abc import Iterable, Iterator
from concurrent.futures import Executor
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import tantivy

from govsi.search.analysis import Analysis, common_stems, stem, stems
from govsi.search.document import SearchDocument, domains
from govsi.search.fields import Analyzed, Failed, analyze_all, joined
from govsi.store.database import chunks

logger = logging.getLogger(__name__)

TEXT_FIELDS = ("body", "body_ascii", "body_stem", "body_pair", "title", "title_ascii", "title_stem")
# Tantivy's indexing memory: the writer flushes a segment when it is full.
WRITER_HEAP = 128 * 1024 * 1024


# Pages a pool's process analyses per job.
CHUNK = 200
# Common stems (whose neighbouring pairs get a term, ``body_pair``): those in at least this
# share of the pages of the index's first COMMON_FROM or more, at most COMMON_MOST of them.
# A phrase of two such words is in most pages word by word, in few as a phrase.
COMMON_SHARE = 0.1
COMMON_MOST = 1000
COMMON_FROM = 1000
# Vocabulary rows ``SearchIndex`` remembers having recorded (~210 bytes each, ~42 MB).
KNOWN_MOST = 200_000


@dataclass(frozen=True)
class Pending:
    """A batch on its way to the index: its documents and, as they are ready, their
    analyses (``SearchIndex.analysed``)."""

    docs: list[SearchDocument]
    pages: Iterator[Analyzed | Failed]


@dataclass(frozen=True)
class Written:
    """What one ``SearchIndex.write`` did: pages added, pages skipped (each logged)."""

    added: int
    skipped: int = 0


def _empty(folder: Path) -> None:
    """Remove the index's own files from ``folder`` (Tantivy's, listed in its
    ``.managed.json``, and the state file), nothing else the folder holds."""
    managed = folder / ".managed.json"
    names = json.loads(managed.read_text()) if managed.exists() else []
    names += [".managed.json", "meta.json", "state.sqlite3", "state.sqlite3-journal"]
    for name in names:
        if "/" not in name and not name.startswith(".."):
            (folder / name).unlink(missing_ok=True)


def schema(analysis: Analysis = "lemmas") -> tantivy.Schema:
    sb = tantivy.SchemaBuilder()
    sb.add_unsigned_field("page_id", stored=True, indexed=True, fast=True)
    # Phrases are matched by stems in the body, by lemmas or stems in the title: an ascii,
    # pair or body lemma term is only ever asked alone (the body's lemmas' positions were
    # a fifth of the index and a quarter of Tantivy's indexing). Other analyses have no
    # stems: their words keep positions.
    alone = ("body", "body_ascii", "body_pair", "title_ascii") if analysis == "lemmas" else ()
    for name in TEXT_FIELDS:
        positions = "freq" if name in alone else "position"
        sb.add_text_field(name, tokenizer_name="whitespace", index_option=positions)
    sb.add_text_field("title_text", stored=True, tokenizer_name="raw", index_option="basic")
    sb.add_text_field("url", stored=True, tokenizer_name="raw", index_option="basic")
    sb.add_text_field("host", stored=True, tokenizer_name="raw", fast=True)
    sb.add_text_field("domains", tokenizer_name="raw", index_option="basic")
    sb.add_text_field("kind", stored=True, tokenizer_name="raw", fast=True)
    sb.add_date_field("date", stored=True, indexed=True, fast=True)
    return sb.build()


class SearchIndexError(Exception):
    """The index cannot be searched: there is none, or another version's (the message
    says which, and what to run)."""


def _common(state: sqlite3.Connection) -> frozenset[str] | None:
    row = state.execute("SELECT value FROM meta WHERE key = 'common_stems'").fetchone()
    return frozenset(json.loads(row[0])) if row else None


@dataclass
class SearchIndex:
    """The index folder: Tantivy's files and ``state.sqlite3``."""

    path: Path
    index: tantivy.Index
    state: sqlite3.Connection
    analysis: Analysis = "lemmas"
    # The stems whose pairs are indexed (``choose_common``); None until chosen.
    common: frozenset[str] | None = None
    # One writer for every ``write`` until ``close``: a writer per batch waited for its
    # merges each time (half of a rebuild's time).
    _writer: Any = None
    # Vocabulary rows this process has recorded (at most KNOWN_MOST): a rebuild meets the
    # same words in every batch, and writing them again was a tenth of its main thread.
    _known: set[tuple[str, str]] = field(default_factory=set)

    # Opened by ``open_for_update``: readers (``open``) never write, and refuse to.
    writable: bool = False

    @classmethod
    def open(cls, path: str | Path, analysis: Analysis = "lemmas") -> SearchIndex:
        """Open the index at ``path`` to search it, read-only: a missing index or one of
        another version's fields raises ``SearchIndexError``, never made or emptied (a
        reader's ``write`` raises too)."""
        folder = Path(path)
        state_file = folder / "state.sqlite3"
        if not (folder / "meta.json").is_file() or not state_file.is_file():
            raise SearchIndexError(f"no search index in {folder}: run scrapy index first")
        try:
            index = tantivy.Index.open(str(folder))
        except (OSError, ValueError) as e:
            raise SearchIndexError(f"the search index in {folder} cannot be read: {e}") from e
        if index.schema != schema(analysis):
            raise SearchIndexError(
                f"the search index in {folder} has another version's fields: scrapy index"
                " of this version builds it again"
            )
        try:
            state = sqlite3.connect(f"{state_file.resolve().as_uri()}?mode=ro", uri=True)
            common = _common(state)
        except sqlite3.Error as e:
            raise SearchIndexError(f"the search index in {folder} cannot be read: {e}") from e
        return cls(folder, index, state, analysis, common)

    @classmethod
    def open_for_update(cls, path: str | Path, analysis: Analysis = "lemmas") -> SearchIndex:
        """Open the index at ``path`` to write it, made empty if there is none or if its
        fields are another version's (the update builds it again)."""
        folder = Path(path)
        folder.mkdir(parents=True, exist_ok=True)
        try:
            index = tantivy.Index(schema(analysis), path=str(folder), reuse=True)
        except ValueError as e:
            if "schema does not match" not in str(e):
                raise
            logger.warning(
                "The search index in %s has another version's fields: emptied, the next"
                " update (scrapy index) builds it again", folder,
            )  # fmt: skip
            _empty(folder)
            index = tantivy.Index(schema(analysis), path=str(folder), reuse=True)
        state = sqlite3.connect(folder / "state.sqlite3")
        state.executescript(
            "CREATE TABLE IF NOT EXISTS indexed (page_id INTEGER PRIMARY KEY, mark TEXT);"
            "CREATE TABLE IF NOT EXISTS inlinks (page_id INTEGER PRIMARY KEY, n INTEGER);"
            "CREATE TABLE IF NOT EXISTS writing (page_id INTEGER PRIMARY KEY);"
            "CREATE TABLE IF NOT EXISTS vocabulary (folded TEXT, term TEXT,"
            " PRIMARY KEY (folded, term)) WITHOUT ROWID;"
            "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);"
        )
        return cls(folder, index, state, analysis, _common(state), writable=True)

    def _writing(self) -> None:
        if not self.writable:
            raise SearchIndexError(f"the search index in {self.path} was opened to be read")

    def needs_common(self, pages: int) -> bool:
        """Whether the common stems are still to be chosen, with ``pages`` to choose from."""
        return self.common is None and self.analysis == "lemmas" and pages >= COMMON_FROM

    def choose_common(self, docs: Iterable[SearchDocument]) -> bool:
        """Choose the common stems once, from ``docs`` (COMMON_FROM or more, read one at a
        time; True when chosen): pair terms must be in every page written after, so the
        choice is kept in the state file. Pages already held are marked changed, for the
        update to write them again with their pairs."""
        if not self.needs_common(COMMON_FROM):
            return False
        read = 0

        def texts() -> Iterator[list[str]]:
            nonlocal read
            for doc in docs:
                read += 1
                yield stems(doc.text)

        common = common_stems(texts(), COMMON_SHARE, COMMON_MOST)
        if not self.needs_common(read):
            return False
        self._writing()
        with self.state:
            self.state.execute(
                "INSERT OR REPLACE INTO meta VALUES ('common_stems', ?)",
                (json.dumps(sorted(common)),),
            )
            self.state.execute("UPDATE indexed SET mark = ''")
        self.common = common
        logger.info("search index: %d common stems, their pairs indexed", len(common))
        return True

    def close(self) -> None:
        """Wait for the segments' merges (the commits are already durable) and let go."""
        if self._writer is not None:
            self._writer.wait_merging_threads()
            self._writer = None
        self.state.close()

    def marks(self) -> dict[int, str]:
        """The version mark of every page the index holds."""
        return dict(self.state.execute("SELECT page_id, mark FROM indexed"))

    def analysed(self, batch: Iterable[SearchDocument], pool: Executor | None = None) -> Pending:
        """``docs`` analysed: by ``pool``'s processes, in chunks of ``CHUNK``, submitted now
        (the analysis is the cost and holds the GIL), so the next batch's analysis runs
        while this one is written; in this process, as it is read, without one."""
        docs = list(batch)
        if self.needs_common(len(docs)) and not self._holds_any():
            self.choose_common(docs)
        parts = [docs[i : i + CHUNK] for i in range(0, len(docs), CHUNK)]
        job = partial(analyze_all, analysis=self.analysis, common=self.common or frozenset())
        if pool is None:
            return Pending(docs, (page for part in parts for page in joined(part, job(part))))
        futures = [(part, pool.submit(job, part)) for part in parts]
        return Pending(docs, (page for part, f in futures for page in joined(part, f.result())))

    def write(
        self,
        add: Iterable[SearchDocument] | Pending,
        remove: Iterable[int],
        pool: Executor | None = None,
    ) -> Written:
        """Replace or add ``add``'s pages (or ``analysed`` ones) and drop ``remove``'s, in
        one commit. A page that cannot be analysed or made a Tantivy document (a date past
        its range, a value of another type) is skipped, logged and counted: it stays as it
        was, and the next update tries it again."""
        self._writing()
        pending = add if isinstance(add, Pending) else self.analysed(add, pool)
        if self._writer is None:
            self._writer = self.index.writer(heap_size=WRITER_HEAP, num_threads=1)
        writer = self._writer
        gone = list(remove)
        ids = [d.page_id for d in pending.docs]
        held = self._held(ids)
        # Marked before Tantivy commits: pages a stop leaves committed but not recorded are
        # held (their copy deleted before they are added) the next time.
        with self.state:
            self.state.executemany("INSERT OR IGNORE INTO writing VALUES (?)", [(i,) for i in ids])
        added: list[tuple[int, str]] = []
        vocabulary: set[tuple[str, str]] = set()
        skipped = 0
        try:
            for pid in gone:
                writer.delete_documents_by_query(self._page(pid))
            for each in pending.pages:
                made = self._made(each)
                if made is None:
                    skipped += 1
                    continue
                page, document = made
                if page.doc.page_id in held:  # a new version: the old one goes
                    writer.delete_documents_by_query(self._page(page.doc.page_id))
                writer.add_document(document)
                vocabulary |= page.vocabulary
                added.append((page.doc.page_id, page.doc.extracted_at))
            writer.commit()
        except BaseException:
            writer.rollback()  # the next batch must not commit this one's half
            raise
        self._record(gone, added, vocabulary)
        self.index.reload()
        return Written(len(added), skipped)

    def _made(self, page: Analyzed | Failed) -> tuple[Analyzed, tantivy.Document] | None:
        """``page`` and its Tantivy document, or None (logged) when it cannot be one."""
        if isinstance(page, Failed):
            reason = page.reason
        else:
            try:
                return page, self._document(page)
            except Exception as e:  # Tantivy refuses a value: this page only
                reason = f"Tantivy refused it: {e!r}"[:500]
        logger.warning("search index: page %d (%s) skipped, %s", page.doc.page_id, page.doc.url,
                       reason)  # fmt: skip
        return None

    def _record(
        self, gone: list[int], added: list[tuple[int, str]], vocabulary: set[tuple[str, str]]
    ) -> None:
        """What a commit wrote, in the state file."""
        with self.state:
            self.state.executemany("DELETE FROM indexed WHERE page_id = ?", [(p,) for p in gone])
            self.state.executemany("INSERT OR REPLACE INTO indexed VALUES (?, ?)", added)
            new = vocabulary - self._known
            self.state.executemany("INSERT OR IGNORE INTO vocabulary VALUES (?, ?)", new)
            self.state.execute("DELETE FROM writing")
        if len(self._known) < KNOWN_MOST:
            self._known |= new

    def set_inlinks(self, counts: dict[int, int]) -> None:
        self._writing()
        with self.state:
            self.state.execute("DELETE FROM inlinks")
            self.state.executemany("INSERT INTO inlinks VALUES (?, ?)", counts.items())

    def inlinks(self, ids: Iterable[int]) -> dict[int, int]:
        wanted = list(ids)
        marks = ",".join("?" * len(wanted))
        rows = self.state.execute(
            f"SELECT page_id, n FROM inlinks WHERE page_id IN ({marks})", wanted
        )
        return dict(rows)

    def _holds_any(self) -> bool:
        sql = "SELECT 1 FROM indexed UNION ALL SELECT 1 FROM writing LIMIT 1"
        return self.state.execute(sql).fetchone() is not None

    def _held(self, ids: list[int]) -> set[int]:
        """Those of ``ids`` the index may hold a version of: recorded, or written by a
        batch that was stopped before it was recorded."""
        held: set[int] = set()
        for part in chunks(ids, 500):
            marks = ",".join("?" * len(part))
            sql = (f"SELECT page_id FROM indexed WHERE page_id IN ({marks})"
                   f" UNION SELECT page_id FROM writing WHERE page_id IN ({marks})")  # fmt: skip
            held.update(pid for (pid,) in self.state.execute(sql, [*part, *part]))
        return held

    def _page(self, pid: int) -> tantivy.Query:
        # tantivy-py's delete_documents_by_term takes an int as i64: the u64 page_id term
        # is only matched by a term query.
        return tantivy.Query.term_query(self.index.schema, "page_id", pid)

    def restored(self, typed: Iterable[str]) -> dict[str, set[str]]:
        """The terms of indexed words written with diacritics that each of ``typed`` (query
        words typed without them) may stand for: those of the same ``stem``."""
        stems = {w: stem(w) for w in set(typed)}
        found: dict[str, set[str]] = {s: set() for s in stems.values()}
        if found:
            marks = ",".join("?" * len(found))
            sql = f"SELECT folded, term FROM vocabulary WHERE folded IN ({marks})"
            for key, value in self.state.execute(sql, list(found)):
                found[key].add(value)
        return {w: found[s] for w, s in stems.items()}

    def _document(self, page: Analyzed) -> tantivy.Document:
        doc = page.doc
        d = tantivy.Document()
        d.add_unsigned("page_id", doc.page_id)
        for name, value in page.fields.items():
            d.add_text(name, value)
        d.add_text("title_text", doc.title)
        d.add_text("url", doc.url)
        d.add_text("host", doc.host)
        for domain in domains(doc.host):
            d.add_text("domains", domain)
        d.add_text("kind", doc.kind)
        if doc.date is not None:
            d.add_date("date", doc.date)
        return d

    def searcher(self) -> Any:
        return self.index.searcher()
