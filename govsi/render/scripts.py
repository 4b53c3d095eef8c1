"""What a page's scripts do when it loads: the pure half of deciding whether to render it.

- ``onload_scripts`` lists the code that runs when a page loads, without anyone clicking:
  scripts (inline, or files the browser would load), and handlers that fire during a load
  (``onload``, ``onerror``, ...). ``onclick`` and other handlers waiting for a user,
  ``javascript:`` links, data blocks (JSON-LD, templates), ``nomodule`` scripts and scripts
  inside ``<template>`` or ``<noscript>`` never run in a render and do not count.
- ``script_signature`` names that code, normalised so that what differs from page to page
  of one template (cache-busting queries, hashed file names, data in inline scripts) and
  from host to host of one CMS (a host's own script is written by its path) does not split
  it: pages that share a signature behave alike in a browser.
- ``needs_browser``: a page that plainly needs one (an empty app root, a ``<noscript>``
  asking for JavaScript, scripts and no text).
- ``Yield``/``rendering_adds``/``page_yield``: whether a rendered version gave more.

All linear in the size of the page: this runs on the reactor thread for every page.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from lxml import etree

from govsi.web.extract import held_elements, outermost
from govsi.web.urls import host_of, resolve

__all__ = [
    "EMPTY_BODY_CHARS",
    "Yield",
    "needs_browser",
    "onload_scripts",
    "page_yield",
    "rendering_adds",
    "script_signature",
]

_JS_TYPES = frozenset(
    {
        "",
        "module",
        "text/javascript",
        "application/javascript",
        "application/x-javascript",
        "text/ecmascript",
        "application/ecmascript",
        "text/jscript",
        "text/livescript",
        "text/x-javascript",
        "text/x-ecmascript",
        "text/javascript1.0",
        "text/javascript1.1",
        "text/javascript1.2",
        "text/javascript1.3",
        "text/javascript1.4",
        "text/javascript1.5",
    }
)
# Handlers that fire during a load, without anyone clicking or typing.
ONLOAD_HANDLERS = frozenset(
    {
        "onload",
        "onerror",
        "onpageshow",
        "onreadystatechange",
        "onloadstart",
        "onloadeddata",
        "onloadedmetadata",
        "oncanplay",
        "oncanplaythrough",
        "onanimationstart",
        "onanimationend",
        "onanimationiteration",
        "ontransitionend",
        "ontransitionrun",
        "ontransitionstart",
        "onbeforeprint",
        "onresize",
    }
)
# Scripts and elements with an on* attribute, found in C in document order (the parser
# lowercases names). A predicate, linear; a path through the attribute axis and back
# (``@*[...]/..``) is quadratic in libxml2: 80 000 elements took a minute.
_ONLOAD_CANDIDATES = etree.XPath(
    "descendant-or-self::*[self::script or @*[starts-with(name(), 'on')]]"
)
# In a script file's name, what a build or a release writes into it (app.3f2a9c1b.js,
# main-4d5e6f7a8b.js, jquery-3.6.0.min.js): one template across deploys and versions.
_HASHLIKE = re.compile(r"[.\-_](?:[0-9a-f]{6,}|v?\d+(?:\.\d+)+)(?=[.\-_])", re.I)
# One pass over code, no backtracking: comments, string and template literals (to their
# end, or to the end of the line or text when unterminated, so a match never fails and
# restarts), numbers, and identifiers. Only identifiers are kept: literals are per-page
# data (ids, titles, JSON settings), identifiers are what the code does.
_TOKEN = re.compile(
    r"""//[^\n]*|/\*.*?(?:\*/|\Z)"""
    r"""|"(?:[^"\\\n]|\\.)*(?:"|$)|'(?:[^'\\\n]|\\.)*(?:'|$)|`(?:[^`\\]|\\.)*(?:`|\Z)"""
    r"""|\d[\w$.]*|([A-Za-z_$][\w$]*)""",
    re.S | re.M,
)


def _normalise_code(code: str) -> str:
    """The identifiers of ``code`` in order, repeats in a row collapsed: ``var pageId = 12``
    and ``var pageId = 99`` are one piece of code; a JSON blob of any length is nothing."""
    out: list[str] = []
    for m in _TOKEN.finditer(code):
        word = m.group(1)
        if word is not None and (not out or out[-1] != word):
            out.append(word)
    return " ".join(out)


def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "replace"), digest_size=8).hexdigest()


def _script_url(page_host: str, url: str) -> str:
    # No query or fragment: ?v=123 and other cache-busting do not make another script.
    parts = urlsplit(url)
    folder, _, name = parts.path.rpartition("/")
    path = f"{folder}/{_HASHLIKE.sub('', name)}"
    host = (parts.hostname or "").lower()
    return path if host == page_host else f"{host}{path}"


def _runs(script: Any, inert: set[Any]) -> bool:
    kind = (script.get("type") or "").strip().lower().split(";")[0].strip()
    if kind not in _JS_TYPES or script.get("nomodule") is not None:
        return False
    return script not in inert


def _inert_scripts(root: etree._Element) -> set[Any]:
    """The scripts inside a ``<template>`` or ``<noscript>``: they never run."""
    return {s for box in outermost(root, ("template", "noscript")) for s in box.iter("script")}


def onload_scripts(
    root: etree._Element | None, page_url: str, loadable: Callable[[str], bool]
) -> tuple[str, ...]:
    """One normalised token per piece of code that runs when the page loads, in order."""
    if root is None:
        return ()
    page_host = host_of(page_url)
    held = held_elements(root)  # noqa: F841 (first: see held_elements)
    inert = _inert_scripts(root)
    tokens: list[str] = []
    # Only the candidates: reading every element's attributes in Python made a
    # ministry-sized page's reading markedly slower.
    for element in _ONLOAD_CANDIDATES(root):
        if element.tag == "script" and _runs(element, inert):
            src = (element.get("src") or "").strip()
            if src:
                target = resolve(page_url, src)
                if target is not None and loadable(target):
                    tokens.append("src:" + _script_url(page_host, target))
            elif (element.text or "").strip():
                tokens.append("inline:" + _digest(_normalise_code(element.text or "")))
        for name, value in element.attrib.items():
            key = str(name).lower()
            if key in ONLOAD_HANDLERS and str(value).strip():
                tokens.append(f"on:{key}:{_digest(_normalise_code(str(value)))}")
    return tuple(tokens)


def script_signature(tokens: tuple[str, ...] | list[str]) -> str | None:
    """A short name for the code a page runs on load; None when it runs none."""
    if not tokens:
        return None
    return _digest("\n".join(sorted(set(tokens))))


# Element ids and attributes that single-page-app frameworks mount into.
_APP_ROOT_IDS = frozenset({"app", "root", "__next", "__nuxt", "svelte", "main-app", "ember-app"})
_APP_ROOT_ATTRIBUTES = frozenset({"ng-app", "ng-version", "data-reactroot", "data-server-rendered"})
# The elements that may be app roots: those with attributes, found in C. Naming the id and
# each attribute in the predicate (``[@id or @ng-app or ...]``) cost several times as much:
# libxml2 builds a node-set per attribute test, per element.
_APP_ROOT_CANDIDATES = etree.XPath("descendant-or-self::*[@*]")
_NOSCRIPT_ASKS = re.compile(r"javascript|omogoči|vklopi", re.IGNORECASE)
EMPTY_BODY_CHARS = 200
_INVISIBLE = frozenset({"script", "style", "noscript", "template", "head"})


def _text_sizes(body: Any) -> dict[Any, int]:
    """Visible text characters under each element, bottom-up in one pass (linear)."""
    sizes: dict[Any, int] = {}
    for element in reversed(list(body.iter())):
        if not isinstance(element.tag, str):
            continue
        own = 0 if element.tag in _INVISIBLE else len((element.text or "").strip())
        total = own
        for child in element:
            if isinstance(child.tag, str):
                total += sizes.get(child, 0)
            total += len((child.tail or "").strip())
        sizes[element] = 0 if element.tag in _INVISIBLE else total
    return sizes


def _visible_chars(body: Any, enough: int) -> int:
    """``_text_sizes(body)[body]``, or any count of at least ``enough`` once it is reached:
    a page with text stops after its first few elements."""
    total = 0
    walker = etree.iterwalk(body, events=("start", "end", "comment", "pi"))
    for event, element in walker:
        if event == "start":
            if element.tag in _INVISIBLE:
                walker.skip_subtree()
            else:
                total += len((element.text or "").strip())
        elif element is not body:  # "end", a comment or a processing instruction: its tail
            total += len((element.tail or "").strip())
        if total >= enough:
            break
    return total


def needs_browser(root: etree._Element | None) -> str | None:
    """Why the page plainly needs a browser ("app root", "noscript", "empty body"), or
    None when plain HTTP may well see all of it."""
    if root is None:
        return None
    body = root.find(".//body")
    if body is None:
        body = root
    # The costly part, the text under every element, only for a page that may need it: a
    # page of a million tags with no app root and no script never walks its tree in Python.
    sizes: dict[Any, int] | None = None
    for element in _APP_ROOT_CANDIDATES(body):
        # keys(): one call for the names, where .attrib or get() per name cost more.
        is_root = (element.get("id") or "").lower() in _APP_ROOT_IDS or not (
            _APP_ROOT_ATTRIBUTES.isdisjoint(element.keys())
        )
        if is_root:
            sizes = sizes if sizes is not None else _text_sizes(body)
            if sizes.get(element, 0) < EMPTY_BODY_CHARS:
                return "app root"
    # A nested <noscript>'s text is part of the outer one's: reading only the outermost
    # reads each text once (reading every one was quadratic in the nesting).
    for noscript in outermost(body, ("noscript",)):
        if _NOSCRIPT_ASKS.search(" ".join(noscript.itertext())):
            return "noscript"
    has_scripts = next(root.iter("script"), None) is not None
    if has_scripts:
        shown = sizes.get(body, 0) if sizes is not None else _visible_chars(body, EMPTY_BODY_CHARS)
        if shown < EMPTY_BODY_CHARS:
            return "empty body"
    return None


@dataclass(frozen=True)
class Yield:
    """What one version of a page gives us."""

    links: frozenset[str]
    images: frozenset[str]
    text_chars: int


def rendering_adds(plain: Yield, rendered: Yield, text_gain: float = 0.2) -> bool:
    """Whether the rendered page shows what the plain one does not: a link, an image, or
    ``text_gain`` more visible text."""
    if rendered.links - plain.links or rendered.images - plain.images:
        return True
    return rendered.text_chars > plain.text_chars * (1 + text_gain) + 20


def page_yield(root: etree._Element | None, found: Any) -> Yield:
    """What one version of a page gives, for comparing the plain and rendered versions."""
    # The text's length counted in C (itertext in Python took several times as long).
    chars = len(etree.tostring(root, method="text", encoding="unicode")) if root is not None else 0
    return Yield(frozenset(found.links), frozenset(found.images), chars)
