"""Budgets: how much of the web one run may take, per host and overall (pure).

Each budget is a setting, 0 = no limit. They count what this run (this process) released
or received, so a later run on the same crawldb goes on where the budget stopped this
one: what was not fetched keeps its FRONTIER row, with the reason (``reason``).

- ``pages_per_host`` (MAX_PAGES_PER_HOST): pages released per host.
- ``images_per_host`` (MAX_IMAGES_PER_HOST): images released per host.
- ``bytes_per_host`` (MAX_BYTES_PER_HOST): body bytes received from a host (what
  is in flight when it is reached still comes: one response per address at a time).
- ``hosts`` (MAX_HOSTS): hosts the run sets up (DNS, robots.txt); later ones are not
  contacted.

``Budgets`` answers; the scheduler acts (records, logs once, counts under
``govsi/budget/<name>``).
"""

from __future__ import annotations

PAGES_PER_HOST = "pages_per_host"
IMAGES_PER_HOST = "images_per_host"
BYTES_PER_HOST = "bytes_per_host"
HOSTS = "hosts"

SETTINGS = {
    PAGES_PER_HOST: "MAX_PAGES_PER_HOST",
    IMAGES_PER_HOST: "MAX_IMAGES_PER_HOST",
    BYTES_PER_HOST: "MAX_BYTES_PER_HOST",
    HOSTS: "MAX_HOSTS",
}
# fetch_error of a FRONTIER row a budget left unfetched starts with this (the report
# groups on it).
REASON_PREFIX = "budget: "


def reason(name: str, limit: int) -> str:
    """What a row left unfetched by budget ``name`` says: ``budget: MAX_HOSTS (5) reached``."""
    return f"{REASON_PREFIX}{SETTINGS[name]} ({limit}) reached"


class Budgets:
    """Counts per host and answers whether the next page, image or host is within budget."""

    def __init__(
        self,
        pages_per_host: int = 0,
        images_per_host: int = 0,
        bytes_per_host: int = 0,
        hosts: int = 0,
    ) -> None:
        self.limits = {
            PAGES_PER_HOST: pages_per_host,
            IMAGES_PER_HOST: images_per_host,
            BYTES_PER_HOST: bytes_per_host,
            HOSTS: hosts,
        }
        self._pages: dict[str, int] = {}
        self._images: dict[str, int] = {}
        self._bytes: dict[str, int] = {}
        self._hosts = 0
        # (budget, host) pairs reached so far: each is logged once.
        self._reached: set[tuple[str, str]] = set()

    def release(self, host: str, image: bool) -> str | None:
        """The budget that forbids releasing one more page (or image) of ``host``, else
        None, and the release is counted."""
        if self.bytes_spent(host):
            return BYTES_PER_HOST
        name, counts = (IMAGES_PER_HOST, self._images) if image else (PAGES_PER_HOST, self._pages)
        limit = self.limits[name]
        taken = counts.get(host, 0)
        if 0 < limit <= taken:
            return name
        counts[host] = taken + 1
        return None

    def received(self, host: str, nbytes: int) -> bool:
        """Count ``nbytes`` of body from ``host``; whether its byte budget is now spent."""
        self._bytes[host] = self._bytes.get(host, 0) + max(0, nbytes)
        return self.bytes_spent(host)

    def bytes_spent(self, host: str) -> bool:
        limit = self.limits[BYTES_PER_HOST]
        return 0 < limit <= self._bytes.get(host, 0)

    def new_host(self) -> bool:
        """Whether one more host may be set up (and it is counted)."""
        limit = self.limits[HOSTS]
        if 0 < limit <= self._hosts:
            return False
        self._hosts += 1
        return True

    def first_time(self, name: str, host: str = "") -> bool:
        """True the first time budget ``name`` is reached (for ``host``): log it then."""
        key = (name, host)
        if key in self._reached:
            return False
        self._reached.add(key)
        return True

    def reason(self, name: str) -> str:
        return reason(name, self.limits[name])
