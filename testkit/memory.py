"""The peak resident memory of a crawl's processes while it runs, sampled from /proc: the
crawler with its worker pool, and its whole process tree (crawldb's writer, the archive's
process, a browser)."""

from __future__ import annotations

import threading
from pathlib import Path

from testkit.crawl import descendants

_WORKER = b"govsi.workers.loop"


def _rss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def _is_worker(pid: int) -> bool:
    try:
        return _WORKER in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


class PeakMemory:
    """Samples process ``pid`` and its descendants every ``every`` seconds until
    ``stop``: ``crawler_and_workers`` (the crawler and its worker processes together)
    and ``tree`` (every process below it too), the highest sums seen, in MB."""

    def __init__(self, pid: int, every: float = 0.05) -> None:
        self.crawler_and_workers = 0.0
        self.tree = 0.0
        self._pid = pid
        self._every = every
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._done.wait(self._every):
            own = _rss_mb(self._pid)
            below = {kid: _rss_mb(kid) for kid in descendants(self._pid)}
            workers = sum(mb for kid, mb in below.items() if _is_worker(kid))
            self.crawler_and_workers = max(self.crawler_and_workers, own + workers)
            self.tree = max(self.tree, own + sum(below.values()))

    def stop(self) -> PeakMemory:
        self._done.set()
        self._thread.join()
        return self
