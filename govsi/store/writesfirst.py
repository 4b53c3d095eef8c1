"""What crawldb's writes wait for (``WritesFirst``: the WARC archive's writer): a barrier
before each batch, and the pages whose records it lost, which crawldb leaves unfetched."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from twisted.internet.defer import Deferred, DeferredList, succeed

from govsi.items import FetchedPage, Item

__all__ = ["WritesFirst", "barrier", "captured"]


class WritesFirst(Protocol):
    """A component whose records crawldb must not mention before they are on disk (the
    WARC archive's writer): ``barrier`` fires once everything it was handed so far is
    written; ``backlogged`` says it is behind, which holds new requests as a full buffer
    does (its backlog is crawldb's too); ``lost`` names a page fetched whose records it
    could not write (it failed): crawldb leaves such a page to be fetched again."""

    def barrier(self) -> Deferred[Any]: ...

    def backlogged(self) -> bool: ...

    def lost(self, url: str) -> bool: ...


def barrier(firsts: Sequence[WritesFirst]) -> Deferred[Any]:
    """Fires once each of ``firsts`` has written everything handed to it so far."""
    if not firsts:
        return succeed(None)
    return DeferredList([first.barrier() for first in firsts], consumeErrors=True)


def captured(firsts: Sequence[WritesFirst], item: Item) -> bool:
    """``item`` is not a page whose records one of ``firsts`` could not write."""
    return not isinstance(item, FetchedPage) or not any(first.lost(item.url) for first in firsts)
