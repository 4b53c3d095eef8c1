"""The scheduler's side of rendering, the three hooks ``Renderer.bind`` takes: whether a
request a rendered page's script makes may go out, holding pages back while the
renderer's queue holds enough of them, and taking a finished render's requests out of
the frontier."""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any

from scrapy import Request

from govsi.frontier.config import SchedulerConfig
from govsi.frontier.entries import Workbench
from govsi.requestmeta import META_HOST
from govsi.web.urls import host_of


class RenderSide:
    def __init__(
        self,
        config: SchedulerConfig,
        bench: Workbench,
        *,
        wake: Callable[[], None],
    ) -> None:
        self.obey = config.obey_robots
        self.token = config.scope.robots_token
        self.hosts, self.frontier, self.stats = bench.hosts, bench.frontier, bench.stats
        # Pages let go may make a request ready now: let the engine ask.
        self.wake = wake

    def refusal(self, url: str) -> str | None:
        """Why a request a rendered page's script makes may not go out (None: it may): a
        host not known to this crawl yet, given up on, or whose robots.txt forbids it."""
        info = self.hosts.get(host_of(url))
        if info is None:
            return "host_unknown"
        if info.unavailable is not None:
            return "host_unavailable"
        if self.obey and info.rules is None:
            return "robots_unknown"
        if self.obey and info.rules.refusal(url, self.token) is not None:  # type: ignore[union-attr]
            return "robots"
        return None

    def hold_pages(self, host: str | None, held: bool) -> None:
        """The renderer holds ``host``'s pages back (every host's when None), or lets them
        go again, which may make a request ready now."""
        if host is None:
            self.frontier.hold_pages(held)
        else:
            self.frontier.hold_host(host, held)
        if not held:
            self.wake()

    def cancel(self, requests: Collection[Request]) -> list[Request]:
        """Take rendered pages' sub-resource requests that are still queued out of the
        frontier (their render ended); returns those taken out (the others have left)."""
        # Queued under the host enqueue_request gave them.
        hosts = {request.meta.get(META_HOST) or host_of(request.url) for request in requests}
        wanted = {id(request) for request in requests}
        taken: list[Request] = []

        def drop(entry: Any) -> bool:
            if isinstance(entry, Request) and id(entry) in wanted:
                taken.append(entry)
                return True
            return False

        for host in hosts:
            if self.frontier.queued(host):
                self.frontier.discard(host, drop)
        if taken:
            self.stats.inc_value("govsi/frontier/resources_cancelled", len(taken))
        return taken
