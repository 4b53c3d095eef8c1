"""Webs for the rendering benchmarks: pages with scripts, some of which add links.

Every page of ``js_web`` and ``endless_js_web`` asks for a stylesheet, a font and an
outside script (``HEAD``), which the browser must refuse, and has text of its own
(copies would be DUPLICATE pages whose links are not followed).

- ``js_web``: ``hosts`` hosts of ``pages`` pages; on the first ("the app host") a script
  adds to every page a link to a page reachable only that way, on the others an inline
  analytics snippet changes nothing.
- ``endless_js_web``: endless hosts whose every page links to two new pages and has a
  third added by a script.
- ``quiet_web``: ``js_web``'s shape, but whose only scripts need a user (onclick,
  ``javascript:`` links, JSON-LD): nothing needs a browser.
"""

from __future__ import annotations

import random
import re

from bench.lib.webs.parts import text
from testkit.simweb.server import Host, Resource, SimWeb, html

HEAD = (
    '<link rel="stylesheet" href="/site.css"><link rel="preload" href="/f.woff2" as="font" '
    'crossorigin><script src="https://cdn.example.com/analytics.js"></script>'
)
ADD = (
    "<script>document.addEventListener('DOMContentLoaded', () => {{"
    "const p = document.createElement('p'); p.innerHTML = "
    "'<a href=\"/js-{n}\">Storitev {n}</a> je na voljo tudi v e-obliki.';"
    "document.body.appendChild(p); }});</script>"
)
FOOTER = (
    '<footer><a href="#" onclick="return false;">Na vrh</a> <a href="javascript:void(0)" '
    'onclick="window.print()">Natisni</a><script type="application/ld+json">'
    '{"@type": "GovernmentOrganization"}</script></footer>'
)
_NODE = re.compile(r"^/(?:p|js-)(\d+)$")


LOGO = '<img src="/grb.png" alt="Grb">'


def _css() -> Resource:
    return Resource(b"body{}", headers={"Content-Type": "text/css"})


def js_page(title: str, body: str, template: str = "") -> str:
    """A page of ``js_web`` (its text seeded by the title), ``body`` after the text, and
    ``template`` (``site_template``) around them."""
    return (
        f"<!DOCTYPE html><html><head><title>{title}</title>{HEAD}</head><body>{template}"
        f"<h1>{title}</h1><p>{text(random.Random(title), 1500)}</p>{body}{template}"
        "</body></html>"
    )


def site_template(pages: int, chars: int) -> str:
    """A menu of links to the host's ``pages`` and about ``chars`` // 2 characters of
    text: put before and after a page's content, it gives the page the size and the links
    of a ministry's template (a www.gov.si page is 40-80 KB and links to 100-200 URLs)."""
    menu = "".join(f'<li><a href="/p{i}">Stran {i}</a></li>' for i in range(pages))
    rng = random.Random(chars)
    filler = "".join(f"<p>{text(rng, 1000)}</p>" for _ in range(chars // 2000))
    return f"<nav><ul>{menu}</ul></nav><div class='footer'>{filler}</div>"


def js_web(
    hosts: int, pages: int, page_chars: int = 0, logo: bytes = b""
) -> tuple[SimWeb, list[str], set[str]]:
    """The web, its seeds, and the URLs of the pages only a script links to. With
    ``page_chars``, each page has a template of about that many characters and a menu of
    links to every page of its host (``site_template``); with ``logo``, every page shows
    ``/grb.png``, those bytes on every host (as the state's coat of arms is)."""
    t = site_template(pages, page_chars) if page_chars else ""
    if logo:
        t += LOGO
    built: list[Host] = []
    js_only: set[str] = set()
    for h in range(hosts):
        name = f"s{h}.gov.si"
        r: dict[str, Resource] = {"/site.css": _css()}
        if logo:
            r["/grb.png"] = Resource(logo, headers={"Content-Type": "image/png"})
        for i in range(pages):
            nxt = " ".join(f'<a href="/p{j}">p{j}</a>' for j in (i * 2 + 1, i * 2 + 2) if j < pages)
            if h == 0:  # the app host: part of every page comes from a script
                r[f"/p{i}"] = html(js_page(f"{name} p{i}", nxt + ADD.format(n=i), t))
                r[f"/js-{i}"] = html(js_page(f"{name} js {i}", "", t))
                js_only.add(f"http://{name}/js-{i}")
            else:
                body = nxt + "<script>var _paq = [];</script>"
                r[f"/p{i}"] = html(js_page(f"{name} p{i}", body, t))
        r["/"] = html(js_page(f"{name} index", '<a href="/p0">p0</a>', t))
        built.append(Host(name, h, r))
    web = SimWeb(built, outside=["cdn.example.com"])
    return web, [f"http://s{h}.gov.si/" for h in range(hosts)], js_only


def _endless_page(host: str, target: str) -> Resource | None:
    if target == "/site.css":
        return _css()
    m = _NODE.match(target)
    if target != "/" and m is None:
        return None
    n = int(m.group(1)) if m else 0
    # Each page links to two pages further down an endless binary tree, and a script adds a
    # third: the frontier never runs dry and every page is rendered once.
    links = "".join(f'<a href="/p{j}">p{j}</a> ' for j in (2 * n + 1, 2 * n + 2))
    words = text(random.Random(f"{host}{target}"), 1500)
    return html(
        f"<!DOCTYPE html><html><head><title>{host} {target}</title>{HEAD}</head><body>"
        f"<h1>{target}</h1><p>{words}</p>{links}{ADD.format(n=n)}</body></html>"
    )


def endless_js_web(hosts: int) -> tuple[SimWeb, list[str]]:
    built = [
        Host(f"m{h}.gov.si", h, {}, dynamic=lambda t, name=f"m{h}.gov.si": _endless_page(name, t))
        for h in range(hosts)
    ]
    return SimWeb(built, outside=["cdn.example.com"]), [
        f"http://m{h}.gov.si/" for h in range(hosts)
    ]


def quiet_web(hosts: int, pages: int) -> tuple[SimWeb, list[str]]:
    built: list[Host] = []
    for h in range(hosts):
        name = f"q{h}.gov.si"
        r: dict[str, Resource] = {}
        for i in range(pages):
            nxt = " ".join(f'<a href="/p{j}">p{j}</a>' for j in (i * 2 + 1, i * 2 + 2) if j < pages)
            words = text(random.Random(f"{name}{i}"), 1500)
            r[f"/p{i}"] = html(f"<!DOCTYPE html><html><head><title>{name} {i}</title></head>"
                               f"<body><p>{words}</p>{nxt}{FOOTER}</body></html>")  # fmt: skip
        # Text of its own: identical roots would be copies, whose links are not followed.
        root_text = text(random.Random(name), 1500)
        r["/"] = html(f'<html><body><p>{root_text}</p><a href="/p0">p0</a>{FOOTER}</body></html>')
        built.append(Host(name, h, r))
    return SimWeb(built), [f"http://q{h}.gov.si/" for h in range(hosts)]
