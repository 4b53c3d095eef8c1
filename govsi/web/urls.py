"""URL decisions for the crawler, as small pure functions over strings: ``resolve`` a link,
``canonicalize`` it to the one form a page is stored, fetched and deduplicated under,
``in_scope``, ``host_of``, ``url_too_long`` and ``fingerprint``.

Parsing is ada's (``ada_url``), a WHATWG URL Standard parser, so a link resolves here
exactly as for a visitor clicking it, malformed hrefs included. ``canonicalize`` rewrites
only what does not change which resource a server returns; when in doubt, two spellings
stay two pages (a duplicate fetch is cheap, a missed page is not). Its rules, each with its
reason: docs/stored.md, "Canonical URLs"; tests/test_web_urls.py pins them down.
"""

from __future__ import annotations

import re
import string
from collections.abc import Sequence
from functools import lru_cache

import ada_url
from ada_url import HostType, SchemeType

__all__ = [
    "canonical_and_host",
    "canonicalize",
    "fingerprint",
    "host_in_scope",
    "host_of",
    "in_scope",
    "resolve",
    "url_too_long",
]

_HTTP_SCHEMES = frozenset({SchemeType.HTTP, SchemeType.HTTPS})
_MASK64 = (1 << 64) - 1

# Asking ada only for the components we use avoids building the ones we don't
# (parse_url otherwise serializes every attribute, including origin).
_CANONICAL_PARTS = ("scheme_type", "host_type", "hostname", "port", "pathname", "search")
_SCOPE_PARTS = ("scheme_type", "host_type", "hostname")

_UNRESERVED = frozenset(string.ascii_letters + string.digits + "-._~")

# Characters RFC 3986 never allows unescaped in a path or query. Most are already
# escaped by the WHATWG parser, but it leaves some as they are for compatibility with
# the web; listing all of them keeps the result independent of that detail.
_MUST_ESCAPE = "".join(chr(c) for c in range(0x21)) + '"#<>[\\]^`{|}\x7f'


def _escape_table() -> dict[str, str]:
    # A lookup table covers every spelling of every escape (%2f, %2F, %2f...), so the
    # regex callback below is a single dict lookup instead of parsing hex per match.
    table: dict[str, str] = {}
    for byte in range(256):
        upper = f"%{byte:02X}"
        char = chr(byte)
        fixed = char if char in _UNRESERVED else upper
        for hi in {upper[1], upper[1].lower()}:
            for lo in {upper[2], upper[2].lower()}:
                table[f"%{hi}{lo}"] = fixed
    for char in _MUST_ESCAPE:
        table[char] = f"%{ord(char):02X}"
    return table


_ESCAPE_FIX = _escape_table()
_ESCAPE_OR_UNSAFE = re.compile("%[0-9A-Fa-f]{2}|[" + re.escape(_MUST_ESCAPE) + "]")

# The servlet spec puts the session id in a path parameter, usually on the last
# segment but allowed on any; the value runs up to the next segment or parameter.
_JSESSIONID_PATH = re.compile(r";jsessionid=[^/;]*", re.IGNORECASE)
_SESSION_PARAMS = frozenset({"jsessionid", "phpsessid"})


def _normalize_escapes(part: str) -> str:
    return _ESCAPE_OR_UNSAFE.sub(lambda m: _ESCAPE_FIX[m.group()], part)


def _param_order(param: str) -> tuple[str, str, str]:
    # (name, "=" or "", value): "a" < "a=" < "a=1", and names compare before values,
    # so "a=2" sorts before "a-b=1" although "-" < "=".
    return param.partition("=")


def _canonical_query(query: str) -> str:
    params = [
        param
        for param in _normalize_escapes(query).split("&")
        if param and param.partition("=")[0].lower() not in _SESSION_PARAMS
    ]
    params.sort(key=_param_order)
    return "&".join(params)


def resolve(base_url: str, href: str) -> str | None:
    """Resolve ``href`` against ``base_url`` as a browser does (WHATWG URL Standard).

    Returns the serialized absolute URL, fragment included, or None when a browser
    would fail to parse it or when it is not an http(s) URL (mailto:, tel:,
    javascript:, data:, ftp:, ...). An empty href resolves to the base URL without its
    fragment, as in a browser.
    """
    try:
        joined = ada_url.join_url(base_url, href)
    except ValueError:
        return None
    # The serializer always writes the scheme in lower case, so a prefix test is exact
    # and saves parsing the result a second time.
    if joined.startswith(("http://", "https://")):
        return joined
    return None


def canonicalize(url: str) -> str:
    """The one canonical form of an absolute http(s) URL (docs/stored.md, "Canonical URLs").

    Raises ValueError for anything that is not an absolute http(s) URL.
    Idempotent: ``canonicalize(canonicalize(u)) == canonicalize(u)``.
    """
    return canonical_and_host(url)[0]


def canonical_and_host(url: str) -> tuple[str, str, bool]:
    """``canonicalize(url)``, its host (as ``host_of`` gives it) and whether that host is a
    name (not an IP address), from one parse. Raises ValueError as ``canonicalize`` does."""
    parts = ada_url.parse_url(url, _CANONICAL_PARTS)
    scheme_type = parts["scheme_type"]
    if scheme_type not in _HTTP_SCHEMES:
        raise ValueError(f"not an http(s) URL: {url!r}")
    scheme = "https" if scheme_type == SchemeType.HTTPS else "http"

    host = parts["hostname"]
    if host.endswith("."):
        host = host.rstrip(".")
        if not host:
            raise ValueError(f"no host name in {url!r}")
    port = parts["port"]
    netloc = f"{host}:{port}" if port else host

    path = _normalize_escapes(parts["pathname"])
    query = _canonical_query(parts["search"][1:])
    result = f"{scheme}://{netloc}{path}?{query}" if query else f"{scheme}://{netloc}{path}"

    if ";" in path:
        stripped = _JSESSIONID_PATH.sub("", path)
        if stripped != path:
            # Removing a path parameter can expose a dot segment ("/a/..;jsessionid=x")
            # that the parser kept because it was not one yet; parsing again removes
            # it, and terminates because each pass removes at least one session id.
            return canonical_and_host(f"{scheme}://{netloc}{stripped or '/'}?{query}")
    return result, host, parts["host_type"] == HostType.DEFAULT


@lru_cache(maxsize=256)
def _normalize_suffix(suffix: str) -> str:
    # Parsing the suffix as a host gives it exactly the treatment the URL's host got
    # (case folding, IDNA to punycode, full-width dots), so they compare like for like.
    # Cached because the spider passes the same few suffixes for every link.
    name = suffix.strip().strip(".")
    if not name:
        return ""
    try:
        return ada_url.parse_url(f"http://{name}/", ("hostname",))["hostname"].rstrip(".")
    except ValueError:
        return ""


def in_scope(url: str, suffixes: Sequence[str]) -> bool:
    """Whether ``url`` is an http(s) URL on a host at or under one of ``suffixes``.

    ``www.gov.si`` is under ``gov.si``; ``notgov.si`` and ``gov.si.example.com`` are
    not. Hosts given as IP addresses are never in scope, since a suffix names a part of
    the DNS tree. Suffixes may have a leading dot and any case; empty ones are ignored
    rather than matching everything.
    """
    try:
        parts = ada_url.parse_url(url, _SCOPE_PARTS)
    except ValueError:
        return False
    if parts["scheme_type"] not in _HTTP_SCHEMES or parts["host_type"] != HostType.DEFAULT:
        return False
    return host_in_scope(parts["hostname"].rstrip("."), suffixes)


def host_in_scope(host: str, suffixes: Sequence[str]) -> bool:
    """Whether the host name ``host`` (lower case, no trailing dot, as ``host_of`` gives
    it) is at or under one of ``suffixes`` (as ``in_scope`` reads them)."""
    if not host:
        return False
    for entry in suffixes:
        suffix = _normalize_suffix(entry)
        if suffix and (host == suffix or host.endswith("." + suffix)):
            return True
    return False


def host_of(url: str) -> str:
    """The lower-case host name of an absolute URL, without port or trailing dot.

    IPv6 addresses keep their brackets. Returns "" when the URL cannot be parsed or has
    no host (mailto:, relative references).
    """
    try:
        return ada_url.parse_url(url, ("hostname",))["hostname"].rstrip(".")
    except ValueError:
        return ""


def url_too_long(url: str, max_length: int) -> bool:
    """Whether ``url`` exceeds ``max_length`` characters; ``max_length <= 0`` is no limit."""
    return 0 < max_length < len(url)


def fingerprint(key: str) -> int:
    """A 64-bit hash of a URL (or any key), for sets of millions of URLs in little memory,
    held by this process only: the same key gives the same value until it exits.

    An int costs about a third of the URL string it stands for; the chance that two of
    ten million URLs collide is about 3 in a million. It is Python's own string hash
    (SipHash, keyed at random for each process unless PYTHONHASHSEED is set): a tenth
    of the cost of a blake2b digest, and no site can choose URLs that collide with the
    pages it wants hidden.
    """
    return hash(key) & _MASK64
