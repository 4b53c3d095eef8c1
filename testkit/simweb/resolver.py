"""Scrapy ``TWISTED_DNS_RESOLVER`` for crawling the simulated web.

Names listed in the JSON object in the ``GOVSI_TEST_HOSTS`` environment variable resolve
to their loopback address; every other name fails to resolve, so a test crawl can never
reach the internet. A name listed with two addresses answers the first once, then the
second (DNS rebinding). The crawler's own code paths are the production ones: only the
answer to "what address does this host have" differs.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import Any

from twisted.internet import defer
from twisted.internet.error import DNSLookupError
from twisted.internet.interfaces import IResolverSimple
from zope.interface import implementer


@implementer(IResolverSimple)
class SimWebResolver:
    def __init__(self, reactor: Any, hosts: dict[str, str | list[str]]) -> None:
        self.reactor = reactor
        self.hosts = {k.lower(): v for k, v in hosts.items()}
        self.asked: set[str] = set()

    @classmethod
    def from_crawler(cls, crawler: Any, reactor: Any) -> SimWebResolver:
        return cls(reactor, json.loads(os.environ.get("GOVSI_TEST_HOSTS", "{}")))

    def install_on_reactor(self) -> None:
        self.reactor.installResolver(self)

    def getHostByName(self, name: str, timeout: Sequence[int] = ()) -> defer.Deferred[str]:
        key = name.lower().rstrip(".")
        ip = self.hosts.get(key)
        if ip is None:
            return defer.fail(DNSLookupError(f"simweb: no such host {name!r}"))
        if isinstance(ip, list):
            ip = ip[1] if key in self.asked else ip[0]
        self.asked.add(key)
        return defer.succeed(ip)
