"""Which payloads the archive already holds, so that a copy is written as a ``revisit``
record that refers to the first capture (profile identical-payload-digest): a logo on
500 pages, one PDF under three URLs (pure).

Bounded: the ``size`` most recently written digests are remembered (an LRU); a payload
seen before that is a full record again, never a revisit to a capture not remembered.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

__all__ = ["Capture", "Payloads"]


@dataclass(frozen=True)
class Capture:
    """The record a revisit refers to."""

    uri: str
    date: str  # its WARC-Date
    record_id: str


class Payloads:
    def __init__(self, size: int) -> None:
        self.size = max(0, size)
        self._seen: OrderedDict[str, Capture] = OrderedDict()

    def original(self, digest: str) -> Capture | None:
        """The first capture of a payload with ``digest``, when remembered."""
        capture = self._seen.get(digest)
        if capture is not None:
            self._seen.move_to_end(digest)
        return capture

    def written(self, digest: str, capture: Capture) -> None:
        """A full record of this payload was written."""
        if self.size == 0:
            return
        self._seen[digest] = capture
        self._seen.move_to_end(digest)
        while len(self._seen) > self.size:
            self._seen.popitem(last=False)

    def __len__(self) -> int:
        return len(self._seen)
