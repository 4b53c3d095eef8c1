"""What runs when a page loads, its script signature, and whether it plainly needs a
browser (govsi.render.scripts): the pure half of RENDER_JS=auto."""

from __future__ import annotations

import pytest

from govsi.render.scripts import (
    Yield,
    needs_browser,
    onload_scripts,
    page_yield,
    rendering_adds,
    script_signature,
)
from govsi.web.extract import ExtractedLinks, parse_html
from govsi.web.urls import in_scope
from tests.support.growth import LINEAR_BOUND, cpu_cost, growth

PAGE = "https://a.gov.si/stran"
ARTICLE = "<p>" + "Vlada je sprejela uredbo o javnih naročilih. " * 8 + "</p>"


def tokens(body: str, url: str = PAGE) -> tuple[str, ...]:
    html = f"<html><head><title>t</title></head><body>{body}</body></html>"
    return onload_scripts(parse_html(html), url, lambda u: in_scope(u, ["gov.si"]))


def signature(body: str, url: str = PAGE) -> str | None:
    return script_signature(tokens(body, url))


@pytest.mark.parametrize(
    ("body", "runs"),
    [
        ("<p>x</p>", 0),
        ("<script>document.body.append('x')</script>", 1),
        ("<script src='/app.js'></script>", 1),
        ("<script type='module' src='/app.mjs'></script>", 1),
        ("<script type='text/javascript'>go()</script>", 1),
        ("<script type='application/javascript; charset=utf-8'>go()</script>", 1),
        # Never loaded by our browser: out of scope; or never run: data, templates, ...
        ("<script src='https://cdn.example.com/a.js'></script>", 0),
        ("<script type='application/ld+json'>{\"@type\": \"Org\"}</script>", 0),
        ("<script type='application/json'>{}</script>", 0),
        ("<script type='text/template'><a href='/x'>x</a></script>", 0),
        ("<script type='text/plain'>go()</script>", 0),
        ("<script nomodule src='/legacy.js'></script>", 0),
        ("<template><script>go()</script></template>", 0),
        ("<noscript><script>go()</script></noscript>", 0),
        ("<script>   </script>", 0),
        # Handlers that fire while a page loads count; those that wait for a user do not.
        ("<img src='/a.png' onload='go()'>", 1),
        ("<img src='/a.png' onerror='this.src=\"/b.png\"'>", 1),
        ("<a href='#' onclick='return false;'>Na vrh</a>", 0),
        ("<select onchange='location.href=this.value'></select>", 0),
        ("<form onsubmit='return check()'></form>", 0),
        ("<div onmouseover='show()' onkeyup='k()' onfocus='f()'></div>", 0),
        ("<a href='javascript:void(0)'>x</a> <a href='javascript:go()'>y</a>", 0),
        ("<img onload='  '>", 0),
    ],
)  # fmt: skip
def test_what_runs_on_load(body: str, runs: int) -> None:
    assert len(tokens(body)) == runs


def test_a_page_where_nothing_runs_on_load_has_no_signature() -> None:
    footer = (
        "<footer><a href='#' onclick='return false;'>Na vrh</a>"
        "<script type='application/ld+json'>{}</script></footer>"
    )
    assert signature(footer) is None
    assert script_signature(()) is None
    assert onload_scripts(None, PAGE, lambda u: True) == ()


@pytest.mark.parametrize(
    ("first", "second"),
    [
        # One template on two pages: cache-busting queries and build hashes don't split it.
        ("<script src='/tema.js?v=1'></script>", "<script src='/tema.js?v=2'></script>"),
        ("<script src='/js/app.3f2a9c1b.js'></script>",
         "<script src='/js/app.9e8d7c6b.js'></script>"),
        ("<script src='/main-4d5e6f7a8b.js'></script>",
         "<script src='/main-0a1b2c3d4e.js'></script>"),
        ("<script src='/jquery-3.6.0.min.js'></script>",
         "<script src='/jquery-3.7.1.min.js'></script>"),
        # Per-page data in an inline script: the same code.
        ("<script>var pageId = 1234; init('Novice');</script>",
         "<script>var pageId = 99; init('Vloge in obrazci');</script>"),
        ("<script>jQuery.extend(Drupal.settings, {\"path\": \"/a\", \"ids\": [1, 2, 3]});</script>",
         "<script>jQuery.extend(Drupal.settings, {\"path\": \"/b/c\", \"ids\": [7]});</script>"),
        # Nonces are attributes, not code; order and repeats don't matter.
        ("<script nonce='abc'>go()</script>", "<script nonce='xyz'>go()</script>"),
        ("<script src='/a.js'></script><script src='/b.js'></script>",
         "<script src='/b.js'></script><script src='/a.js'></script><script src='/a.js'></script>"),
    ],
)  # fmt: skip
def test_pages_of_one_template_share_a_signature(first: str, second: str) -> None:
    assert signature(first) is not None
    assert signature(first) == signature(second)


def test_one_cms_on_two_hosts_shares_a_signature() -> None:
    body = "<script src='/wp-includes/js/jquery.js?ver=3.7'></script><script>init()</script>"
    assert signature(body, "https://a.gov.si/") == signature(body, "https://b.gov.si/x")
    # Another host's script is that host's: not the same as one of the page's own.
    assert signature("<script src='https://static.gov.si/x.js'></script>") != signature(
        "<script src='/x.js'></script>"
    )


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("<script>renderMenu()</script>", "<script>trackVisit()</script>"),
        ("<script src='/app.js'></script>", "<script src='/admin.js'></script>"),
        ("<script src='/app.js'></script>", "<script src='/app.js'></script><script>go()</script>"),
        ("<img onload='a()'>", "<img onerror='a()'>"),
    ],
)  # fmt: skip
def test_different_code_has_different_signatures(first: str, second: str) -> None:
    assert signature(first) != signature(second)


def test_a_hostile_script_is_read_in_linear_time() -> None:
    # Unterminated strings, comments and templates, repeated: each would make a
    # backtracking reader start over at every position (quadratic).
    hostile = '"\\"' * 100_000 + "/*" * 100_000 + "`\\`" * 100_000 + "window . " * 50_000
    assert len(tokens(f"<script>{hostile}</script>")) == 1


ARTICLE_PAGE = f"<div id='app'>{ARTICLE}</div>"


@pytest.mark.parametrize(
    ("html", "reason"),
    [
        ("<html><body><div id='app'></div><script src='/app.js'></script></body></html>",
         "app root"),
        ("<html><body><div id='root'><p>Nalaganje ...</p></div></body></html>", "app root"),
        ("<html><body ng-app='eu'><div></div></body></html>", "app root"),
        ("<html><body><noscript>Za delovanje omogočite JavaScript.</noscript>"
         f"{ARTICLE}</body></html>", "noscript"),
        ("<html><body><noscript>Please enable JavaScript</noscript></body></html>", "noscript"),
        ("<html><body><h1>e-Uprava</h1><script>render()</script></body></html>", "empty body"),
        # A page with its content in the HTML needs no browser, scripts or not.
        (f"<html><body>{ARTICLE}<script>analytics()</script></body></html>", None),
        (f"<html><body>{ARTICLE_PAGE}</body></html>", None),  # server-rendered
        (f"<html><body><noscript><img src='/pixel.gif'></noscript>{ARTICLE}</body></html>",
         None),
        ("<html><body><p>Kratko obvestilo.</p></body></html>", None),  # short, no scripts
        # Text inside scripts, templates and <noscript> is not visible text.
        ("<html><body><script>var t = '" + "x" * 500 + "';</script></body></html>",
         "empty body"),
        ("", None),
    ],
)  # fmt: skip
def test_needs_browser(html: str, reason: str | None) -> None:
    assert needs_browser(parse_html(html)) == reason


@pytest.mark.timeout(30)
def test_needs_browser_is_linear_on_nested_app_roots() -> None:
    # Each app root's text is counted once, bottom-up, not once per enclosing root (lxml
    # keeps up to 255 levels: 200 nested roots around 400 KB of text).
    depth = 200
    html = "<div id='app'>" * depth + ARTICLE * 1000 + "</div>" * depth
    assert needs_browser(parse_html(f"<html><body>{html}</body></html>")) is None


PLAIN = Yield(frozenset({"a", "b"}), frozenset({"i"}), 1000)


@pytest.mark.parametrize(
    ("rendered", "adds"),
    [
        (PLAIN, False),
        (Yield(frozenset({"a"}), frozenset(), 900), False),  # less is not more
        (Yield(frozenset({"a", "b", "c"}), frozenset({"i"}), 1000), True),  # a new link
        (Yield(frozenset({"a", "b"}), frozenset({"i", "j"}), 1000), True),  # a new image
        (Yield(frozenset({"a", "b"}), frozenset({"i"}), 1150), False),  # a little more text
        (Yield(frozenset({"a", "b"}), frozenset({"i"}), 1500), True),  # much more text
    ],
)
def test_rendering_adds(rendered: Yield, adds: bool) -> None:
    assert rendering_adds(PLAIN, rendered) is adds


def test_page_yield() -> None:
    root = parse_html("<html><body><p>abc</p></body></html>")
    found = ExtractedLinks(links=["https://a.gov.si/x"], images=["https://a.gov.si/i.png"])
    got = page_yield(root, found)
    assert got.links == {"https://a.gov.si/x"} and got.images == {"https://a.gov.si/i.png"}
    assert got.text_chars >= 3
    assert page_yield(None, ExtractedLinks(links=[], images=[])).text_chars == 0


@pytest.mark.parametrize("opening", ['<div id="app">', '<div class="content">', "<noscript>"])
def test_needs_browser_costs_linear_time_on_nested_pages(opening: str) -> None:
    def page(n: int) -> object:
        closing = "</noscript>" if opening == "<noscript>" else "</div>"
        return parse_html(f"<html><body>{opening * n}x{closing * n}</body></html>")

    assert growth(needs_browser, page, 2000) < LINEAR_BOUND


def test_needs_browser_reads_the_text_of_nested_noscripts_once() -> None:
    # Each <noscript> joined the text of all those inside it: 215 KB took 5 s.
    def page(n: int) -> object:
        return parse_html("<html><body>" + "<noscript>besedilo " * n + "</body></html>")

    assert growth(needs_browser, page, 400) < LINEAR_BOUND
    asking = "<noscript>x " * 300 + "Omogočite JavaScript"
    assert needs_browser(parse_html(f"<html><body>{asking}</body></html>")) == "noscript"


def test_onload_scripts_deep_in_a_page_cost_what_they_cost_at_the_top() -> None:
    # Each script looked for a <template> or <noscript> among its ancestors, and lxml let
    # each element go with a walk up to the root: 2000 levels deep cost 100 x as much.
    def page(depth: int) -> object:
        return parse_html("<html><body>" + "<div>" * depth + "<script>go()</script>" * 5000)

    def run(root: object) -> tuple[str, ...]:
        return onload_scripts(root, PAGE, lambda src: True)  # type: ignore[arg-type]

    assert cpu_cost(run, page(2000)) / cpu_cost(run, page(10)) < 2.5
    assert len(run(page(100))) == 5000
    inert = "<template><div><noscript>" + "<div>" * 50 + "<script>go()</script>" * 3
    assert run(parse_html(f"<html><body>{inert}</body></html>")) == ()


def test_onload_scripts_of_a_page_of_handlers_cost_linear_time() -> None:
    # The candidates are found by a predicate: a path through the attribute axis and back
    # (@*[...]/..) is quadratic in libxml2, 80 000 such elements took a minute.
    def page(n: int) -> object:
        element = '<div id="d" onclick="x()" onload="y()"><script>a()</script></div>'
        return parse_html("<html><body>" + element * n)

    def run(root: object) -> tuple[str, ...]:
        return onload_scripts(root, PAGE, lambda src: True)  # type: ignore[arg-type]

    assert growth(run, page, 4000) < LINEAR_BOUND
    assert len(run(page(3))) == 6  # each element's script and its onload (not onclick)
