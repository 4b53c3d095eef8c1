"""A page's fields as the index holds them: the terms of each text field and the
vocabulary rows, made from its text and title by the Slovenian analysis (pure); a page
whose analysis fails is named with why, in place of its fields, and fails only itself."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from govsi.search.analysis import Analysis, analyzed, pairs, stem_field, terms, words
from govsi.search.document import SearchDocument


@dataclass(frozen=True)
class Analyzed:
    """A page with its fields' terms (space-separated) and its vocabulary rows."""

    doc: SearchDocument
    fields: dict[str, str]
    vocabulary: set[tuple[str, str]]


def analyze(
    doc: SearchDocument, analysis: Analysis = "lemmas", common: frozenset[str] = frozenset()
) -> Analyzed:
    """The terms ``doc``'s text fields hold (pure); ``common``: the index's common stems."""
    return Analyzed(doc, *fields_of(doc, analysis, common))


def fields_of(
    doc: SearchDocument, analysis: Analysis = "lemmas", common: frozenset[str] = frozenset()
) -> tuple[dict[str, str], set[tuple[str, str]]]:
    """``analyze``'s fields and vocabulary rows of ``doc``."""
    fields: dict[str, str] = {}
    vocabulary: set[tuple[str, str]] = set()
    if analysis != "lemmas":
        fields["body"] = " ".join(terms(doc.text, analysis))
        fields["title"] = " ".join(terms(doc.title, analysis))
        return fields, vocabulary
    body, title = analyzed(words(doc.text)), analyzed(words(doc.title))
    for prefix, found in (("body", body), ("title", title)):
        fields[prefix] = " ".join(found.terms)
        fields[f"{prefix}_ascii"] = " ".join(found.ascii_terms)
        vocabulary |= found.restorations
    fields["body_stem"] = " ".join(stem_field(body, title))
    fields["title_stem"] = " ".join(title.stems)
    fields["body_pair"] = " ".join(pairs(body.stems, common))
    return fields, vocabulary


@dataclass(frozen=True)
class Failed:
    """A page whose analysis failed (a bug, or a text no rule foresaw), and why."""

    doc: SearchDocument
    reason: str


# ``fields_of``'s answer for one page, or why there is none.
Fields = tuple[dict[str, str], set[tuple[str, str]]] | str


def analyze_all(
    docs: list[SearchDocument], analysis: Analysis = "lemmas", common: frozenset[str] = frozenset()
) -> list[Fields]:
    """``fields_of`` each of ``docs``, or why it failed: a pool's job (what comes back is
    the analysis, not the texts again; one page that fails fails only itself)."""
    out: list[Fields] = []
    for doc in docs:
        try:
            out.append(fields_of(doc, analysis, common))
        except Exception as e:
            out.append(f"its analysis failed: {e!r}"[:500])
    return out


def joined(docs: list[SearchDocument], analyses: list[Fields]) -> Iterator[Analyzed | Failed]:
    """``docs`` with their ``analyze_all`` answers, each an ``Analyzed`` or a ``Failed``."""
    for d, a in zip(docs, analyses, strict=True):
        yield Failed(d, a) if isinstance(a, str) else Analyzed(d, *a)
