"""Write docs/settings.md from govsi/settings.py, whose comments are the settings' one home.

A setting is documented by the comment block directly above it; settings on consecutive
lines share one block (``DB_BATCH_SIZE`` and ``DB_FLUSH_INTERVAL``); ``# --- Name ---``
lines start a section. Comments inside a dict value document its entries.

    python scripts/settings_reference.py            # rewrite docs/settings.md
    python scripts/settings_reference.py --check    # exit 1 if it is out of date
"""

from __future__ import annotations

import ast
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SETTINGS = ROOT / "govsi" / "settings.py"
REFERENCE = ROOT / "docs" / "settings.md"
COMMAND = "python scripts/settings_reference.py"

SECTION = re.compile(r"^# -{3} (.+?) -+$")
# Setting names, and paths or dotted names inside the project, read as code.
CODE = re.compile(
    r"\$?\b[A-Z][A-Z0-9]*_[A-Z0-9_]*\b\*?(?:/\w+)*"
    r"|\b(?:govsi|bench|docs|tests|testkit)(?:[./][\w<>*-]+)+/?"
)
ENTRY = re.compile(r'^\s*"([^"]+)"\s*:')

HEADER = f"""\
# Settings

<!-- Generated from govsi/settings.py by `{COMMAND}`: edit the comments there,
not this file (tests/test_settings_reference.py fails when it is out of date). -->

Every setting can be given with `-s NAME=VALUE` (and scrapyd's `setting=NAME=VALUE`); this
is every setting govsi sets, in the order and words of `govsi/settings.py`. Scrapy's other
settings (`CLOSESPIDER_PAGECOUNT`, `LOG_FILE`, ...) work as usual. Sizes are in bytes and
times in seconds unless a name says otherwise.
"""


@dataclass
class Group:
    """Settings on consecutive lines of settings.py and the comment above them."""

    section: str
    names: list[str] = field(default_factory=list)
    defaults: list[str] = field(default_factory=list)
    comment: list[str] = field(default_factory=list)
    entries: list[tuple[str, str]] = field(default_factory=list)


def _is_comment(line: str) -> bool:
    return line.lstrip().startswith("#")


def _comment_text(line: str) -> str:
    return line.lstrip()[1:].removeprefix(" ").rstrip()


def _default(source: str, node: ast.expr) -> str:
    """The value's source, without its comments, on one line."""
    segment = ast.get_source_segment(source, node) or ""
    if "\n" not in segment:
        return segment
    text = " ".join(c.strip() for c in segment.splitlines() if not _is_comment(c))
    return re.sub(r"([\[{(]) ", r"\1", re.sub(r",? ([\]})])", r"\1", text))


def _entries(lines: list[str], node: ast.expr) -> list[tuple[str, str]]:
    """(key, comment) for each entry of a multi-line dict that has a comment above it."""
    found, pending = [], []
    for line in lines[node.lineno : (node.end_lineno or node.lineno) - 1]:
        if _is_comment(line):
            pending.append(_comment_text(line))
            continue
        m = ENTRY.match(line)
        if m and pending:
            found.append((m.group(1), " ".join(pending)))
        pending = []
    return found


def _comment_above(lines: list[str], lineno: int) -> list[str]:
    block: list[str] = []
    i = lineno - 2
    while i >= 0 and _is_comment(lines[i]) and not SECTION.match(lines[i]):
        block.insert(0, lines[i])
        i -= 1
    return block


def groups(source: str) -> list[Group]:
    """settings.py's settings, grouped as its blank lines and comments group them."""
    lines = source.splitlines()
    sections = {i + 1: m.group(1) for i, line in enumerate(lines) if (m := SECTION.match(line))}
    found: list[Group] = []
    section, last_end = "The Scrapy project", -1
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            target, value = node.target, node.value
        else:
            continue
        if not (isinstance(target, ast.Name) and target.id.isupper()):
            continue
        section = next(
            (sections[n] for n in sorted(sections, reverse=True) if n < node.lineno), section
        )
        if not found or node.lineno != last_end + 1 or found[-1].section != section:
            found.append(Group(section, comment=_comment_above(lines, node.lineno)))
        group = found[-1]
        group.names.append(target.id)
        group.defaults.append(_default(source, value))
        group.entries += _entries(lines, value)
        last_end = node.end_lineno or node.lineno
    return found


def _prose(text: str) -> str:
    """Comment text as Markdown: names and paths as code, nothing read as HTML or emphasis."""
    parts = re.split(r"(`[^`]*`)", text)
    for i in range(0, len(parts), 2):
        plain = parts[i].replace("|", "\\|")
        out, pos = [], 0
        for m in CODE.finditer(plain):
            out.append(_escape(plain[pos : m.start()]))
            out.append(f"`{m.group(0)}`")
            pos = m.end()
        out.append(_escape(plain[pos:]))
        parts[i] = "".join(out)
    return "".join(parts)


def _escape(text: str) -> str:
    return text.replace("<", "&lt;").replace("*", "\\*")


def _comment_markdown(comment: list[str]) -> str:
    """A comment block as one paragraph; an indented line (an example) as code."""
    pieces = []
    for line in comment:
        text = _comment_text(line)
        if text.startswith("  "):
            pieces.append(f"`{text.strip()}`")
        else:
            pieces.append(_prose(text))
    return " ".join(p for p in pieces if p)


def _code(text: str) -> str:
    return f"`` {text} ``" if "`" in text else f"`{text}`"


def render(source: str) -> str:
    out = [HEADER]
    section = None
    for group in groups(source):
        if group.section != section:
            section = group.section
            title, _, where = section.partition(" (")
            out.append(f"\n## {title}\n")
            if where:
                out.append(f"({_prose(where.removesuffix(')'))})\n")
            out += ["| setting | default | what it is for |", "|---|---|---|"]
        names = "<br>".join(f"`{n}`" for n in group.names)
        defaults = "<br>".join(_code(d).replace("|", "\\|") for d in group.defaults)
        why = _comment_markdown(group.comment)
        why += "".join(f"<br>`{key}`: {_prose(text)}" for key, text in group.entries)
        out.append(f"| {names} | {defaults} | {why} |")
    return "\n".join(out) + "\n"


def undocumented(source: str) -> list[str]:
    """Settings with no comment above them or their group."""
    return [n for g in groups(source) if not g.comment for n in g.names]


def main(argv: list[str]) -> int:
    text = render(SETTINGS.read_text())
    if "--check" in argv:
        if REFERENCE.exists() and REFERENCE.read_text() == text:
            return 0
        print(f"docs/settings.md is out of date: run `{COMMAND}`", file=sys.stderr)
        return 1
    REFERENCE.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
