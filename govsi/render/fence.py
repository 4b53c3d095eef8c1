"""What a rendered page may make the browser do: pure decisions, no browser here.

The browser never reaches the network by itself. Every request a page makes is routed to
the crawler, which answers it in one of three ways (``verdict``):

- the page's own document, once: answered from the response the crawler already fetched
  (so rendering costs the site no second download);
- a sub-resource its scripts need (a script, an XHR or fetch, with GET or HEAD, in
  scope): fetched by the crawler through the frontier like any other request (scope,
  robots.txt, per-host and per-address delays, the address guard) or from its cache;
- everything else is refused: images, styles, fonts and media (nothing collected depends
  on them), other schemes, other methods (a crawler must not post forms), navigations
  away from the page, frames, popups.

Most of what is refused never becomes a request: the page's document is handed over with
one more Content-Security-Policy (``REFUSED_AT_SOURCE``, beside the site's own, so both
apply), and the browser drops pictures, fonts, media, stylesheet files and plugins before
asking for them. Each request routing refuses costs the browser, Playwright's driver and
the crawler's own thread a round of messages: on a page of dozens of pictures, routing
them cost the browser and above all the crawler's thread far more per render than not
asking (bench/README, ``bench.render_floor --routed``). A page's scripts see these fail as they
did when refused.

Chromium does not route everything to us (a redirect it follows, a WebSocket, DNS
prefetching), so ``chromium_args`` also points it at a proxy that refuses every
connection and makes every host name unresolvable: what escapes the routing goes nowhere.
WebRTC's UDP (STUN, TURN, peer connections) takes no proxy and needs no host name, so it
is switched off apart: a page's ``RTCPeerConnection`` sends no packet anywhere.

Switches a user adds (RENDER_BROWSER_ARGS) pass only when ``ADDABLE_SWITCHES`` names them
(``addable_switch``), and come before the fence's own, since Chromium keeps the last value
of a switch given twice. A list of what may not pass could never be complete: Chromium
reads ``-no-sandbox`` as ``--no-sandbox`` and ``--no-sandbox=1`` too, and ``--proxy-pac-url``
or ``--no-proxy-server`` replace the fence's proxy from anywhere on the line.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = [
    "ADDABLE_SWITCHES",
    "DOCUMENT",
    "FETCH",
    "FETCHED_TYPES",
    "REFUSED_AT_SOURCE",
    "addable_switch",
    "chromium_args",
    "document_headers",
    "page_headers",
    "verdict",
]

DOCUMENT, FETCH = "document", "fetch"
# Resource types (Playwright's names) whose answers can change the DOM we collect.
FETCHED_TYPES = frozenset({"script", "xhr", "fetch"})
SAFE_METHODS = frozenset({"GET", "HEAD"})
# What the browser refuses by itself in a rendered page (see the module docstring). Inline
# styles apply (they need no request); data: and blob: pictures and fonts, which are no
# requests either, load as they did. Frames stay with the routes, which say why each was
# refused.
REFUSED_AT_SOURCE = (
    "img-src data: blob:; font-src data:; media-src 'none'; style-src 'unsafe-inline'; "
    "object-src 'none'; manifest-src 'none'"
)


def verdict(
    resource_type: str,
    method: str,
    url: str,
    *,
    navigation: bool,
    document_url: str,
    document_served: bool,
    in_scope: bool,
) -> str:
    """DOCUMENT, FETCH, or the reason the request is refused (a short stats key)."""
    if navigation:
        # The page's own document, the first time: anything else that navigates (a
        # script setting location, a form, a frame, a popup) would show another page.
        if url == document_url and not document_served and resource_type == "document":
            return DOCUMENT
        return "navigation" if resource_type == "document" else "frame"
    if not url.startswith(("http://", "https://")):
        return "scheme"
    if resource_type not in FETCHED_TYPES:
        return resource_type or "other"
    if method.upper() not in SAFE_METHODS:
        return "method"
    if not in_scope:
        return "out_of_scope"
    return FETCH


# Hop-by-hop and transfer headers: the body we hand over is whole and decoded already.
_NOT_PASSED = frozenset(
    {
        "content-encoding",
        "content-length",
        "transfer-encoding",
        "connection",
        "keep-alive",
        "set-cookie",
        "strict-transport-security",
        "alt-svc",
    }
)


def document_headers(headers: Iterable[tuple[str, str]]) -> dict[str, str]:
    """The headers a fetched response is handed to the browser with. Repeated headers are
    joined as HTTP allows; Content-Security-Policy stays, so scripts run as a visitor's
    browser would run them."""
    out: dict[str, str] = {}
    for name, value in headers:
        key = name.lower()
        if key in _NOT_PASSED:
            continue
        out[key] = f"{out[key]}, {value}" if key in out else value
    return out


def page_headers(headers: Iterable[tuple[str, str]]) -> dict[str, str]:
    """``document_headers`` of the rendered page's own document, with REFUSED_AT_SOURCE as
    one more policy: a comma separates policies, and each applies."""
    out = document_headers(headers)
    csp = "content-security-policy"
    out[csp] = f"{out[csp]}, {REFUSED_AT_SOURCE}" if out.get(csp) else REFUSED_AT_SOURCE
    return out


# The switches a user may add (RENDER_BROWSER_ARGS): how pages look (language, window,
# fonts, colours) and how the browser uses this machine (GPU, shared memory, timers),
# none of them its network, its sandbox, its security checks or the fence's switches.
# Not --js-flags (V8's own switches, natives syntax among them, and RENDER_JS_HEAP_MB's
# cap) nor --enable-features/--disable-features (Chromium keeps the last list given, and
# Playwright's own must stand).
ADDABLE_SWITCHES = frozenset(
    {
        "lang",
        "accept-lang",
        "user-agent",
        "window-size",
        "force-device-scale-factor",
        "hide-scrollbars",
        "font-render-hinting",
        "force-color-profile",
        "force-prefers-reduced-motion",
        "disable-lcd-text",
        "mute-audio",
        "disable-gpu",
        "disable-software-rasterizer",
        "disable-dev-shm-usage",
        "disable-extensions",
        "disable-breakpad",
        "disable-background-timer-throttling",
        "disable-renderer-backgrounding",
        "disable-backgrounding-occluded-windows",
    }
)


def addable_switch(arg: str) -> str | None:
    """``arg`` as the switch Chromium reads it, spelt ``--name[=value]``, when
    ``ADDABLE_SWITCHES`` names it; None otherwise (not a switch, or not one a user may
    add).

    Read as Chromium's ``base::CommandLine`` reads an argument on Linux: a switch starts
    with ``--`` or ``-``, its name runs to the first ``=``, the rest is its value; names are
    compared as written (Linux keeps their case); ``--`` ends the switches, so it and
    anything without a prefix is an argument (a URL to open)."""
    prefix = 2 if arg.startswith("--") else 1 if arg.startswith("-") else 0
    if prefix == 0 or len(arg) == prefix:
        return None
    name, equals, value = arg[prefix:].partition("=")
    if name not in ADDABLE_SWITCHES:
        return None
    return f"--{name}{equals}{value}"


def chromium_args(
    refusing_proxy: str, extra: Iterable[str] = (), own: Iterable[str] = ()
) -> list[str]:
    """Chromium switches that leave it no network of its own (see the module docstring):
    first those of ``extra`` that ``addable_switch`` lets pass, then the fence's, then
    ``own`` (the crawl's other switches, such as the V8 heap cap), which nothing after
    them can change.

    ``refusing_proxy`` is host:port of a socket that refuses connections. ``<-loopback>``
    takes loopback out of Chromium's implicit proxy bypass, so 127.0.0.1 is refused too.
    """
    added = [switch for arg in extra if (switch := addable_switch(arg)) is not None]
    return [
        *added,
        f"--proxy-server=http://{refusing_proxy}",
        "--proxy-bypass-list=<-loopback>",
        "--host-resolver-rules=MAP * ~NOTFOUND",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--disable-quic",
        # WebRTC may use only proxied connections, and there are none (UDP is never
        # proxied): without it a page's STUN server at any address, private or loopback,
        # got packets straight from the browser, past the proxy and the address guard
        # (tests/test_e2e_browser_limits.py: 4 packets without it, 0 with it).
        "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
        # No --disable-features here: Chromium keeps the last one given, and Playwright's
        # own list (HttpsUpgrades among it: http:// pages must stay http://) must stand.
        *own,
    ]
