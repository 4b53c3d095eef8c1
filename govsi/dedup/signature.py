"""Is this page a copy of one already stored? The pure decisions, on a page's main text
(``govsi.text.maintext``):

- ``exact_key`` hashes the main text, whitespace-normalized and lower-cased: the same
  content under another URL, in a print view or in another section's template is the same
  key. A page with no main text at all is keyed by its whole text instead, so that two
  template-only pages are copies only if they are identical. It is what a revisit tells a
  change by, and what finds a page's exact-copy candidates.
- ``copy_key`` hashes everything a reader sees: the title and all the text. An exact copy,
  stored without its content, has both keys of its original. The main text alone is not
  enough: on real sites an extractor's main text is the same for pages a reader tells apart
  (two procedures of one template by their title, two searches by their count of results);
  such pages are near copies, kept whole.
- Keys name their definition (``KEY_VERSION``): keys of two definitions never match.
"""

from __future__ import annotations

import hashlib
import zlib
from functools import lru_cache, partial
from operator import methodcaller
from typing import Any

import numpy as np
from lxml import etree

from govsi.dedup.minhash import MinHash
from govsi.text.maintext import VERSION, main_text, normalized, whole_text
from govsi.web.extract import parse_html

__all__ = [
    "KEY_VERSION",
    "band_keys",
    "bounded_hashes",
    "copy_key",
    "exact_key",
    "exact_key_of",
    "is_duplicate",
    "lsh_params",
    "shingles",
    "signature",
    "signature_of_text",
    "signature_values",
    "similarity",
]

# The definition keys, signatures and band keys are made by (stored as page.key_version).
KEY_VERSION = VERSION
# What a reader sees of a page: its text nodes (the title's too) outside scripts and styles.
# Plain strings: lxml's "smart" ones keep a reference to their element each.
_VISIBLE_TEXT = etree.XPath("//text()[not(parent::script or parent::style)]", smart_strings=False)
_KEY_PREFIX = f"\x00v{KEY_VERSION}:"
# Band keys of different definitions never meet in page_lsh (BLAKE2b's salt).
_BAND_SALT = f"v{KEY_VERSION}".encode()

DEFAULT_NUM_PERM = 128
DEFAULT_SHINGLE_SIZE = 5
DEFAULT_THRESHOLD = 0.75
# MinHash permutations are seeded and the hashing scheme named, so signatures stored by
# one process (or one datasketch version) compare with another's.
SEED = 1
SCHEME = "affine32"
# How a shingle becomes the 32-bit value MinHash permutes (part of what a stored signature
# means: never change it silently): each word's CRC-32, combined over the shingle's words
# as a polynomial mod 2**32, all pages' shingles at once in numpy. datasketch's default
# (SHA-1 of each shingle's bytes, one Python call each) cost three times as much per page,
# for the same precision and recall on bench/dedup_accuracy.py; the affine32 scheme mixes
# the values (murmur3's finalizer) before permuting them.
_POLY = np.uint64(0x9E3779B1)
_ENCODE = methodcaller("encode", "utf-8", "surrogatepass")
_MASK32 = np.uint64(0xFFFFFFFF)
# Bounds on one page's signature, whatever the page: a 32 MB page of one repeated word is
# 32 KB gzipped, and hashing all its 16 M shingles at once took 16 GB. Module constants,
# not settings: like SEED and SCHEME they are part of what a stored signature means (a
# page past a bound has a different signature than without it), so they must not differ
# between the processes whose signatures meet in crawldb.
# - Only the first MAX_TEXT_CHARS characters of the main text are shingled (a 1 MiB text
#   is 150 000 words of ordinary prose: a whole law; a page's main text is rarely a tenth).
# - Of its distinct shingle hashes only the MAX_SHINGLES smallest are permuted: a bottom-k
#   sample, so two near copies keep the same shingles (equal pages, equal signatures), and
#   below the bound it is all of them.
# - They are permuted SHINGLE_CHUNK at a time: datasketch makes a (chunk x num_perm) array.
# A page under both bounds has the signature it had without them: MinHash takes the
# minimum over the shingles, and repeats or the order of the batches change no minimum.
MAX_TEXT_CHARS = 1 << 20
MAX_SHINGLES = 50_000
SHINGLE_CHUNK = 4096


def exact_key(html: str) -> str:
    """A hex SHA-256 that equal pages share: of the main text, else of the whole text."""
    return exact_key_of(main_text(html), html)


def exact_key_of(text: str, html: str) -> str:
    """``exact_key`` for a page whose ``main_text`` is already known (it is the costly part)."""
    keyed = _KEY_PREFIX + (text or "\x00whole:" + whole_text(html))
    return hashlib.sha256(keyed.encode("utf-8", "surrogatepass")).hexdigest()


def copy_key(html: str, root: etree._Element | None = None) -> str:
    """A hex SHA-256 that pages showing a reader the same title and text share: the words
    of every text node outside scripts and styles, template included. ``root``: the page
    as ``parse_html`` parsed it, read and left as it is (else ``html`` is parsed)."""
    if root is None:
        root = parse_html(html)
    text = " ".join(_VISIBLE_TEXT(root)) if root is not None else ""
    keyed = _KEY_PREFIX + normalized(text)
    return hashlib.sha256(keyed.encode("utf-8", "surrogatepass")).hexdigest()


def shingles(text: str, size: int = DEFAULT_SHINGLE_SIZE) -> set[str]:
    """Word n-grams of normalized text; a text shorter than ``size`` is one shingle."""
    words = text.split()
    if not words:
        return set()
    if len(words) <= size:
        return {" ".join(words)}
    return {" ".join(words[i : i + size]) for i in range(len(words) - size + 1)}


@lru_cache(maxsize=8)
def permutations(num_perm: int) -> np.ndarray:
    """The seeded permutations every signature uses (the scheme's a and b, 2 x
    ``num_perm``): made once, not for every page (making them costs more than hashing a
    page's shingles)."""
    # datasketch has no type information: its attributes are Any.
    made: np.ndarray = MinHash(num_perm=num_perm, seed=SEED, scheme=SCHEME).permutations
    return made


def make_minhash(num_perm: int, hashvalues: Any = None) -> MinHash:
    """An empty signature, or one restored from stored ``hashvalues``."""
    return MinHash(
        num_perm=num_perm,
        seed=SEED,
        scheme=SCHEME,
        hashfunc=int,  # shingle_hashes did the hashing
        hashvalues=hashvalues,
        permutations=permutations(num_perm),
    )


def shingle_hashes(text: str, size: int = DEFAULT_SHINGLE_SIZE) -> np.ndarray:
    """The 32-bit hashes of ``shingles(text, size)`` (repeats included), as uint64.
    Unbounded: ``signature_of_text`` gives it at most MAX_TEXT_CHARS."""
    words = text.split()
    # map() keeps the per-word work in C; this runs for every word of every page.
    codes = np.array(list(map(zlib.crc32, map(_ENCODE, words))), dtype=np.uint64)
    n = len(codes)
    if n == 0:
        return codes
    # A text shorter than a shingle is one shingle of all its words.
    width = min(size, n)
    count = n - width + 1
    hashes = np.zeros(count, dtype=np.uint64)
    for j in range(width):
        hashes = (hashes * _POLY + codes[j : j + count]) & _MASK32
    # Repeated shingles stay: MinHash takes the minimum, so they change nothing.
    return hashes


def signature_of_text(
    text: str, *, num_perm: int = DEFAULT_NUM_PERM, shingle_size: int = DEFAULT_SHINGLE_SIZE
) -> MinHash | None:
    """The MinHash of ``text``'s shingles, within the bounds above; None for no words."""
    values = signature_values(text, num_perm=num_perm, shingle_size=shingle_size)
    return None if values is None else make_minhash(num_perm, values)


def signature_values(
    text: str, *, num_perm: int = DEFAULT_NUM_PERM, shingle_size: int = DEFAULT_SHINGLE_SIZE
) -> np.ndarray | None:
    """``signature_of_text(...).hashvalues`` without the MinHash around them (what a
    worker sends for each page, and all the duplicate check reads); None for no words."""
    # The cut may split the last word: the same text is always cut in the same place.
    hashes = bounded_hashes(shingle_hashes(text[:MAX_TEXT_CHARS], shingle_size))
    if len(hashes) == 0:
        return None
    values = _empty_values(num_perm)
    a, b = permutations(num_perm)
    for start in range(0, len(hashes), SHINGLE_CHUNK):
        values = np.minimum(values, _permuted_min(hashes[start : start + SHINGLE_CHUNK], a, b))
    return values


@lru_cache(maxsize=8)
def _empty_values(num_perm: int) -> np.ndarray:
    made: np.ndarray = make_minhash(num_perm).hashvalues
    made.flags.writeable = False  # shared: np.minimum makes each signature its own
    return made


# murmur3's 32-bit finalizer (shifts and multipliers), as datasketch's affine32 scheme mixes.
_S1, _M1, _S2, _M2, _S3 = (np.uint32(v) for v in (16, 0x85EBCA6B, 13, 0xC2B2AE35, 16))


def _permuted_min(hashes: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """What ``MinHash.update_batch(hashes.tolist())`` of the affine32 scheme takes the
    minimum with, in numpy alone: datasketch's makes a Python list and calls ``hashfunc``
    on each value, half its cost on a page of a few hundred words. Equal results:
    tests/test_dedup.py."""
    hv = hashes.astype(np.uint32).reshape(-1, 1)
    hv = hv ^ (hv >> _S1)
    hv = hv * _M1
    hv = hv ^ (hv >> _S2)
    hv = hv * _M2
    hv = hv ^ (hv >> _S3)
    made: np.ndarray = (hv * a + b).min(axis=0)
    return made


def bounded_hashes(hashes: np.ndarray, limit: int = MAX_SHINGLES) -> np.ndarray:
    """The distinct values of ``hashes``, at most the ``limit`` smallest (sorted)."""
    return np.unique(hashes)[:limit]


def signature(
    html: str, *, num_perm: int = DEFAULT_NUM_PERM, shingle_size: int = DEFAULT_SHINGLE_SIZE
) -> MinHash | None:
    """The MinHash of the main text's shingles; None for a page without main text."""
    return signature_of_text(main_text(html), num_perm=num_perm, shingle_size=shingle_size)


def similarity(
    a: str, b: str, *, num_perm: int = DEFAULT_NUM_PERM, shingle_size: int = DEFAULT_SHINGLE_SIZE
) -> float:
    """Estimated Jaccard similarity of two pages' main-content shingles (0 without content)."""
    sa = signature(a, num_perm=num_perm, shingle_size=shingle_size)
    sb = signature(b, num_perm=num_perm, shingle_size=shingle_size)
    if sa is None or sb is None:
        return 0.0
    return float(sa.jaccard(sb))


def is_duplicate(
    a: str,
    b: str,
    *,
    threshold: float = DEFAULT_THRESHOLD,
    num_perm: int = DEFAULT_NUM_PERM,
    shingle_size: int = DEFAULT_SHINGLE_SIZE,
) -> bool:
    """Whether ``b`` is a copy of ``a``: the same main content, or a near copy of it."""
    text_a, text_b = main_text(a), main_text(b)
    if exact_key_of(text_a, a) == exact_key_of(text_b, b):
        return True
    sa = signature_of_text(text_a, num_perm=num_perm, shingle_size=shingle_size)
    sb = signature_of_text(text_b, num_perm=num_perm, shingle_size=shingle_size)
    return sa is not None and sb is not None and float(sa.jaccard(sb)) >= threshold


@lru_cache(maxsize=64)
def lsh_params(threshold: float, num_perm: int, min_recall: float = 0.95) -> tuple[int, int]:
    """(bands, rows) for LSH at ``threshold``: the most rows per band (the fewest false
    candidates) for which a pair exactly at the threshold is still a candidate with
    probability ``min_recall``; pairs more similar than that are found more surely."""
    best = (num_perm, 1)
    for rows in range(1, num_perm + 1):
        bands = num_perm // rows
        if 1.0 - (1.0 - threshold**rows) ** bands >= min_recall:
            best = (bands, rows)
    return best


@lru_cache(maxsize=8)
def _band_persons(bands: int) -> tuple[bytes, ...]:
    return tuple(band.to_bytes(2, "big") for band in range(bands))


def band_keys(values: np.ndarray, bands: int, rows: int) -> list[int]:
    """One signed 64-bit key per band (PostgreSQL bigint), band number included: the
    BLAKE2b of the band's hash ``values`` (``signature_values``, a MinHash's
    ``hashvalues``), personalised by the band number, salted by ``KEY_VERSION``. Stored in
    crawldb, so these bytes change only with KEY_VERSION."""
    raw = values.tobytes()
    step = rows * values.itemsize
    from_bytes = int.from_bytes
    blake2b = partial(hashlib.blake2b, digest_size=8, salt=_BAND_SALT)
    return [
        from_bytes(
            blake2b(raw[band * step : band * step + step], person=person).digest(),
            "big",
            signed=True,
        )
        for band, person in enumerate(_band_persons(bands))
    ]
