"""Rendering decisions without a browser: which pages need one, what it may load, and how
a host's samples decide whether it is rendered."""

from __future__ import annotations

import os

import pytest

from govsi.extract import parse_html
from govsi.rendering import (
    RenderLearner,
    Yield,
    blocked_resource,
    find_chromium,
    needs_browser,
    render_mode,
    rendering_adds,
    scripts_may_change,
)

ARTICLE = "<p>" + "Vlada je sprejela uredbo o javnih naročilih. " * 8 + "</p>"


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
        (f"<html><body><div id='app'>{ARTICLE}</div></body></html>", None),  # server-rendered
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


@pytest.mark.parametrize(
    ("resource_type", "url", "in_scope", "blocked"),
    [
        ("document", "https://e-uprava.gov.si/", True, None),
        ("script", "https://e-uprava.gov.si/app.js", True, None),
        ("xhr", "https://e-uprava.gov.si/api/menu", True, None),
        ("fetch", "https://evem.gov.si/api", True, None),
        ("script", "https://cdn.example.com/lib.js", False, "out of scope"),
        ("xhr", "https://www.google-analytics.com/collect", False, "out of scope"),
        ("image", "https://e-uprava.gov.si/logo.png", True, "image"),
        ("stylesheet", "https://e-uprava.gov.si/site.css", True, "stylesheet"),
        ("font", "https://e-uprava.gov.si/f.woff2", True, "font"),
        ("media", "https://e-uprava.gov.si/v.mp4", True, "media"),
        ("script", "data:text/javascript,1", False, None),
        ("document", "ftp://e-uprava.gov.si/x", False, "scheme"),
    ],
)
def test_blocked_resource(
    resource_type: str, url: str, in_scope: bool, blocked: str | None
) -> None:
    assert blocked_resource(resource_type, url, in_scope) == blocked


@pytest.mark.parametrize(
    ("value", "mode"), [(None, "auto"), ("", "auto"), ("OFF", "off"), (" always ", "always")]
)
def test_render_mode(value: str | None, mode: str) -> None:
    assert render_mode(value) == mode


def test_render_mode_refuses_unknown_values() -> None:
    with pytest.raises(ValueError, match="RENDER_JS"):
        render_mode("sometimes")


def test_find_chromium(tmp_path) -> None:  # type: ignore[no-untyped-def]
    fake = tmp_path / "chromium"
    fake.write_text("#!/bin/sh\n")
    assert find_chromium(str(fake)) is None  # not executable
    os.chmod(fake, 0o755)
    assert find_chromium(str(fake)) == str(fake)


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


def test_a_host_where_rendering_adds_nothing_is_fetched_plainly_and_sampled_again() -> None:
    learner = RenderLearner(samples=3, resample_every=5)
    for _ in range(3):
        assert learner.plan("www.gov.si") == "sample"
        learner.learn("www.gov.si", gained=False)
    assert [learner.plan("www.gov.si") for _ in range(5)] == ["plain"] * 5
    assert learner.plan("www.gov.si") == "sample"  # now and then, in case the site changed
    learner.learn("www.gov.si", gained=False)
    assert learner.plan("www.gov.si") == "plain"


def test_a_host_where_rendering_matters_is_rendered() -> None:
    learner = RenderLearner(samples=3)
    assert learner.plan("e-uprava.gov.si") == "sample"
    learner.learn("e-uprava.gov.si", gained=True)
    assert [learner.plan("e-uprava.gov.si") for _ in range(10)] == ["render"] * 10
    assert learner.plan("evem.gov.si") == "sample"  # hosts are learned one by one


def test_pages_fetched_while_the_samples_are_rendered_are_not_all_samples() -> None:
    # A fast host: all its pages come before the first rendered sample is back.
    learner = RenderLearner(samples=3)
    plans = [learner.plan("staticno.gov.si") for _ in range(7)]
    assert plans == ["sample"] * 3 + ["plain"] * 4
    learner.learn("staticno.gov.si", gained=True)  # then a sample shows rendering matters
    assert learner.plan("staticno.gov.si") == "render"


@pytest.mark.parametrize(
    ("html", "may_change"),
    [
        ("<html><body><p>x</p></body></html>", False),
        ("<html><body><script>document.body.append('x')</script></body></html>", True),
        ("<html><body><script src='/app.js'></script></body></html>", True),
        # The browser never loads an outside script (blocked_resource), nor data blocks.
        ("<html><body><script src='https://cdn.example.com/a.js'></script></body></html>", False),
        ("<html><body><script type='application/ld+json'>{}</script></body></html>", False),
        ("<html><body><script>  </script></body></html>", False),
        ("<html><body onload='go()'><p>x</p></body></html>", True),
        ("<html><body><a onclick=\"location.href='/x'\">x</a></body></html>", True),
        ("", False),
    ],
)
def test_scripts_may_change(html: str, may_change: bool) -> None:
    def in_scope(src: str) -> bool:
        return not src.startswith("https://cdn.")

    assert scripts_may_change(parse_html(html), in_scope) is may_change
