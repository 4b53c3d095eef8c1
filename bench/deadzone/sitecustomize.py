"""Loaded by a crawler process started with this folder on PYTHONPATH (bench/hostile_crawl's
"dead DNS zone" case): name resolution as the production resolvers do it, through
``socket.getaddrinfo`` / ``gethostbyname``, but answered from the simulated web's map
(``GOVSI_TEST_HOSTS``); names under ``GOVSI_DEAD_ZONE`` block for ``GOVSI_DEAD_DELAY``
seconds and then fail, as a zone whose nameserver never answers; every other name fails
at once, so nothing reaches the internet."""

from __future__ import annotations

import json
import os
import socket
import time

_HOSTS = {k.lower(): v for k, v in json.loads(os.environ.get("GOVSI_TEST_HOSTS", "{}")).items()}
_DEAD = os.environ.get("GOVSI_DEAD_ZONE", ".mrtva.gov.si")
_DELAY = float(os.environ.get("GOVSI_DEAD_DELAY", "120"))
_real_getaddrinfo = socket.getaddrinfo


def _address(host: object) -> str:
    name = (host.decode() if isinstance(host, bytes) else str(host)).lower().rstrip(".")
    if name in _HOSTS:
        return _HOSTS[name]
    try:
        socket.inet_pton(socket.AF_INET6 if ":" in name else socket.AF_INET, name)
        return name  # an address literal
    except OSError:
        pass
    if name.endswith(_DEAD):
        time.sleep(_DELAY)
        raise socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution")
    raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")


def getaddrinfo(host, port, family=0, type=0, proto=0, flags=0):  # type: ignore[no-untyped-def]
    return _real_getaddrinfo(_address(host), port, family, type, proto, flags)


def gethostbyname(host):  # type: ignore[no-untyped-def]
    return _address(host)


socket.getaddrinfo = getaddrinfo
socket.gethostbyname = gethostbyname
