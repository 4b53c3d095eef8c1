"""Duplicate decisions on pages built like government sites: a heavy template, little
content."""

from __future__ import annotations

import random
from typing import Any

import pytest
from lxml import etree

from govsi.dedup.signature import (
    KEY_VERSION,
    SHINGLE_CHUNK,
    band_keys,
    bounded_hashes,
    copy_key,
    exact_key,
    is_duplicate,
    lsh_params,
    make_minhash,
    shingle_hashes,
    shingles,
    signature,
    signature_of_text,
    signature_values,
    similarity,
)
from govsi.text.maintext import main_text
from govsi.web.extract import parse_html
from tests.support.govpages import COOKIE, FOOTER, MENU, NEWS_1, NEWS_2, semantic, soup
from tests.support.growth import LINEAR_BOUND, growth


@pytest.mark.parametrize("build", [semantic, soup], ids=["semantic", "div-soup"])
def test_main_text_is_the_content_without_the_template(build) -> None:  # type: ignore[no-untyped-def]
    text = main_text(build(NEWS_1))
    assert "uredbo o spremembah" in text
    for template_word in ("rubrika", "gregorčičeva", "piškotke"):
        assert template_word not in text


@pytest.mark.parametrize(
    ("a", "b", "duplicate"),
    [
        (semantic(NEWS_1), semantic(NEWS_1), True),
        (semantic(NEWS_1), soup(NEWS_1), True),  # the same item in another section's template
        (semantic(NEWS_1), semantic(NEWS_1, date="24. 11. 2026"), True),  # a date in the template
        (soup(NEWS_1, counter=5), soup(NEWS_1, counter=6), True),  # a view counter
        (semantic(NEWS_1), semantic(NEWS_2), False),  # two short items on one heavy template
        (soup(NEWS_1), soup(NEWS_2), False),
        (
            semantic("Ni zadetkov za iskanje 'vloga'."),
            semantic("Ni zadetkov za iskanje 'potni list'."),
            False,
        ),
    ],
    ids=["exact", "other-template", "date", "counter", "short-items", "short-items-soup", "thin"],
)
def test_is_duplicate(a: str, b: str, duplicate: bool) -> None:
    assert is_duplicate(a, b) is duplicate


TITLES = [
    "Vlada sprejela uredbo o javnih naročilih za občine",
    "Ministrstvo objavilo razpis za čistilne naprave v letu 2027",
    "Minister obiskal upravno enoto v Kopru in podelil priznanja",
    "Podaljšan rok za oddajo vlog za subvencije kmetom",
    "Nova pravila za izdajo potnih listov stopijo v veljavo",
    "Javno posvetovanje o spremembah zakona o gozdovih",
    "Sprejet program ukrepov za zmanjšanje emisij v prometu",
    "Državni sekretar predstavil načrt digitalizacije sodišč",
]


def news_list(titles: list[str], column: str = "<div class='col-md-8'>") -> str:
    # A div-soup site whose content column is not named: the list of news is link-dense
    # like the menu, but its links are whole titles, not labels.
    rows = "".join(f"<div class='item'><a href='/n{i}'>{t}</a> 1. 2. 2026</div>"
                   for i, t in enumerate(titles))  # fmt: skip
    return (
        f"<html><body><div class='region-top'>Republika Slovenija</div><div class='c9'>{MENU}"
        f"</div>{column}<h1>Novice</h1>{rows}</div><div class='ft'>{FOOTER}</div></body></html>"
    )


def test_a_list_of_news_is_content_where_a_menu_is_not() -> None:
    text = main_text(news_list(TITLES))
    assert "razpis za čistilne naprave" in text
    assert "rubrika" not in text
    assert not is_duplicate(news_list(TITLES[:4]), news_list(TITLES[4:]))  # page 1 and 2
    assert is_duplicate(news_list(TITLES[1:]), news_list(TITLES[:1] + TITLES[1:]))  # one new


@pytest.mark.parametrize(
    "column",
    ["<div id='content'>", "<div class='content-main col-md-8'>", "<div class='print-body'>"],
)
def test_a_named_content_column_is_the_main_content(column: str) -> None:
    page = (
        f"<html><body><div class='print-head'>Republika Slovenija, ministrstvo</div>{column}"
        f"<p>{NEWS_1}</p></div><p>Natisnjeno s spletnega mesta https://www.gov.si/n1</p>"
        "</body></html>"
    )
    assert main_text(page) == main_text(f"<html><body><main><p>{NEWS_1}</p></main></body></html>")


def test_a_content_column_inside_a_template_part_is_not_the_main_content() -> None:
    page = (
        f"<html><body><div class='sidebar'><div class='content'>{COOKIE}</div></div>"
        f"<div class='vsebina'><p>{NEWS_1}</p></div></body></html>"
    )
    assert "piškotke" not in main_text(page)
    assert "uredbo" in main_text(page)


def test_whole_page_similarity_would_be_fooled_by_the_template() -> None:
    # The reason main_text exists: on whole pages the two items look nearly the same.
    whole_a = set(shingles(" ".join(semantic(NEWS_1).split()), 5))
    whole_b = set(shingles(" ".join(semantic(NEWS_2).split()), 5))
    assert len(whole_a & whole_b) / len(whole_a | whole_b) > 0.5
    assert similarity(semantic(NEWS_1), semantic(NEWS_2)) < 0.2


def test_exact_key_ignores_whitespace_and_case_and_keys_template_only_pages_whole() -> None:
    assert exact_key(semantic("Ena  dva\nTRI štiri")) == exact_key(semantic("ena dva tri ŠTIRI"))
    empty_a = "<html><body><nav>" + MENU + "</nav><main></main><footer>A</footer></body></html>"
    empty_b = "<html><body><nav>" + MENU + "</nav><main></main><footer>B</footer></body></html>"
    assert exact_key(empty_a) == exact_key(empty_a)
    assert exact_key(empty_a) != exact_key(empty_b)
    assert signature(empty_a) is None


@pytest.mark.parametrize(
    ("text", "size", "expected"),
    [
        ("", 3, set()),
        ("a b", 3, {"a b"}),
        ("a b c", 3, {"a b c"}),
        ("a b c d", 3, {"a b c", "b c d"}),
    ],
)
def test_shingles(text: str, size: int, expected: set[str]) -> None:
    assert shingles(text, size) == expected


def test_signatures_are_the_same_in_every_process() -> None:
    # Seeded permutations: stored band keys must match those another process computes.
    a, b = signature(semantic(NEWS_1)), signature(semantic(NEWS_1))
    assert a is not None and b is not None
    bands, rows = lsh_params(0.9, 128)
    assert band_keys(a.hashvalues, bands, rows) == band_keys(b.hashvalues, bands, rows)
    assert all(-(2**63) <= k < 2**63 for k in band_keys(a.hashvalues, bands, rows))


@pytest.mark.parametrize("words", [1, 4, 5, 250, SHINGLE_CHUNK + 700])
def test_signatures_are_datasketchs_own(words: int) -> None:
    # signature_of_text permutes in numpy; datasketch's update_batch is the reference.
    rng = random.Random(words)
    text = " ".join(rng.choice(["občina", "uredba", "zakon", "vlada", "e-uprava", "šola"]) +
                    str(rng.randrange(10 * words)) for _ in range(words))  # fmt: skip
    ours = signature_of_text(text)
    theirs = make_minhash(128)
    hashes = bounded_hashes(shingle_hashes(text))
    for start in range(0, len(hashes), SHINGLE_CHUNK):
        theirs.update_batch(hashes[start : start + SHINGLE_CHUNK].tolist())
    assert ours is not None and (ours.hashvalues == theirs.hashvalues).all()


def test_a_signature_means_what_it_meant() -> None:
    # Stored signatures compare with new ones only if the scheme never changes silently.
    sig = signature_of_text(
        "uredba o spremembah uredbe o upravnem poslovanju v republiki sloveniji"
    )
    assert sig is not None
    assert sig.hashvalues[:6].tolist() == [157858124, 228381502, 616413417, 568332763,
                                           333285079, 1057471636]  # fmt: skip


def test_band_keys_mean_what_crawldb_holds() -> None:
    # page_band rows of earlier crawls are looked up by these keys: their bytes are fixed
    # for a definition of the main text (a new one makes stored keys again: dedup/rekey).
    assert KEY_VERSION == 2
    sig = signature_of_text(
        "uradni list republike slovenije objavlja predpise vlade in ministrstev za leto 2026"
    )
    assert sig is not None
    assert band_keys(sig.hashvalues, 32, 4)[:3] == [4414775790400903146, 8720188753566901353,
                                         5584421630300476945]  # fmt: skip
    assert band_keys(sig.hashvalues, 16, 8)[-1] == -712515904501284962
    assert band_keys(sig.hashvalues, 128, 1)[5] == -8258079088241170302


@pytest.mark.parametrize("words", [0, 1, 5, 250, SHINGLE_CHUNK + 700])
def test_a_signatures_values_are_its_minhashs(words: int) -> None:
    # A worker sends the values alone; the check reads and stores nothing else.
    text = " ".join(f"beseda{i % 97}" for i in range(words))
    values, minhash = signature_values(text), signature_of_text(text)
    if minhash is None:
        assert values is None
        return
    assert values is not None and values.dtype == minhash.hashvalues.dtype
    assert (values == minhash.hashvalues).all()
    assert band_keys(values, 32, 4) == band_keys(minhash.hashvalues, 32, 4)


@pytest.mark.parametrize("threshold", [0.7, 0.8, 0.9])
def test_lsh_params_find_pairs_above_the_threshold(threshold: float) -> None:
    bands, rows = lsh_params(threshold, 128)
    assert bands * rows <= 128
    hit = 1 - (1 - threshold**rows) ** bands
    assert hit >= 0.95  # a pair at the threshold is a candidate at least 19 times in 20
    # And as few false candidates as that allows: one row more per band would miss it.
    more = 1 - (1 - threshold ** (rows + 1)) ** (128 // (rows + 1))
    assert more < 0.95


def test_a_stored_signature_compares_like_the_one_it_came_from() -> None:
    from govsi.copies.index import pack, unpack

    a, b = signature(semantic(NEWS_1)), signature(semantic(NEWS_1 + " Dodatek."))
    assert a is not None and b is not None
    restored = unpack(pack(a.hashvalues), 128)
    assert restored.jaccard(b) == a.jaccard(b)


# -- hostile pages stay linear ------------------------------------------------------------
def _nested(opening: str, n: int, inner: str = "") -> str:
    return f"<html><body>{opening * n}{inner}{'</div>' * n}</body></html>"


@pytest.mark.parametrize(
    "make",
    [
        # 180 KB of nested content columns took 31 s (each looked up its ancestors).
        lambda n: _nested('<div class="content">', n),
        lambda n: _nested('<div class="content">', n, "besedilo"),
        lambda n: _nested('<div id="app">', n, "besedilo"),
        # No content column: every block is judged as a menu (its links and text).
        lambda n: _nested('<div><a href="/x">meni</a> ', n),
        lambda n: _nested('<div class="footer"><div class="vsebina">', n, "x"),
    ],
)
def test_main_text_of_nested_pages_costs_linear_time(make: Any) -> None:
    def run(html: str) -> str:
        return main_text(html)

    assert growth(run, make, 2000) < LINEAR_BOUND


def test_main_text_of_a_deeply_nested_page_is_its_text() -> None:
    # Within libxml2's 2047 levels the answers are what they always were.
    assert main_text(_nested('<div class="content">', 200, "besedilo strani")) == (
        "besedilo strani"
    )
    assert main_text(_nested('<div id="app">', 250, "x y")) == "x y"
    inside_footer = _nested('<div class="footer"><div class="vsebina">', 100, "x")
    # A content column inside the footer is not it; the footer goes, unless it holds most
    # of the page's text (then it is a wrapper named "footer": maintext version 2).
    page = inside_footer.replace("<body>", "<body><p>besedilo strani</p>")
    assert main_text(page) == "besedilo strani"
    assert main_text(inside_footer) == "x"
    # One block of links in another, 100 deep: a menu, gone with all it holds.
    assert main_text(_nested('<div><a href="/x">meni</a> ', 100, "konec")) == ""


@pytest.mark.parametrize(
    ("make", "n"),
    [
        # 20 000 of each took 12.8 s: an XPath union of //main, //article and role="main"
        # merged its node sets in quadratic time.
        (lambda n: "<html><body>" + '<article>a</article><main>b</main><p role="main">c</p>' * n,
         3000),
        # A run of removed siblings: each tail was appended in turn to the same text,
        # copying it again (938 KB of <script>s</script>slovo took 6.7 s).
        (lambda n: "<html><body><p>a</p>" + "<script>s</script>slovo " * n, 5000),
        (lambda n: "<html><body><p>a</p>" + "<nav>s</nav>slovo " * n, 5000),
        # Nested <svg>: each was removed, each removal walking everything below it.
        (lambda n: "<html><body><div class=content>" + "<svg>" * n + "<p>a</p>" * (20 * n), 400),
    ],
)  # fmt: skip
def test_main_text_of_hostile_pages_costs_linear_time(make: Any, n: int) -> None:
    assert growth(main_text, make, n) < LINEAR_BOUND


def test_removed_siblings_leave_their_tails_in_order() -> None:
    words = [f"beseda{i}" for i in range(60)]
    scripts = "".join(f"<script>s()</script>{w} " for w in words[:30])
    navs = "".join(f"<nav>meni</nav>{w} " for w in words[30:])
    assert main_text(f"<html><body><p>a</p>{scripts}{navs}</body></html>") == " ".join(
        ["a", *words]
    )
    # With no previous sibling the tails go to the parent's text, after its own.
    assert main_text(f"<html><body><div>z{scripts}</div></body></html>") == " ".join(
        ["z", *words[:30]]
    )
    nested = "<html><body><p>a</p><svg><svg>x</svg>y</svg>konec</body></html>"
    assert main_text(nested) == "a konec"


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        # Markup, attributes, comments, scripts and styles are not what a reader sees.
        ("<title>T</title><p class=a>Ena dva</p>",
         "<title>T</title><!-- x --><p id=b>Ena <b>dva</b></p><script>var t='123'</script>"
         "<style>p{}</style>", True),
        ("<p>Ena dva</p>", "<p>ENA, dva!</p>", True),  # words, as the main text's key
        # The title, a count in the template, a word anywhere: another page.
        ("<title>Dejavnost 1</title><p>Ena dva</p>", "<title>Dejavnost 2</title><p>Ena dva</p>",
         False),
        ("<p>Ena dva</p><div>109 najdenih</div>", "<p>Ena dva</p><div>30 najdenih</div>", False),
        ("<p>Ena dva</p>", "<p>Ena dva tri</p>", False),
    ],
)  # fmt: skip
def test_a_copy_key_is_what_a_reader_sees(a: str, b: str, same: bool) -> None:
    assert (copy_key(a) == copy_key(b)) is same
    # From a tree the crawl parsed already, the same key, and the tree left as it was.
    root = parse_html(a)
    assert root is not None
    before = etree.tostring(root)
    assert copy_key(a, root) == copy_key(a) and etree.tostring(root) == before
