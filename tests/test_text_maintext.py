"""The main text of pages built like the real ones: what is read, what is left out, and
that hostile trees cost time and memory linear in their size."""

from __future__ import annotations

from typing import Any

import pytest

from govsi.text import names
from govsi.text.maintext import VERSION, main_text, normalized, readable_main_text
from govsi.web.extract import parse_html
from tests.support.growth import LINEAR_BOUND, growth

P1 = "Vlada je na današnji seji sprejela uredbo o spremembah uredbe o javnih naročilih."
P2 = "Uredba začne veljati naslednji dan po objavi v Uradnem listu Republike Slovenije."
P3 = "Ministrstvo bo do konca leta pripravilo navodila za naročnike, ki jo bodo uporabljali."
MENU = "".join(f'<li><a href="/r{i}">Rubrika {i}</a></li>' for i in range(12))
COOKIE = "Spletno mesto uporablja piškotke za boljšo uporabniško izkušnjo in statistiko obiska."
FOOTER = "Gregorčičeva ulica 20, 1000 Ljubljana, telefon 01 478 10 00, gp.gs@gov.si"


def page(body: str) -> str:
    return (
        f'<html><head><title>t</title><script>var x = "skript";</script></head><body>'
        f'<div class="cc-window"><p>{COOKIE}</p><button>Sprejmem</button></div>'
        f'<header><a href="/">Republika Slovenija</a></header><nav><ul>{MENU}</ul></nav>'
        f"{body}<footer><p>{FOOTER}</p></footer></body></html>"
    )


def news_list(n: int, summaries: bool) -> str:
    return "".join(
        f'<li><a href="/novice/{i}">Vlada sprejela sklep številka {i} o javnih naročilih</a>'
        f"<span>{i}. 5. 2024</span>{f'<p>Povzetek novice {i}.</p>' if summaries else ''}</li>"
        for i in range(n)
    )


# fmt: off
CASES = {
    "article in main": (
        page(
            f"<main><article><h1>Naslov</h1><p>{P1}</p><p>{P2}</p>"
            f'<div class="share">Deli: Facebook X</div></article></main>'
        ),
        [P1, P2],
        ["Deli", "Rubrika", "piškotke", "Gregorčičeva", "skript"],
    ),
    "template only": (
        page("<main></main>"),
        [],
        ["Rubrika", "piškotke", "Gregorčičeva", "Republika"],
    ),
    "e-prostor column": (
        page(
            '<div class="container"><div class="c-layout-sidebar-menu"><ul>'
            f'{MENU}</ul></div><div class="c-layout-sidebar-content "><h1>Geodetski podatki'
            f"</h1><p>{P1}</p><p>{P2}</p></div></div>"
        ),
        [P1, P2],
        ["Rubrika"],
    ),
    "e-prostor hub of links": (
        page(
            '<div class="container"><div class="c-layout-sidebar-content "><h1>Transformacija'
            "</h1><ul>"
            + "".join(f'<li><a href="/t{i}">Model {i}</a></li>' for i in range(6))
            + "</ul></div></div>"
        ),
        ["Transformacija", "Model 0", "Model 5"],
        ["Rubrika", "piškotke"],
    ),
    "news list with summaries": (
        page(
            f'<main><h1>Novice</h1><ul class="news-list">{news_list(8, True)}</ul>'
            '<div class="pager"><a href="?stran=2">2</a> <a href="?stran=3">3</a></div></main>'
        ),
        ["sklep številka 0", "sklep številka 7", "Povzetek novice 3"],
        ["Rubrika", "stran"],
    ),
    "news list of titles, cookie bar first": (
        page(f'<main class="col-md-8"><h1>Novice</h1><ul>{news_list(10, False)}</ul></main>'),
        ["sklep številka 0", "sklep številka 9"],
        ["piškotke", "Rubrika"],
    ),
    "div soup, column named": (
        page(
            f'<div class="wrap"><div id="vsebina"><h1>Naslov</h1><p>{P1}</p><p>{P2}</p>'
            f'</div><div class="c2"><ul>{MENU}</ul></div></div>'
        ),
        [P1, P2],
        ["Rubrika", "Gregorčičeva"],
    ),
    "no hints at all": (
        f"<html><body><div><div><a href='/'>Domov</a> <a href='/a'>A</a> <a href='/b'>B</a> "
        f"<a href='/c'>C</a></div><div><p>{P1}</p><p>{P2}</p><p>{P3}</p></div></div>"
        "</body></html>",
        [P1, P2, P3],
        ["Domov"],
    ),
    "hidden decoy and comments": (
        page(
            f'<article><p>{P1} Pišite na evem<span style="display:none">ping</span>@gov.si.'
            f'</p><p>{P2}</p><div class="comments"><p>{P3}</p></div></article>'
        ),
        [P1, P2, "evem @gov.si"],
        ["ping", "naročnike"],
    ),
    "print view": (
        f'<html><body><div class="print-head">Republika Slovenija</div><div class="print-body">'
        f"<h1>Naslov</h1><p>{P1}</p></div><p>Natisnjeno s spletnega mesta "
        "https://www.gov.si/novice/naslov/ dne 5. 5. 2024</p></body></html>",
        [P1],
        ["Natisnjeno", "Republika"],
    ),
    "article in sections of one class": (
        page(
            "<div>"
            + "".join(
                f'<div class="section"><div><div><p>{p}</p><p>{p}</p></div></div></div>'
                for p in (P1, P2, P3)
            )
            + "</div>"
        ),
        [P1, P2, P3],
        ["Rubrika"],
    ),
    "hub of teasers in main": (
        page(
            f"<main><div><p>{P1}</p></div>"
            + "".join(
                f'<div class="teaser"><h2><a href="/t{i}">Prijava kršitve {i}</a></h2>'
                f"<p>Kratek opis prijave {i}.</p></div>"
                for i in range(8)
            )
            + "</main>"
        ),
        [P1, "Prijava kršitve 0", "Kratek opis prijave 7"],
        ["Rubrika"],
    ),
    "a page of menus alone": (
        "<html><body><div>"
        + "".join(f"<a href='/m{i}'>Meni {i}</a> " for i in range(9))
        + "</div></body></html>",
        [],
        ["Meni"],
    ),
    "related box and byline inside the article": (
        page(
            f'<article><p class="byline">Avtor: Janez Novak</p><p>{P1}</p><p>{P2}</p>'
            '<div class="related"><h3>Sorodne novice</h3><ul>'
            + "".join(f'<li><a href="/s{i}">Sorodna {i}</a></li>' for i in range(5))
            + "</ul></div></article>"
        ),
        [P1, P2],
        ["Sorodn", "Janez"],
    ),
}
# fmt: on


@pytest.mark.parametrize(("html", "present", "absent"), CASES.values(), ids=CASES.keys())
def test_main_text_is_the_content_a_reader_reads(
    html: str, present: list[str], absent: list[str]
) -> None:
    text = readable_main_text(html)
    for part in present:
        assert part in text, (part, text)
    for part in absent:
        assert part not in text, (part, text)
    if not present:
        assert text == ""


def test_main_text_is_the_readable_text_normalized_and_a_root_is_consumed() -> None:
    html = CASES["article in main"][0]
    assert main_text(html) == normalized(readable_main_text(html))
    assert main_text(html).startswith("naslov vlada je na današnji seji")
    root = parse_html(html)
    assert readable_main_text(html, root) == readable_main_text(html)
    assert VERSION == 2


def test_text_runs_are_joined_by_single_spaces_and_tails_kept() -> None:
    html = (f"<html><body><article><p>{P1}<script>x()</script>  konec\n\n odstavka"
            f"</p><p>{P2}</p></article></body></html>")  # fmt: skip
    assert readable_main_text(html) == f"{P1} konec odstavka {P2}"


def test_empty_and_broken_input() -> None:
    for html in ("", "   ", "<html></html>", "<script>x</script>", "\x00\x00", "<<<>>>"):
        assert isinstance(readable_main_text(html), str)
    assert readable_main_text("<p>" + P1 + "</p>") == P1


def test_the_names_judged_are_kept_within_their_bound() -> None:
    for i in range(names.NAMES_CACHE + 50):
        readable_main_text(f'<div class="c{i}"><p>{P1}</p></div>')
    assert len(names.judged) <= names.NAMES_CACHE
    huge = "x" * (4 * names.NAMES_MAX)
    assert P1 in readable_main_text(f'<div class="{huge}"><p>{P1}</p></div>')
    assert huge not in names.judged


@pytest.mark.parametrize(
    ("make", "n"),
    [
        # Nested tables: every cell a block, scores given three levels up only.
        (lambda n: "<html><body>" + "<table><tr><td>" * n + P1 + "</td></tr></table>" * n, 400),
        # Siblings of one class beside the best: each sibling's best found by bisection.
        (lambda n: "<html><body><div>" + "".join(
            f'<div class="s"><div><div><p>{P1} {i}</p></div></div></div>' for i in range(n))
            + "</div>", 500),
        # A chain of single children above the best: the climb looks at each once.
        (lambda n: "<html><body>" + "<div>" * n + f"<p>{P1}</p>" * 3 + "</div>" * n, 500),
        # Template parts in a run, each with a tail; hidden parts nested.
        (lambda n: f"<html><body><p>{P1}</p>" + "<nav>x</nav>slovo " * n, 2000),
        (lambda n: f"<html><body><p>{P1}</p>" + '<div hidden><p>x</p>' * n, 500),
        # Many candidates scoring the same: the five best sorted once.
        (lambda n: "<html><body>" + f"<div><p>{P1}</p></div>" * n, 2000),
        # <main> and <article> everywhere.
        (lambda n: "<html><body>" + f"<main><article><p>{P1}</p></article></main>" * n, 1000),
    ],
)  # fmt: skip
def test_main_text_of_hostile_trees_costs_linear_time(make: Any, n: int) -> None:
    assert growth(main_text, make, n) < LINEAR_BOUND


def test_a_deep_tree_is_read_to_the_parsers_depth_limit() -> None:
    def deep(n: int) -> str:
        return "<html><body>" + "<div>" * n + P1 + "</div>" * n + "</body></html>"

    assert readable_main_text(deep(1000)) == P1
    # Past libxml2's 2048 levels the parser gives up the rest of the page, not maintext.
    assert readable_main_text(deep(3000)) == ""
