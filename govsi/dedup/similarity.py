"""How alike two pages' MinHash signatures are, on bare hash values: the comparison both
the duplicate index (``govsi.copies.index``, before a page is stored) and the store's
re-check (``govsi.store.originals``, as a batch is written) make. Imports nothing: crawldb's
writer process loads numpy only when a batch has signatures to compare (pure)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

__all__ = ["estimated_jaccard", "nearest"]


def estimated_jaccard(a: np.ndarray, b: np.ndarray) -> float:
    """What ``MinHash.jaccard`` computes, on bare hash values (no MinHash to build)."""
    return int((a == b).sum()) / len(a)


def nearest(
    url: str, values: np.ndarray, candidates: dict[str, np.ndarray], threshold: float
) -> tuple[str, float] | None:
    """The candidate other than ``url`` itself most similar to ``values``, and its
    estimated similarity, if one reaches ``threshold``."""
    best: tuple[str, float] | None = None
    best_score = threshold
    for other, other_values in candidates.items():
        if other == url:
            continue
        score = estimated_jaccard(values, other_values)
        if score >= best_score:
            best, best_score = (other, score), score
    return best
