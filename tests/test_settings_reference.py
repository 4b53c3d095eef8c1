"""Settings have one home, the comments in govsi/settings.py: every setting has one, and
docs/settings.md is what scripts/settings_reference.py makes of them."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import govsi.settings as settings

ROOT = Path(__file__).resolve().parent.parent


def _script() -> ModuleType:
    path = ROOT / "scripts" / "settings_reference.py"
    spec = importlib.util.spec_from_file_location("settings_reference", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


reference = _script()


def test_every_setting_has_a_comment() -> None:
    missing = reference.undocumented(reference.SETTINGS.read_text())
    assert missing == [], f"settings without a comment above them in govsi/settings.py: {missing}"


def test_docs_settings_md_is_up_to_date() -> None:
    expected = reference.render(reference.SETTINGS.read_text())
    actual = reference.REFERENCE.read_text() if reference.REFERENCE.exists() else ""
    assert actual == expected, (
        f"docs/settings.md is out of date with govsi/settings.py: run `{reference.COMMAND}`"
    )


def test_every_setting_is_in_the_reference() -> None:
    names = {n for g in reference.groups(reference.SETTINGS.read_text()) for n in g.names}
    assert names == {n for n in vars(settings) if n.isupper()}


def test_settings_sharing_a_comment_sit_together() -> None:
    source = (
        "# --- A section (somewhere.py) ---\n"
        "# Two knobs.\n"
        "A_ONE = 1\n"
        "A_TWO = {\n"
        "    # the entry's why\n"
        '    "key": 2,\n'
        "}\n"
        "\n"
        "B_ALONE = 3\n"
    )
    first, second = reference.groups(source)
    assert (first.section, first.names, first.defaults) == (
        "A section (somewhere.py)",
        ["A_ONE", "A_TWO"],
        ["1", '{"key": 2}'],
    )
    assert first.entries == [("key", "the entry's why")]
    assert second.names == ["B_ALONE"] and second.comment == []
    assert reference.undocumented(source) == ["B_ALONE"]
