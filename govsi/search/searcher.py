"""Running a query against the index: BM25 over the analysed fields, the title boosted
(several words: over the stem field, the title weighed in it), every word or phrase
required (any of them when none matches all), filters, facets by host and type, then the
link prior over the best ``RERANK`` (pure but for the index)."""

from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import tantivy

from govsi.search.analysis import (
    STOP_WORDS,
    ascii_term,
    fold,
    pairs,
    stems,
    term,
    word_keys,
    words,
)
from govsi.search.config import DEFAULT_RANKING, Ranking
from govsi.search.index import SearchIndex
from govsi.search.query import ParsedQuery, parse, within_index

__all__ = ["Hit", "Ranking", "Results", "Searcher"]

# Hits the link prior re-orders (BM25's best); deeper pages keep BM25's order.
RERANK = 200
FACET_SIZE = 10
# Where a query's facets are counted while its hits are ranked (threads start on first use).
_ASIDE = ThreadPoolExecutor(2, thread_name_prefix="govsi-search")
# Facets by host and type; every page has a type, so the types' counts add up to the
# matches (``sum_other_doc_count``: those of the types past the first FACET_SIZE).
AGGREGATIONS = {
    "host": {"terms": {"field": "host", "size": FACET_SIZE}},
    "kind": {"terms": {"field": "kind", "size": FACET_SIZE}},
}


@dataclass(frozen=True)
class Hit:
    page_id: int
    url: str
    title: str
    kind: str
    host: str
    date: datetime | None
    score: float


@dataclass
class Results:
    total: int
    hits: list[Hit]
    facets: dict[str, list[tuple[str, int]]] = field(default_factory=dict)
    # The query's terms, as ``snippets`` matches them: the text's terms and ascii terms.
    wanted: frozenset[str] = frozenset()
    wanted_ascii: frozenset[str] = frozenset()
    wanted_stems: frozenset[str] = frozenset()
    any_word: bool = False  # no page had every word: these have some


class Searcher:
    def __init__(self, index: SearchIndex, ranking: Ranking = DEFAULT_RANKING) -> None:
        self.index = index
        self.ranking = ranking
        self.schema = index.index.schema
        self.lemmas = index.analysis == "lemmas"

    def search(self, query: str | ParsedQuery, offset: int = 0, limit: int = 10) -> Results:
        parsed = parse(query) if isinstance(query, str) else query
        kept = [k for k in map(kept_words, parsed.units) if k]
        # Several words, none in a phrase: each asked by its keys alone (``_keys``).
        keyed = self.lemmas and self.ranking.stems and len(kept) > 1
        keyed = keyed and all(len(k) == 1 for k in kept)
        units = [self._keys(k[0]) if keyed else self._unit(k) for k in kept]
        filters = self._filters(parsed)
        wanted, wanted_ascii, wanted_stems = self._wanted(kept)
        if not units and not filters:
            return Results(0, [])
        searcher = self.index.searcher()
        results = self._run(searcher, units, filters, tantivy.Occur.Must, offset, limit)
        any_word = False
        if results is None and len(units) > 1:
            results, any_word = self._run(searcher, units, filters, tantivy.Occur.Should, offset,
                                          limit), True  # fmt: skip
        if results is None:
            return Results(0, [], wanted=wanted, wanted_ascii=wanted_ascii)
        results.wanted, results.wanted_ascii, results.any_word = wanted, wanted_ascii, any_word
        results.wanted_stems = wanted_stems
        return results

    def _run(
        self, searcher: Any, units: list[Any], filters: list[Any], occur: Any, offset: int,
        limit: int,
    ) -> Results | None:  # fmt: skip
        clauses = [(occur, u) for u in units] + [(tantivy.Occur.Must, f) for f in filters]
        if not units:
            clauses.append((tantivy.Occur.Must, tantivy.Query.all_query()))
        query = tantivy.Query.boolean_query(clauses)
        depth = max(RERANK, offset + limit)
        # The facets and the count visit every match, the best hits only what scores: both
        # run at once (Tantivy lets go of the GIL), and the count comes with the facets.
        facets = _ASIDE.submit(searcher.aggregate, query, AGGREGATIONS)
        found = searcher.search(query, depth, count=False)
        aggregated = facets.result()
        if not found.hits:
            return None
        # Only the page id of each candidate (a fast field, no stored document read): the
        # rest is read for the page shown.
        ids = searcher.fast_field_values("page_id", [address for _, address in found.hits])
        inlinks = self.index.inlinks(ids) if units else {}
        prior = self.ranking.prior
        scored = [(score * (1.0 + prior * math.log1p(inlinks.get(pid, 0))), pid, address)
                  for (score, address), pid in zip(found.hits, ids, strict=True)]  # fmt: skip
        order = sorted(scored[:RERANK], key=lambda h: -h[0]) + scored[RERANK:]
        hits = [self._hit(searcher.doc(address), score)
                for score, _, address in order[offset : offset + limit]]  # fmt: skip
        kinds = aggregated["kind"]
        total = sum(int(b["doc_count"]) for b in kinds["buckets"])
        total += int(kinds.get("sum_other_doc_count", 0))
        return Results(total, hits, _facets(aggregated))

    def _hit(self, doc: Any, score: float) -> Hit:
        def first(name: str) -> Any:
            values = doc[name]
            return values[0] if values else None

        return Hit(first("page_id"), first("url"), first("title_text") or "", first("kind"),
                   first("host"), first("date"), score)  # fmt: skip

    def _unit(self, kept: list[str]) -> Any:
        """The query of one word or phrase (its ``kept_words``): over the body and the
        boosted title, and over the ascii fields when it was typed without diacritics."""
        own = [term(w, self.index.analysis) for w in kept]
        r = self.ranking
        stems_only = self.lemmas and len(kept) > 1
        if stems_only:
            # A phrase query walks the positions of its words in every page having them
            # all: in the body, only the stems' (they meet the phrase's inflections and
            # diacritics alike; the body's lemmas keep none); the short title also the
            # lemmas' (measured better).
            stemmed = stems(kept)
            choices = [("body_stem", stemmed), ("title_stem", stemmed), ("title", own)]
        else:
            choices = [("body", own), ("title", own)]
            if self.lemmas and r.stems:
                stemmed = stems(kept)
                choices += [("body_stem", stemmed), ("title_stem", stemmed)]
        if self.lemmas and len(kept) == 1 and kept[0].isascii():
            typed_ascii = [ascii_term(w) for w in kept]
            if r.ascii:
                choices += [("body_ascii", typed_ascii), ("title_ascii", typed_ascii)]
            restored = self.index.restored(kept) if r.vocabulary else {}
            for reading in _readings(kept, own, restored):
                choices += [("body", reading), ("title", reading)]
        queries = []
        for name, terms_ in choices:
            if len(terms_) == 1:
                q = tantivy.Query.term_query(self.schema, name, terms_[0])
            else:
                phrase: list[str | tuple[int, str]] = list(terms_)
                q = tantivy.Query.phrase_query(self.schema, name, phrase)
                if name == "body_stem":
                    q = self._narrowed(q, terms_)
            # A stem's match weighs less than a lemma's, where both are asked.
            boost = (r.title_boost if name.startswith("title") else 1.0) * (
                r.stem_weight if name.endswith("_stem") and not stems_only else 1.0
            )
            if boost != 1.0:
                q = tantivy.Query.boost_query(q, boost)
            queries.append(q)
        return tantivy.Query.disjunction_max_query(queries, tie_breaker=0.5)

    def _keys(self, word: str) -> Any:
        """A word of a query of several words and no phrase: its ``word_keys`` in the stem
        field (``stem_field``), one or two terms where ``_unit`` asks a union of four fields
        or more (whose walk over common words' pages was most of a query's time). BM25 over
        that field ranks; the title counts by ``TITLE_KEYS``."""
        keys = [tantivy.Query.term_query(self.schema, "body_stem", k) for k in word_keys(word)]
        if len(keys) == 1:
            return keys[0]
        return tantivy.Query.boolean_query([(tantivy.Occur.Should, k) for k in keys])

    def _narrowed(self, phrase: Any, stemmed: list[str]) -> Any:
        """The body's ``phrase`` of ``stemmed`` through its common pairs (``body_pair``):
        two words, their pair term (the same pages, no positions read); more, the
        phrase asked only of the pages holding all its pairs (they score nothing)."""
        held = pairs(stemmed, self.index.common or frozenset())
        if not held:
            return phrase
        if len(stemmed) == 2:
            return tantivy.Query.term_query(self.schema, "body_pair", held[0])
        narrow = [tantivy.Query.const_score_query(
            tantivy.Query.term_query(self.schema, "body_pair", p), 0.0) for p in held]  # fmt: skip
        occur = tantivy.Occur.Must
        return tantivy.Query.boolean_query([(occur, phrase), *((occur, q) for q in narrow)])

    def _filters(self, parsed: ParsedQuery) -> list[Any]:
        out: list[Any] = []
        for name, values in (("host", parsed.hosts), ("domains", parsed.sites),
                             ("kind", parsed.kinds)):  # fmt: skip
            if values:
                terms_ = [tantivy.Query.term_query(self.schema, name, v) for v in values]
                out.append(tantivy.Query.boolean_query([(tantivy.Occur.Should, q) for q in terms_]))
        if parsed.after or parsed.before:
            # A ParsedQuery made by a caller may name any date: Tantivy raises past its own.
            after, before = within_index(parsed.after), within_index(parsed.before)
            out.append(tantivy.Query.range_query(
                self.schema, "date", tantivy.FieldType.Date, after, before,
            ))  # fmt: skip
        return out

    def _wanted(
        self, units: list[list[str]]
    ) -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
        """The terms of the query's ``units`` (each its ``kept_words``) as ``snippets``
        matches them: lemmas, ascii terms, stems."""
        kept = [w for unit in units for w in unit]
        typed_ascii = [w for w in kept if w.isascii()] if self.lemmas else []
        wanted = frozenset(term(w, self.index.analysis) for w in kept)
        stemmed = frozenset(stems(kept)) if self.lemmas and self.ranking.stems else frozenset()
        return wanted, frozenset(ascii_term(w) for w in typed_ascii), stemmed


def kept_words(typed: list[str]) -> list[str]:
    """The words of a word or phrase as typed that a query asks for: stop words left out."""
    return [w for w in words(" ".join(typed)) if fold(w) not in STOP_WORDS]


# Readings of a phrase typed without diacritics tried, at most (each word may stand for
# several written words).
MAX_READINGS = 8


def _readings(kept: list[str], own: list[str], restored: dict[str, set[str]]) -> list[list[str]]:
    """Term sequences the ASCII words ``kept`` may stand for, other than ``own``: each word
    its own term or one of its ``restored`` ones (a single word: each of them)."""
    options = [sorted({t, *restored.get(w, ())}) for w, t in zip(kept, own, strict=True)]
    out: list[list[str]] = [[]]
    for choice in options:
        out = [[*seq, t] for seq in out for t in choice][:MAX_READINGS]
    return [seq for seq in out if seq != own]


def _facets(aggregated: Any) -> dict[str, list[tuple[str, int]]]:
    return {
        name: [(b["key"], int(b["doc_count"])) for b in result.get("buckets", [])]
        for name, result in dict(aggregated).items()
    }
