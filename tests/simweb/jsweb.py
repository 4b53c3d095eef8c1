"""A simulated web where some links, images and text exist only after scripts run.

- ``spa.gov.si``: an app shell (``<div id="app">`` filled by ``/app.js`` from the JSON of
  ``/api/menu``), and a normal-looking page whose script adds a link and an image. Pages
  reached only through those scripts end in ``-js``.
- ``staticno.gov.si``: plain pages, no scripts: rendering adds nothing there.
- Both ask for a stylesheet, a font and a script from outside scope, which the browser must
  never request.
"""

from __future__ import annotations

import json

from tests.simweb.server import Host, Resource, SimWeb, html

TEXT = "<p>" + "Upravna enota izdaja osebne dokumente in vodi postopke. " * 6 + "</p>"


def _text(topic: str) -> str:
    # Each page its own content, or the duplicate detector would rightly merge them.
    return f"<p>{topic}: " + " ".join(f"{topic} {i} je točka seznama." for i in range(40)) + "</p>"


HEAD = (
    '<link rel="stylesheet" href="/site.css">'
    '<link rel="preload" href="/font.woff2" as="font" crossorigin>'
    '<script src="https://cdn.example.com/analytics.js"></script>'
)
APP_JS = """
fetch('/api/menu').then(r => r.json()).then(items => {
  const app = document.getElementById('app');
  for (const it of items) {
    const a = document.createElement('a'); a.href = it.href; a.textContent = it.title;
    app.appendChild(a);
  }
  const img = document.createElement('img'); img.src = '/grb-js.png'; app.appendChild(img);
});
"""
ADD_LINK = """
document.addEventListener('DOMContentLoaded', () => {
  const a = document.createElement('a'); a.href = '/dodano-js'; a.textContent = 'Dodano';
  document.body.appendChild(a);
});
"""
B_JS = """
const a = document.createElement('a'); a.href = '/iz-b-js'; a.textContent = 'Iz b';
document.body.appendChild(a);
"""
MORE_SCRIPTS = (
    '<script src="/a.js"></script><script src="/b.js"></script>'
    '<script src="/zasebno/skrito.js"></script><script src="http://staticno.gov.si/lib.js">'
    "</script>"
)
MENU = '[{"href": "/storitve-js", "title": "Storitve"}, {"href": "/vloge-js", "title": "Vloge"}]'


def _page(title: str, body: str, head: str = HEAD) -> str:
    return (
        f"<!DOCTYPE html><html><head><title>{title}</title>{head}</head>"
        f"<body><h1>{title}</h1>{body}</body></html>"
    )


INDEX = (
    f'{TEXT}<a href="/app">Aplikacija</a> <a href="/navadna">N</a> <a href="/vec-skript">V</a>'
    f' <a href="/visi">H</a><script>{ADD_LINK}</script>'
)


def spa() -> Host:
    r = {
        "/": html(_page("SPA", INDEX)),
        "/app": html(_page("App", '<div id="app"></div><script src="/app.js"></script>')),
        "/app.js": Resource(APP_JS.encode(), headers={"Content-Type": "text/javascript"}),
        "/api/menu": Resource(MENU.encode(), headers={"Content-Type": "application/json"}),
        "/navadna": html(_page("Navadna", _text("Navadna"))),
        # Scripts of its own host (spaced by the delay), one robots.txt forbids, and one
        # of another host (refused: that host's turn is the frontier's).
        "/vec-skript": html(_page("Več skript", _text("Skripte") + MORE_SCRIPTS)),
        "/a.js": Resource(b"fetch('/api/menu');", headers={"Content-Type": "text/javascript"}),
        "/b.js": Resource(B_JS.encode(), headers={"Content-Type": "text/javascript"}),
        "/zasebno/skrito.js": Resource(b"1", headers={"Content-Type": "text/javascript"}),
        "/iz-b-js": html(_page("Iz b", _text("Iz b"))),
        # A script that never ends: the renderer hangs, the page never loads.
        "/visi": html(_page("Visi", _text("Visi") + "<script>while (true) {}</script>")),
        "/robots.txt": Resource(
            b"User-agent: *\nDisallow: /zasebno/\n", headers={"Content-Type": "text/plain"}
        ),
        "/storitve-js": html(_page("Storitve", _text("Storitve"))),
        "/vloge-js": html(_page("Vloge", _text("Vloge"))),
        "/dodano-js": html(_page("Dodano", _text("Dodano"))),
        "/grb-js.png": Resource(b"\x89PNG\r\n\x1a\n", headers={"Content-Type": "image/png"}),
        "/site.css": Resource(b"body{}", headers={"Content-Type": "text/css"}),
        "/font.woff2": Resource(b"x", headers={"Content-Type": "font/woff2"}),
    }
    return Host("spa.gov.si", 1, r)


def static() -> Host:
    pages = [f"/stran-{i}" for i in range(1, 7)]
    links = " ".join(f'<a href="{p}">{p}</a>' for p in pages)
    r = {
        "/": html(_page("Static", f"{TEXT}{links}", head="")),
        "/lib.js": Resource(b"1", headers={"Content-Type": "text/javascript"}),
    }
    r.update({p: html(_page(p, _text(p), head="")) for p in pages})
    return Host("staticno.gov.si", 2, r)


SEEDS = ["http://spa.gov.si/", "http://staticno.gov.si/"]
JS_ONLY = {"/storitve-js", "/vloge-js", "/dodano-js", "/iz-b-js"}


def build() -> SimWeb:
    return SimWeb([spa(), static()], outside=["cdn.example.com"])


def browser_args(web: SimWeb) -> str:
    """RENDER_BROWSER_ARGS (a JSON list) that make Chromium resolve the simulated hosts,
    and nothing else, to loopback: a rendering test can never reach the internet."""
    rules = [f"MAP {name} {ip}" for name, ip in web.hosts_map().items()]
    return json.dumps(["--host-resolver-rules=" + ", ".join([*rules, "MAP * ~NOTFOUND"])])
