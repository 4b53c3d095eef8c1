"""What an element's markup says of it, before any text is counted: its tag, its ARIA
role and its class and id names (readability's word lists, with the Slovenian names of
gov.si templates: noga, glava, meni, drobtinice, piškotki, sorodne novice). Used by
``govsi.text.content``; the names of a page's elements are judged once per string."""

from __future__ import annotations

import re
from typing import Any

from lxml import etree

# Never text a reader sees (their tails are).
DROP = frozenset(
    {"script", "style", "noscript", "template", "svg", "iframe", "head", "object", "embed",
     "canvas", "video", "audio", "map", "button", "select", "input", "textarea", "option",
     "optgroup", "datalist", "dialog", "frame", "frameset", "applet", "math", "link", "meta"}
)  # fmt: skip
TEMPLATE_TAGS = frozenset({"nav", "aside", "footer", "header", "menu", "figure"})
GONE, TEMPLATE, MAIN, ARTICLE = 1, 2, 3, 4
# What a tag says at once (comments and processing instructions are never text either).
KINDS: dict[Any, int] = {
    **dict.fromkeys(DROP, GONE), **dict.fromkeys(TEMPLATE_TAGS, TEMPLATE),
    etree.Comment: GONE, etree.ProcessingInstruction: GONE, etree.Entity: GONE,
    "main": MAIN, "article": ARTICLE,
}  # fmt: skip
TEMPLATE_ROLES = frozenset(
    {"navigation", "banner", "contentinfo", "complementary", "search", "menu", "menubar",
     "alert", "alertdialog", "dialog"}
)  # fmt: skip
# Class and id words, matched anywhere in the names (readability's lists, with the
# template's Slovenian names: noga, glava, meni, drobtinice, piškotki, sorodne novice).
_TEMPLATE_NAMES = re.compile(
    r"-ad-|banner|breadcrumb|combx|comment|communit|disqus|extra|footer|gdpr|cookie|consent|"
    r"header|legends|menu|related|remark|replies|rss|shoutbox|sidebar|skyscraper|social|"
    r"sponsor|supplemental|ad-break|agegate|pagination|pager|popup|share|sharing|newsletter|"
    r"signup|subscribe|byline|author|next-|-stories|most-popular|(?<![a-z0-9])cc-|"
    r"drobtin|piskot|glava|noga|meni|navig|sorodn|skip"
)
# ... unless the names also say content ("sidebar-content", "main-menu" is settled by text).
_CONTENT_NAMES = re.compile(r"and|article|body|column|content|main|shadow|vsebin|clanek")
_UP_NAMES = re.compile(
    r"article|body|content|entry|hentry|h-entry|main|page|pagination|post|text|blog|story|"
    r"vsebin|clanek|besedilo|novica"
)
_DOWN_NAMES = re.compile(
    r"-ad-|hidden|^hid$| hid$| hid |^hid |banner|combx|comment|com-|contact|foot|footer|"
    r"footnote|gdpr|masthead|media|meta|outbrain|promo|related|scroll|share|shoutbox|"
    r"sidebar|skyscraper|sponsor|shopping|tags|tool|widget|byline|author|caption|"
    r"sorodn|noga|oznake"
)
# A whole word of the names says this is the content (id="vsebina", class="print-body").
_CONTENT_WORD = re.compile(
    r"(?<![a-z0-9])(?:content|maincontent|vsebina|main|article|clanek|body|story)(?![a-z0-9])"
)
HIDDEN_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden")
NAME_WEIGHT = 25
NAMES_CACHE = 8192  # class/id strings judged, kept across pages (templates repeat them)
NAMES_MAX = 256  # longer ones are judged and not kept

# Class + id string -> judge(string); the crawl's templates repeat a few hundred.
judged: dict[str, tuple[bool, int, bool]] = {}


def judge(names: str) -> tuple[bool, int, bool]:
    """(template, weight, content word) for a class + id string."""
    low = names.lower()
    template = bool(_TEMPLATE_NAMES.search(low)) and not _CONTENT_NAMES.search(low)
    weight = (NAME_WEIGHT if _UP_NAMES.search(low) else 0) - (
        NAME_WEIGHT if _DOWN_NAMES.search(low) else 0
    )
    verdict = (template, weight, bool(_CONTENT_WORD.search(low)))
    if len(names) < NAMES_MAX:
        if len(judged) >= NAMES_CACHE:
            judged.clear()
        judged[names] = verdict
    return verdict
