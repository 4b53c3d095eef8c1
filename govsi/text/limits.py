"""What reading one document may cost, and how it ended (pure)."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal, ParamSpec

# Characters of a title kept: a page's <title> or a document's metadata title is as long
# as the server made it.
MAX_TITLE_CHARS = 1_000


def short_title(title: str | None) -> str | None:
    """``title`` with its whitespace runs as one space, at most ``MAX_TITLE_CHARS`` (only
    that much of it is read); None when empty."""
    if not title:
        return None
    return " ".join(title[: 4 * MAX_TITLE_CHARS].split())[:MAX_TITLE_CHARS] or None


# How a document's reading ended:
# - ok: text read (``truncated`` says whether a bound cut it short);
# - empty: read, no text in it (a scan without a text layer, an empty file);
# - encrypted: the file needs a password;
# - failed: not a readable file of its type (``reason`` says why);
# - timeout: the time bound ran out (the text read until then is kept);
# - memory: the worker's memory bound (WORKER_MEMORY_LIMIT) refused an allocation, or the
#   worker died of it (``reason`` starts with ``OVER_MEMORY``).
TextStatus = Literal["ok", "empty", "encrypted", "failed", "timeout", "memory"]

# The reason a reading past the memory bound is recorded with, before the details.
OVER_MEMORY = "over memory bound"


@dataclass(frozen=True)
class TextLimits:
    """Bounds on one document: ``max_chars`` of text kept, ``max_pages`` (slides) read,
    ``max_unpacked_bytes`` read out of a zip or OLE container (a zip bomb stops there),
    ``max_seconds`` of reading (checked between pages; a hang inside one page is the
    worker pool's job timeout). Memory is the worker's bound (WORKER_MEMORY_LIMIT), which
    the operating system enforces: a reader gives ``memory_bounded``'s status past it."""

    max_chars: int = 1_000_000
    max_pages: int = 2_000
    max_unpacked_bytes: int = 64 * 1024 * 1024
    max_seconds: float = 20.0


@dataclass(frozen=True)
class DocumentText:
    """A document's text and what is known about it."""

    status: TextStatus
    text: str = ""
    reason: str | None = None
    title: str | None = None
    # The document's own date: last modified, else created (from its metadata).
    date: datetime | None = None
    pages: int | None = None
    truncated: bool = False


@dataclass
class Budget:
    """The running count against ``TextLimits`` while one document is read."""

    limits: TextLimits
    started: float = field(default_factory=time.monotonic)
    parts: list[str] = field(default_factory=list)
    chars: int = 0
    truncated: bool = False

    def add(self, text: str) -> bool:
        """Keep ``text`` (cut at ``max_chars``); False once no more text fits."""
        room = self.room()  # less the "\n" joining
        if room <= 0:
            self.truncated = True
            return False
        if len(text) > room:
            text, self.truncated = text[:room], True
        self.chars += len(text) + (1 if self.parts else 0)
        self.parts.append(text)
        return not self.truncated

    def room(self) -> int:
        """Characters of text that may still be kept."""
        return max(0, self.limits.max_chars - self.chars - (1 if self.parts else 0))

    def out_of_time(self) -> bool:
        return time.monotonic() - self.started > self.limits.max_seconds

    def text(self) -> str:
        return "\n".join(self.parts).strip()

    def result(
        self,
        title: str | None = None,
        date: datetime | None = None,
        pages: int | None = None,
        timed_out: bool = False,
    ) -> DocumentText:
        """The text kept: ``ok`` (``timeout`` when the time ran out) or ``empty``."""
        text = self.text()
        status: TextStatus = "timeout" if timed_out else "ok" if text else "empty"
        reason = f"reading took over {self.limits.max_seconds:g} s" if timed_out else None
        return DocumentText(status, text, reason, short_title(title), date, pages, self.truncated)


P = ParamSpec("P")


def memory_bounded(reader: Callable[P, DocumentText]) -> Callable[P, DocumentText]:
    """``reader`` with an allocation refused (``MemoryError``, the worker's memory bound)
    ending in status ``memory``; what was read before is dropped with the rest."""

    @functools.wraps(reader)
    def read(*args: P.args, **kwargs: P.kwargs) -> DocumentText:
        try:
            return reader(*args, **kwargs)
        except MemoryError:
            return DocumentText("memory", reason=f"{OVER_MEMORY}: an allocation was refused")

    return read
