r"""URL decisions for the crawler: resolving links, one canonical form per page, and scope.

Everything here is a small pure function over strings, so it can be tested without Scrapy
and called for every extracted link. Parsing is delegated to ada (``ada_url``), a WHATWG
URL Standard parser: the standard is what browsers implement, so a link resolves here
exactly as it does for a visitor clicking it, including the many malformed hrefs found on
real sites (backslashes, stray whitespace, tabs and newlines inside the URL, odd ports).

What canonicalize normalizes and why
------------------------------------

``canonicalize(url)`` maps every spelling of a page's address to one string, which is
both the deduplication key and the URL the crawler stores and fetches. Only rewrites
that do not change which resource a real server returns are made (sorting query
parameters is the one that relies on common practice rather than on a standard); when
in doubt, two spellings are left as two pages (a duplicate fetch is cheap, a missed page
is not).

Inherited from the WHATWG parser (the browser's own normalization):

- Scheme and host are lower-cased; internationalized host names are converted to
  punycode (``žička.gov.si`` -> ``xn--ika-fqa77c.gov.si``); IPv4 hosts in odd notations
  (``0x7f.1``) become dotted decimal. DNS names are case-insensitive.
- The default port is dropped (``:80`` for http, ``:443`` for https); any other port is
  kept, since it is a different server.
- Dot segments are removed (``/a/./b/../c`` -> ``/a/c``), including their percent-encoded
  forms (``%2e%2E``); backslashes become slashes. This is what a browser requests.
- Spaces, non-ASCII characters and other characters the standard requires to be
  escaped are percent-encoded as UTF-8 (``/č`` -> ``/%C4%8D``).
- An empty path becomes ``/``: ``http://www.gov.si`` and ``http://www.gov.si/`` are the
  same request (``GET /``).

Added on top of the parser:

- The fragment (``#...``) is dropped. It is never sent to the server, so it does not
  name a different page.
- User name and password are dropped. Credentials are not part of a page's identity,
  and they must not end up in the database or in logs.
- A trailing dot in the host is removed (``www.gov.si.`` -> ``www.gov.si``). The
  fully-qualified form names the same DNS host; servers answer both the same way. All
  trailing dots are removed so that the result is stable under repeated
  canonicalization.
- Percent-escapes are normalized as RFC 3986 (section 6.2.2) allows, in path and query:
  escapes of unreserved characters (``A-Z a-z 0-9 - . _ ~``) are decoded (``%7E`` ->
  ``~``, ``%41`` -> ``A``) because every server decodes them to the same byte; the hex
  digits of all other escapes are upper-cased (``%2f`` -> ``%2F``). Escapes of reserved
  characters are never decoded: ``/a%2Fb`` is one path segment, ``/a/b`` is two, and
  ``%26`` in a query is data while ``&`` separates parameters.
- ASCII characters that RFC 3986 does not allow unescaped but that the WHATWG parser
  leaves as they are (``[ ] | ^ ` { } \`` in the query, ``[ ] |`` in the path) are
  percent-encoded, so that ``?a[]=1`` and ``?a%5B%5D=1``, which servers decode to the same
  bytes, get one form. A lone ``%`` that does not start a valid escape is left as it is,
  because a browser sends it unchanged and encoding it as ``%25`` would change what the
  server receives.
- Query parameters (the pieces between ``&``, split into name and value at the first
  ``=``) are sorted by (name, value) as strings, after the escape normalization above,
  so repeated names also get their values in order. Parameter order almost never
  matters to a server, while links to the same page often list parameters in different
  orders. ``a`` (no ``=``) and ``a=`` (empty value) are kept distinct, because some
  applications tell them apart; ``a`` sorts before ``a=``, which sorts before ``a=1``.
  ``+`` is not decoded and is not equated with ``%20``: only form decoding treats ``+``
  as a space, and not every server applies it.
- Empty parameters (``?a=1&&b=2``, ``?&``) are dropped, and an empty query (a bare
  ``?``) is dropped. Form decoding, which is what gives the query its
  parameter structure in the first place, skips empty parameters.
- Session identifiers are removed: the ``;jsessionid=...`` path parameter (Java
  servlets), and the ``jsessionid`` and ``PHPSESSID`` query parameters (names compared
  case-insensitively). Servers append them to every link when a client rejects
  cookies, so this crawler, which runs with cookies disabled, would otherwise see a new
  URL for every page on every visit. These names are used by the frameworks only for
  the session, never to select content.

Deliberately not normalized:

- ``www.`` is not stripped: ``www.gov.si`` and ``gov.si`` are different hosts that may
  serve different sites.
- http and https stay distinct: they are different origins and may serve different
  content (or one may only redirect to the other; the crawler follows that redirect).
- Trailing slashes are kept: ``/a`` and ``/a/`` can be different resources (a file and
  a directory index).
- The path is not lower-cased: paths are case-sensitive on most servers.
- Generic parameter names such as ``sid``, ``id`` or ``session`` and tracking parameters
  (``utm_*``) are kept: they may select content on some site, and guessing wrong would
  merge distinct pages.
- Index file names (``/index.html``) are kept: whether ``/`` serves ``index.html`` is a
  server setting, not a property of URLs.
"""

from __future__ import annotations

import re
import string
from collections.abc import Sequence
from functools import lru_cache
from hashlib import blake2b

import ada_url
from ada_url import HostType, SchemeType

__all__ = ["canonicalize", "fingerprint", "host_of", "in_scope", "resolve", "url_too_long"]

_HTTP_SCHEMES = frozenset({SchemeType.HTTP, SchemeType.HTTPS})

# Asking ada only for the components we use avoids building the ones we don't
# (parse_url otherwise serializes every attribute, including origin).
_CANONICAL_PARTS = ("scheme_type", "hostname", "port", "pathname", "search")
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
    """The one canonical form of an absolute http(s) URL (see the module docstring).

    Raises ValueError for anything that is not an absolute http(s) URL.
    Idempotent: ``canonicalize(canonicalize(u)) == canonicalize(u)``.
    """
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
            return canonicalize(f"{scheme}://{netloc}{stripped or '/'}?{query}")
    return result


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
    host = parts["hostname"].rstrip(".")
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
    """A 64-bit hash of a URL (or any key), for sets of millions of URLs in little memory.

    An int costs about a third of the URL string it stands for; the chance that two of
    ten million URLs collide is about 3 in a million.
    """
    return int.from_bytes(blake2b(key.encode("utf-8", "surrogatepass"), digest_size=8).digest())
