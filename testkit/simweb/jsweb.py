"""A simulated web where some links, images and text exist only after scripts run.

- ``spa.gov.si``: an app shell (``<div id="app">`` filled by ``/app.js`` from the JSON of
  ``/api/menu``), and a normal-looking page whose script adds a link and an image. Pages
  reached only through those scripts end in ``-js``.
- ``staticno.gov.si``: plain pages whose only scripts need a user (an ``onclick`` footer,
  ``javascript:`` links) or are data (JSON-LD): nothing runs on load, never rendered.
- ``cms.gov.si``: many pages of one template whose script (with cache-busting queries)
  changes nothing we collect, and one app page among them that needs a browser: only the
  template's samples and the app page are rendered, and the template's script is
  downloaded once.
- ``zlobni.gov.si`` (``hostile``): a page whose scripts try every way out of the browser
  towards a loopback port (``build(trap_port=...)``).
- ``poplava.gov.si`` (``build(with_flood=True)``): a page making 2 000 ``fetch()`` calls
  to long URLs, and the host's ordinary pages.
- All ask for a stylesheet, a font and a script from outside scope, which must never be
  requested.
"""

from __future__ import annotations

from testkit.simweb.server import Host, Resource, SimWeb, html

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


# Scripts that need a user, and data: none of it runs when a page loads.
FOOTER = (
    '<footer><a href="#" onclick="return false;">Na vrh</a>'
    ' <a href="javascript:void(0)" onclick="window.print()">Natisni</a>'
    ' <select onchange="location.href=this.value"><option>-</option></select>'
    '<script type="application/ld+json">{"@type": "GovernmentOrganization"}</script></footer>'
)


def static() -> Host:
    pages = [f"/stran-{i}" for i in range(1, 7)]
    links = " ".join(f'<a href="{p}">{p}</a>' for p in pages)
    r = {
        "/": html(_page("Static", f"{TEXT}{links}{FOOTER}", head="")),
        "/lib.js": Resource(b"1", headers={"Content-Type": "text/javascript"}),
    }
    r.update({p: html(_page(p, _text(p) + FOOTER, head="")) for p in pages})
    return Host("staticno.gov.si", 2, r)


# The template's script: it decorates the page and adds nothing we collect.
TEMA_JS = "document.documentElement.className += ' js';"
APP2_JS = """
const app = document.getElementById('app');
app.innerHTML = '<a href="/iz-aplikacije-js">Iz aplikacije</a>';
"""
CMS_PAGES = [f"/novica-{i}" for i in range(1, 13)]


def cms() -> Host:
    def page(title: str, body: str, version: int) -> Resource:
        head = f'{HEAD}<script src="/tema.js?v={version}"></script>'
        return html(_page(title, body + FOOTER, head=head))

    links = " ".join(f'<a href="{p}">{p}</a>' for p in CMS_PAGES)
    r = {
        "/": page("CMS", f'{TEXT}{links} <a href="/aplikacija">A</a>', 1),
        "/tema.js": Resource(TEMA_JS.encode(), headers={"Content-Type": "text/javascript"}),
        "/aplikacija": page("App", '<div id="app"></div><script src="/app2.js"></script>', 1),
        "/app2.js": Resource(APP2_JS.encode(), headers={"Content-Type": "text/javascript"}),
        "/iz-aplikacije-js": html(_page("Iz aplikacije", _text("Iz aplikacije"))),
    }
    # Cache-busting versions differ between pages: still one template, one signature.
    r.update({p: page(p, _text(p), 1 + i % 2) for i, p in enumerate(CMS_PAGES)})
    return Host("cms.gov.si", 3, r)


def hostile(trap_port: int) -> Host:
    """A page whose scripts try each way out of the browser to ``127.0.0.1:trap_port``."""
    trap = f"127.0.0.1:{trap_port}"
    escapes = f"""
    fetch('/skok').catch(() => 0);                              // redirects to the trap
    fetch('http://{trap}/fetch').catch(() => 0);
    fetch('http://169.254.169.254/latest/meta-data/').catch(() => 0);
    fetch('/oddaj', {{method: 'POST', body: 'x'}}).catch(() => 0);
    try {{ new WebSocket('ws://{trap}/ws'); }} catch (e) {{}}
    try {{ new WebSocket('ws://' + location.host + '/ws'); }} catch (e) {{}}
    window.open('http://{trap}/popup');
    if (navigator.serviceWorker) navigator.serviceWorker.register('/sw.js').catch(() => 0);
    const a = document.createElement('a'); a.href = '/datoteka.bin'; a.download = 'x.bin';
    document.body.appendChild(a); a.click();
    const f = document.createElement('iframe'); f.src = 'http://{trap}/frame';
    document.body.appendChild(f);
    const i = document.createElement('img'); i.src = 'http://{trap}/img';
    document.body.appendChild(i);
    const p = document.createElement('p'); p.id = 'tu'; p.textContent = 'Skripta je tekla.';
    document.body.appendChild(p);
    setTimeout(() => {{ location.href = 'http://{trap}/stran'; }}, 50);
    """
    r = {
        "/": html(_page("Zlobni", _text("Zlobni") + '<a href="/velik">V</a>'
                        '<a href="/odhod">O</a>'
                        f"<script>{escapes}</script>", head="")),
        # Leaves for the trap while its picture is still loading: Chromium then stops the
        # document's load and never fires the load event (the render must not wait for it).
        "/odhod": html(_page("Odhod", _text("Odhod") + '<img src="/pocasna.png">'
                             "<script>document.body.append('Odhod je tekel.');"
                             f"setTimeout(() => {{ location.href = 'http://{trap}/odhod'; }}, 0);"
                             "</script>", head="")),
        "/pocasna.png": Resource(b"\x89PNG", headers={"Content-Type": "image/png"}, stall=2),
        # A script that grows the page past any DOWNLOAD_MAXSIZE the tests set.
        "/velik": html(_page("Velik", _text("Velik")
                             + "<script>document.body.append('x'.repeat(8e6));</script>")),
        "/skok": Resource(b"", 302, {"Location": f"http://{trap}/leak"}),
        "/sw.js": Resource(b"self.addEventListener('fetch', () => 0);",
                           headers={"Content-Type": "text/javascript"}),
        "/datoteka.bin": Resource(b"\0" * 100, headers={
            "Content-Type": "application/octet-stream",
            "Content-Disposition": "attachment; filename=x.bin"}),
    }  # fmt: skip
    return Host("zlobni.gov.si", 4, r)


FLOOD_FETCHES = 2000
FLOOD_PAGES = [f"/stran-{i}" for i in range(1, 13)]


def flood() -> Host:
    """``poplava.gov.si``: an app page whose script makes 2 000 ``fetch()`` calls, every
    other one to a URL longer than any MAX_URL_LENGTH, the rest a few hundred characters
    long; and a dozen ordinary pages that must not wait behind them."""
    script = f"""
    const pad = 'x'.repeat(300), past = 'y'.repeat(5000);
    for (let i = 0; i < {FLOOD_FETCHES}; i++) {{
      fetch('/api/' + i + '?' + pad + (i % 2 ? past : '')).catch(() => 0);
    }}
    """
    links = " ".join(f'<a href="{p}">{p}</a>' for p in FLOOD_PAGES)
    r = {
        "/": html(_page("Poplava", f'{links}<div id="app"></div><script>{script}</script>',
                        head="")),
    }  # fmt: skip
    r.update({p: html(_page(p, _text(p))) for p in FLOOD_PAGES})

    def api(target: str) -> Resource | None:
        if target.startswith("/api/"):
            return Resource(b"{}", headers={"Content-Type": "application/json"})
        return None

    return Host("poplava.gov.si", 5, r, dynamic=api)


SEEDS = ["http://spa.gov.si/", "http://staticno.gov.si/", "http://cms.gov.si/"]
JS_ONLY = {"/storitve-js", "/vloge-js", "/dodano-js", "/iz-b-js"}


def build(trap_port: int | None = None, with_flood: bool = False) -> SimWeb:
    hosts = [spa(), static(), cms()]
    if trap_port is not None:
        hosts.append(hostile(trap_port))
    if with_flood:
        hosts.append(flood())
    return SimWeb(hosts, outside=["cdn.example.com"])
