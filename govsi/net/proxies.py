"""Proxies and the address guard (pure).

A proxy resolves the names it is asked for itself: the guard sees only the proxy's own
address, so ``http://10.0.0.1/secret`` or an intranet name goes through it unchecked.
Scrapy's ``HttpProxyMiddleware`` takes its proxies from the environment the way urllib's
``getproxies()`` does (``http_proxy``, ``HTTPS_PROXY``, ...; the lower-case name wins), and
a request may name one in ``meta["proxy"]``. The crawl refuses both unless
``PROXY_TRUSTED`` says the proxy itself refuses private addresses.
"""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import urlsplit

__all__ = ["ProxyNotTrusted", "proxy_variables", "shown_proxy", "untrusted_proxy"]

# Schemes whose proxy a crawl's requests would use (``all``: curl's and others' catch-all,
# refused too rather than guessing which client reads it).
_SCHEMES = ("http", "https", "all")


class ProxyNotTrusted(RuntimeError):
    """The crawl does not start: a proxy is configured and ``PROXY_TRUSTED`` is off."""


def proxy_variables(environ: Mapping[str, str]) -> list[str]:
    """The environment variables that configure a proxy for the crawl's requests, as
    urllib reads them: ``<scheme>_proxy`` in either case, non-empty; under CGI
    (``REQUEST_METHOD`` set) not ``HTTP_PROXY``, which a client can send as a header."""
    lower: dict[str, tuple[str, str]] = {}
    other: dict[str, tuple[str, str]] = {}
    for name, value in environ.items():
        scheme = name[:-6].lower()
        if name[-6:].lower() != "_proxy" or scheme not in _SCHEMES:
            continue
        if name == "HTTP_PROXY" and "REQUEST_METHOD" in environ:
            continue
        (lower if name[-6:] == "_proxy" else other)[scheme] = (name, value)
    names = []
    for scheme in _SCHEMES:
        name, value = lower.get(scheme) or other.get(scheme) or ("", "")
        if value.strip():  # an empty lower-case one switches the scheme's proxy off
            names.append(name)
    return sorted(names)


def shown_proxy(url: str) -> str:
    """A proxy URL without its user name and password, for the log and the page row."""
    try:
        parts = urlsplit(url if "://" in url else f"http://{url}")
        host = parts.hostname or "?"
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return "(unreadable proxy URL)"
    return f"{parts.scheme}://{host}{port}"


def untrusted_proxy(names: list[str]) -> str:
    """The one log line that says why the crawl does not start, and how to go on."""
    listed = ", ".join(names)
    return (
        f"address guard: a proxy is configured ({listed}); the crawl does not start, "
        "because a proxy resolves names itself and the guard cannot see the address it "
        f"connects to. Unset {listed} (e.g. env -u {names[0]} scrapy crawl govsi), or set "
        "-s HTTPPROXY_ENABLED=False to ignore it, or -s PROXY_TRUSTED=True if the proxy "
        "itself refuses private and internal addresses"
    )
