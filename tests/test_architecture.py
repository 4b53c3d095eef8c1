"""docs/architecture.md's module map is true: every module is in it, each imports only what
its row allows, every package says its job, and no imports go round a circle, between modules
or between packages. Around govsi: govsi never imports testkit, and bench never imports
tests (what both need is in testkit)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
GOVSI = ROOT / "govsi"
ROW = re.compile(r"^\| `govsi/([\w/]+)\.py` \| .+ \| (.+) \|$")


def _module_name(path: Path) -> str:
    return ".".join(path.relative_to(GOVSI).with_suffix("").parts)


def _modules() -> dict[str, Path]:
    return {
        _module_name(p): p
        for p in sorted(GOVSI.rglob("*.py"))
        if p.name != "__init__.py" and "migrations" not in p.parts
    }


def _imports(path: Path) -> set[str]:
    """The govsi modules (or packages) a file imports, without the ``govsi.`` prefix."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("govsi"):
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                is_module = (ROOT / (full.replace(".", "/") + ".py")).exists()
                found.add((full if is_module else node.module).removeprefix("govsi."))
        elif isinstance(node, ast.Import):
            found |= {
                a.name.removeprefix("govsi.") for a in node.names if a.name.startswith("govsi.")
            }
    return found - {"govsi"}


def _map() -> dict[str, set[str]]:
    rows: dict[str, set[str]] = {}
    for line in (ROOT / "docs" / "architecture.md").read_text().splitlines():
        m = ROW.match(line)
        if m:
            allowed = set(re.findall(r"`([\w/]+)`", m.group(2)))
            rows[m.group(1).replace("/", ".")] = allowed
    return rows


def test_the_map_lists_every_module_and_no_other() -> None:
    listed, present = set(_map()), set(_modules())
    assert present - listed == set(), "modules missing from docs/architecture.md"
    assert listed - present == set(), "docs/architecture.md lists modules that do not exist"


@pytest.mark.parametrize("name", sorted(_modules()))
def test_a_module_imports_only_what_its_row_allows(name: str) -> None:
    allowed = _map().get(name, set())
    own = name.rsplit(".", 1)[0] if "." in name else None
    for target in _imports(_modules()[name]):
        package = target.split(".")[0] if "." in target else None
        if package is not None and package == own:
            continue
        ok = target in allowed or (package is not None and f"{package}/" in allowed)
        assert ok, f"{name} imports {target}, which its row in docs/architecture.md does not name"


def test_every_package_says_its_job() -> None:
    for init in GOVSI.rglob("__init__.py"):
        if init.parent == GOVSI or "migrations" in init.parts:
            continue
        doc = ast.get_docstring(ast.parse(init.read_text()))
        assert doc, f"{init.relative_to(ROOT)} has no docstring saying the package's job"


def _circle(graph: dict[str, set[str]]) -> list[str] | None:
    """A circle in ``graph`` (its first node repeated at the end), or None."""
    state: dict[str, int] = {}  # 1: on the path being walked, 2: done

    def walk(node: str, path: list[str]) -> list[str] | None:
        state[node] = 1
        for target in sorted(graph.get(node, ())):
            if state.get(target) == 1:
                return [*path[path.index(target) :], target]
            if target not in state and (found := walk(target, [*path, target])):
                return found
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := walk(node, [node])):
            return found
    return None


def test_no_import_circles() -> None:
    modules = _modules()
    graph = {name: {t for t in _imports(path) if t in modules} for name, path in modules.items()}
    circle = _circle(graph)
    assert circle is None, "import circle: " + " -> ".join(circle or [])


def _package(name: str) -> str:
    """A module's node in the package graph: its package, or itself at the top level."""
    return name.split(".")[0]


def _package_graph() -> dict[str, set[str]]:
    """Each package (a top-level module counting as one) and the other packages it imports."""
    graph: dict[str, set[str]] = {}
    for name, path in _modules().items():
        here = _package(name)
        graph.setdefault(here, set()).update(
            _package(t) for t in _imports(path) if _package(t) != here
        )
    return graph


def test_no_package_cycles() -> None:
    # frontera's rule: a lower package never imports a higher one, so the packages form
    # layers even where no two modules import each other.
    cycle = _circle(_package_graph())
    assert cycle is None, "package cycle: " + " -> ".join(cycle or [])


LAYER = re.compile(r"^(\d+)\. (.+)$")


def _layers() -> dict[str, int]:
    """docs/architecture.md's layers, numbered from the bottom: each package named on a
    layer's line (outside its parentheses, which say why) and that layer's number."""
    text = (ROOT / "docs" / "architecture.md").read_text()
    section = text[text.index("Packages are layers") : text.index("Two places where")]
    layers: dict[str, int] = {}
    for line in section.splitlines():
        if m := LAYER.match(line):
            names = re.findall(r"`(\w+)/?`", re.sub(r"\([^)]*\)", "", m.group(2)))
            layers.update(dict.fromkeys(names, int(m.group(1))))
    return layers


def test_no_package_imports_its_own_layer_or_above() -> None:
    layers, graph = _layers(), _package_graph()
    missing = set(graph) - set(layers)
    assert missing == set(), "packages missing from docs/architecture.md's layers"
    for package, targets in sorted(graph.items()):
        for target in sorted(targets):
            assert layers[target] < layers[package], (
                f"{package} (layer {layers[package]}) imports {target} (layer "
                f"{layers[target]}): an arrow back up in docs/architecture.md's layers"
            )


# Issue 53: spiders/ holds the spider only; the parts it holds live in the packages whose
# job they are, so the spider sees few packages.
SPIDERS_MAX_PACKAGES = 6


def test_spiders_imports_at_most_six_packages() -> None:
    imported = _package_graph()["spiders"]
    assert len(imported) <= SPIDERS_MAX_PACKAGES, (
        f"spiders/ imports {len(imported)} other packages: {', '.join(sorted(imported))}"
    )


def _names_of(path: Path, package: str) -> list[str]:
    """What ``path`` takes from ``package``: its imports (``import package...``, ``from
    package... import``) and dotted names in strings that Scrapy would import (a setting's
    ``"package.module.Class"``)."""
    found: list[str] = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            names = re.findall(rf"^{package}(?:\.\w+)+$", node.value)
        else:
            continue
        found += [n for n in names if n == package or n.startswith(f"{package}.")]
    return found


def _python_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.py") if "__pycache__" not in p.parts)


def test_bench_never_imports_tests() -> None:
    # The simulated web and the crawl harness are in testkit; tests/ is pytest's alone.
    found = {
        str(p.relative_to(ROOT)): names
        for p in _python_files(ROOT / "bench")
        if (names := _names_of(p, "tests"))
    }
    assert found == {}, "bench imports tests (take it from testkit instead)"


def test_govsi_never_imports_testkit() -> None:
    # scrapyd's egg holds govsi alone (setup.py): an import of testkit would fail there.
    found = {
        str(p.relative_to(ROOT)): names
        for p in _python_files(GOVSI)
        if (names := _names_of(p, "testkit"))
    }
    assert found == {}, "govsi imports testkit"
