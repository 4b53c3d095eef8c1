"""An HTML page's title and the language it declares, from its parsed tree (pure)."""

from __future__ import annotations

from lxml import etree

from govsi.text.limits import short_title


def page_title(root: etree._Element | None) -> str | None:
    """The text of the page's first ``<title>``, whitespace runs as one space, at most
    ``MAX_TITLE_CHARS``; None when it has none or an empty one."""
    if root is None:
        return None
    for title in root.iter("title"):
        return short_title("".join(title.itertext()))
    return None


def page_language(root: etree._Element | None) -> str | None:
    """The language the page declares: ``<html lang>`` (or ``xml:lang``), else a
    ``Content-Language`` meta tag; as written, or None."""
    if root is None:
        return None
    html = root if root.tag == "html" else next(root.iter("html"), None)
    if html is not None:
        for name in ("lang", "{http://www.w3.org/XML/1998/namespace}lang", "xml:lang"):
            if value := (html.get(name) or "").strip():
                return value[:35]
    for meta in root.iter("meta"):
        equiv = (meta.get("http-equiv") or "").strip().lower()
        if equiv == "content-language" and (value := (meta.get("content") or "").strip()):
            return value[:35]
    return None
