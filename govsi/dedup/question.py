"""A page's duplicate question: its exact key, MinHash signature and LSH band keys.

The pure part of the duplicate check, cheap to import (no database): a worker process
computes it for each page it reads, and ``govsi.copies.index.DuplicateIndex`` answers it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from lxml import etree

from govsi.dedup.signature import band_keys, copy_key, exact_key_of, signature_values
from govsi.text.maintext import main_text
from govsi.web.extract import parse_html

__all__ = ["Question", "page_keys", "question", "question_of_text"]


@dataclass
class Question:
    """A page ready to be looked up."""

    url: str
    key: str
    # The MinHash's hash values (``signature_values``): all the check reads of it, and a
    # third of a whole MinHash to send from a worker.
    sig: np.ndarray | None
    keys: list[int]
    # What a reader sees (``copy_key``): an exact copy has both keys of its original.
    copy: str = ""


def question(
    url: str,
    html: str,
    root: etree._Element | None = None,
    *,
    num_perm: int,
    shingle_size: int,
    bands: int,
    rows: int,
) -> Question:
    """``DuplicateIndex.prepare`` as a pure function of the page (``measures()`` gives the
    rest), for a worker process: it parses ``html`` itself unless given its ``root`` (which
    it consumes), and always makes the signature. Its result is picklable."""
    text, key, copy = page_keys(html, root)
    return question_of_text(url, key, text, copy=copy, num_perm=num_perm,
                            shingle_size=shingle_size, bands=bands, rows=rows)  # fmt: skip


def page_keys(html: str, root: etree._Element | None = None) -> tuple[str, str, str]:
    """(main text, exact key, copy key) of ``html``, parsed once: from ``root`` when given
    (consumed), the copy key read before the main text cuts the tree."""
    if root is None:
        root = parse_html(html)
    copy = copy_key(html, root)
    text = main_text(html, root)
    return text, exact_key_of(text, html), copy


def question_of_text(
    url: str, key: str, text: str, *, copy: str, num_perm: int, shingle_size: int, bands: int,
    rows: int,
) -> Question:  # fmt: skip
    """The question of a page whose main ``text``, exact ``key`` and ``copy`` key are known."""
    sig = signature_values(text, num_perm=num_perm, shingle_size=shingle_size)
    keys = band_keys(sig, bands, rows) if sig is not None else []
    return Question(url, key, sig, keys, copy)
