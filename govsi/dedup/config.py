"""What duplicate detection reads from settings, as plain values, read once here: the
spider's check and the store's settling of copies stored at once use the same."""

from __future__ import annotations

from dataclasses import dataclass

from scrapy.settings import BaseSettings


@dataclass(frozen=True)
class DuplicateConfig:
    enabled: bool  # DUPLICATE_DETECTION
    threshold: float  # NEAR_DUPLICATE_THRESHOLD: estimated Jaccard similarity of a near copy
    num_perm: int  # MINHASH_PERMUTATIONS
    shingle_size: int  # SHINGLE_SIZE

    @classmethod
    def from_settings(cls, s: BaseSettings) -> DuplicateConfig:
        return cls(
            enabled=s.getbool("DUPLICATE_DETECTION"),
            threshold=s.getfloat("NEAR_DUPLICATE_THRESHOLD"),
            num_perm=s.getint("MINHASH_PERMUTATIONS"),
            shingle_size=s.getint("SHINGLE_SIZE"),
        )
