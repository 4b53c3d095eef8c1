"""JavaScript rendering: which pages need a browser, what the browser may load, and what
each host has taught us (issue 5). Pure decisions, no browser here.

- ``needs_browser`` reads a page fetched over plain HTTP and says why it plainly needs a
  browser, if it does: an app root element left empty for scripts to fill, a
  ``<noscript>`` asking for JavaScript, or a body with scripts and next to no text.
- ``RenderLearner`` keeps, per host, what rendering some of its pages both ways showed:
  a host where the browser adds links, images or text is rendered; a host where it adds
  nothing is not, and is sampled again now and then.
- ``blocked_resource`` says which requests the browser must not make: images, media,
  fonts and stylesheets (nothing we collect depends on them), and anything outside scope.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field

from lxml import etree

__all__ = [
    "RENDER_MODES",
    "Learned",
    "RenderLearner",
    "Yield",
    "blocked_resource",
    "find_chromium",
    "needs_browser",
    "render_mode",
    "rendering_adds",
    "scripts_may_change",
]

RENDER_MODES = ("off", "always", "auto")
# Debian's chromium package: the binary itself, then the wrapper script on the PATH.
CHROMIUM_CANDIDATES = (
    "/usr/lib/chromium/chromium",
    "/usr/bin/chromium",
    "/usr/bin/chromium-browser",
)

# Element ids and attributes that single-page-app frameworks mount into.
_APP_ROOT_IDS = frozenset({"app", "root", "__next", "__nuxt", "svelte", "main-app", "ember-app"})
_APP_ROOT_ATTRIBUTES = ("ng-app", "ng-version", "data-reactroot", "data-server-rendered")
# A <noscript> that asks for JavaScript (English and Slovenian wording).
_NOSCRIPT_ASKS = re.compile(r"javascript|omogoči|vklopi", re.IGNORECASE)
# Less visible text than this in a body that has scripts: an empty shell.
EMPTY_BODY_CHARS = 200
# What the browser never needs to load for us: the DOM, its links and text do not depend
# on them (Playwright's resource types).
BLOCKED_TYPES = frozenset(
    {
        "image",
        "media",
        "font",
        "stylesheet",
        "texttrack",
        "manifest",
        "eventsource",
        "websocket",
        "other",
    }
)


def render_mode(value: str | None) -> str:
    """The ``RENDER_JS`` setting, checked: off, always or auto."""
    mode = (value or "auto").strip().lower()
    if mode not in RENDER_MODES:
        raise ValueError(f"RENDER_JS must be one of {', '.join(RENDER_MODES)}, not {value!r}")
    return mode


def find_chromium(configured: str | None = None) -> str | None:
    """The Chromium executable to drive: ``configured`` (CHROMIUM_PATH) if it is one, else
    Debian's; None when there is none."""
    if configured:
        return configured if os.access(configured, os.X_OK) else None
    for path in CHROMIUM_CANDIDATES:
        if os.access(path, os.X_OK):
            return path
    return shutil.which("chromium") or shutil.which("chromium-browser")


_VISIBLE_TEXT = etree.XPath(
    "descendant-or-self::text()[not(ancestor::script or ancestor::style or ancestor::noscript"
    " or ancestor::template or ancestor::head)]"
)


def _visible_text(element: etree._Element) -> str:
    return " ".join(t.strip() for t in _VISIBLE_TEXT(element) if t.strip())


def needs_browser(root: etree._Element | None) -> str | None:
    """Why the page plainly needs a browser ("app root", "noscript", "empty body"), or
    None when plain HTTP may well see all of it (``RenderLearner`` samples those)."""
    if root is None:
        return None
    body = root.find(".//body")
    if body is None:
        body = root
    for element in body.iter(etree.Element):
        is_root = (element.get("id") or "").lower() in _APP_ROOT_IDS or any(
            element.get(a) is not None for a in _APP_ROOT_ATTRIBUTES
        )
        if is_root and len(_visible_text(element)) < EMPTY_BODY_CHARS:
            return "app root"
    for noscript in body.iter("noscript"):
        if _NOSCRIPT_ASKS.search(" ".join(noscript.itertext())):
            return "noscript"
    has_scripts = next(root.iter("script"), None) is not None
    if has_scripts and len(_visible_text(body)) < EMPTY_BODY_CHARS:
        return "empty body"
    return None


# <script type> values that are data, not code.
_DATA_SCRIPTS = ("application/ld+json", "application/json", "text/template", "text/x-template")


def scripts_may_change(root: etree._Element | None, in_scope: Callable[[str], bool]) -> bool:
    """Whether any script could change the page in our browser: an inline script, an
    ``on...`` handler, or a script file it may load (in scope; others are blocked). A page
    without one renders to what was served, so rendering it can only cost."""
    if root is None:
        return False
    for script in root.iter("script"):
        kind = (script.get("type") or "").strip().lower()
        if kind in _DATA_SCRIPTS:
            continue
        src = (script.get("src") or "").strip()
        if src:
            if in_scope(src):
                return True
        elif (script.text or "").strip():
            return True
    return bool(_HANDLERS(root))


_HANDLERS = etree.XPath("//@*[starts-with(name(), 'on')][1]")


def blocked_resource(resource_type: str, url: str, in_scope: bool) -> str | None:
    """Why the browser must not make this request, or None to let it."""
    if resource_type in BLOCKED_TYPES:
        return resource_type
    if not url.startswith(("http://", "https://")):
        return None if url.startswith(("data:", "blob:", "about:")) else "scheme"
    if not in_scope:
        return "out of scope"
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


@dataclass
class Learned:
    started: int = 0  # samples asked for (their rendered versions may still be on the way)
    samples: int = 0  # samples compared
    gains: int = 0
    since_sample: int = 0
    decided: str | None = None  # "render" or "plain" once the samples agree


@dataclass
class RenderLearner:
    """Per host: sample ``samples`` pages both ways; render the host if any sample gained,
    else fetch it plainly and sample again after ``resample_every`` pages."""

    samples: int = 3
    resample_every: int = 200
    hosts: dict[str, Learned] = field(default_factory=dict)

    def plan(self, host: str) -> str:
        """The next page of ``host``: "render", "plain" or "sample" (render and compare).

        A host's pages may all be fetched before its first sample is rendered: once its
        samples are asked for, the pages in between are fetched plainly (the cheaper guess),
        and the samples' outcome decides for the pages after them.
        """
        h = self.hosts.setdefault(host, Learned())
        if h.decided == "render":
            return "render"
        if h.decided == "plain":
            if h.since_sample < self.resample_every:
                h.since_sample += 1
                return "plain"
            h.since_sample = 0
            h.started += 1
            return "sample"
        if h.started < self.samples:
            h.started += 1
            return "sample"
        return "plain"

    def learn(self, host: str, gained: bool) -> None:
        h = self.hosts.setdefault(host, Learned())
        h.samples += 1
        h.gains += gained
        if gained:
            h.decided = "render"
        elif h.decided == "plain" or h.samples >= self.samples:
            h.decided = "plain"
