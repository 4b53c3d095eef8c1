"""Helper processes and the messages over their pipes: each message framed by its length
(8 bytes, little-endian). The worker pool's processes, the archive's writer and crawldb's
writer speak it.

A helper is plain ``python -c`` running its module's ``serve()`` with the crawl's import
path (a scrapyd egg included): it imports only what it needs, and reads its stdin, which
ends when the crawl closes it or is gone (killed with -9 included), so a helper never
outlives its crawl.
"""

from __future__ import annotations

import json
import os
import signal
import struct
import subprocess
import sys
from collections.abc import Mapping, Sequence
from typing import IO

__all__ = ["FRAME", "helper_streams", "read_frame", "spawn", "write_frame"]

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


def spawn(
    module: str, env: Mapping[str, str] | None = None, args: Sequence[str] = ()
) -> subprocess.Popen[bytes]:
    """Start a helper process running ``module.serve()``, its stdin and stdout piped here;
    ``env``: variables it gets unless this process's environment already sets them;
    ``args``: its ``sys.argv[2:]``."""
    boot = (
        "import json, sys; sys.path[:] = json.loads(sys.argv[1]); "
        f"from {module} import serve; serve()"
    )
    return subprocess.Popen(
        [sys.executable, "-B", "-c", boot, json.dumps(sys.path), *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env={**(env or {}), **os.environ} if env else None,
    )


def helper_streams() -> tuple[IO[bytes], IO[bytes]]:
    """In a helper process: its messages in (stdin) and its replies out (the real stdout).
    Whatever a library prints goes to stderr instead, never into the replies; Ctrl-C,
    which reaches the whole process group, is ignored: the crawl decides when it stops."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    replies = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    return sys.stdin.buffer, replies
