"""Messages over a pipe to a helper process: each framed by its length (8 bytes,
little-endian). The worker pool's processes and the archive's writer speak it."""

from __future__ import annotations

import struct
from typing import IO

__all__ = ["FRAME", "read_frame", "write_frame"]

# The length of each message.
FRAME = struct.Struct("<Q")


def read_frame(stream: IO[bytes]) -> bytes | None:
    """The next message on ``stream``; None when it ends before a whole one."""
    head = stream.read(FRAME.size)
    if len(head) < FRAME.size:
        return None
    (size,) = FRAME.unpack(head)
    data = stream.read(size)
    return data if len(data) == size else None


def write_frame(stream: IO[bytes], data: bytes) -> None:
    stream.write(FRAME.pack(len(data)))
    stream.write(data)
    stream.flush()
