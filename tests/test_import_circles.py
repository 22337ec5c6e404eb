"""No import circle in any package, imports made inside functions and under TYPE_CHECKING included.

Two modules that reach each other through any chain of imports are one module or a missing third one
(docs/adding-a-server.md, "Where things live"). An import inside a function hides a circle from the
interpreter, not from a reader, so every ``import`` statement of a file counts, wherever it stands.
approval-core is also checked one level up: its parts (``asking``, ``page``, ``every_write``,
``records``, ``serving``, ``testing``, and the modules at its top) import each other in one direction.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TOP_MODULE_LIMIT = 20


def _modules(root: Path) -> dict[str, Path]:
    """Every module of every package's ``src/``, by dotted name (a package by its ``__init__``)."""
    out: dict[str, Path] = {}
    for src in sorted(root.glob("packages/*/src")):
        for path in sorted(src.rglob("*.py")):
            name = ".".join(path.relative_to(src).with_suffix("").parts)
            out[name.removesuffix(".__init__")] = path
    return out


def _imported(module: str, path: Path, known: set[str]) -> set[str]:
    """The known modules that ``module`` imports anywhere in its file."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            names = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
        else:
            continue
        for name in names:
            while name and name not in known:
                name = name.rpartition(".")[0]
            if name and name != module:
                found.add(name)
    return found


def import_graph(root: Path) -> dict[str, set[str]]:
    """``{module: modules it imports}`` over every package of the workspace under ``root``."""
    modules = _modules(root)
    known = set(modules)
    return {name: _imported(name, path, known) for name, path in modules.items()}


def circles(graph: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan), each sorted, in a stable order."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(graph.get(node, ())):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component: list[str] = []
            while True:
                other = stack.pop()
                on_stack.discard(other)
                component.append(other)
                if other == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def parts_of(graph: Mapping[str, Iterable[str]], package: str) -> dict[str, set[str]]:
    """``package``'s graph one level up: each subpackage and each top-level module is one node.

    The package's own ``__init__`` (its public face, which gathers everything) is left out.
    """

    def part(name: str) -> str | None:
        pieces = name.split(".")
        return ".".join(pieces[:2]) if pieces[0] == package and len(pieces) > 1 else None

    out: dict[str, set[str]] = {}
    for name, imported in graph.items():
        here = part(name)
        if here is None:
            continue
        out.setdefault(here, set())
        out[here] |= {p for p in map(part, imported) if p is not None and p != here}
    return out


def test_the_circle_finder_finds_a_circle_through_a_deferred_import(tmp_path: Path) -> None:
    src = tmp_path / "packages" / "demo" / "src" / "demo"
    src.mkdir(parents=True)
    (src / "__init__.py").write_text("")
    (src / "a.py").write_text("from demo.b import x\n")
    (src / "b.py").write_text("def f():\n    from demo.c import y\n")
    (src / "c.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import a\n")
    (src / "d.py").write_text("import demo.a\n")
    assert circles(import_graph(tmp_path)) == [["demo.a", "demo.b", "demo.c"]]
    assert circles(parts_of(import_graph(tmp_path), "demo")) == [["demo.a", "demo.b", "demo.c"]]


def test_no_module_of_any_package_reaches_itself_through_its_imports() -> None:
    graph = import_graph(ROOT)
    assert len(graph) > 100, "the workspace's modules were not found"
    assert circles(graph) == []


def test_approval_cores_parts_import_each_other_in_one_direction() -> None:
    parts = parts_of(import_graph(ROOT), "approval_core")
    assert {"approval_core.asking", "approval_core.page", "approval_core.serving"} <= set(parts)
    assert circles(parts) == []


@pytest.mark.parametrize("part", ["asking", "records"])
def test_the_decision_stands_on_nothing_that_serves_or_shows(part: str) -> None:
    # What a yes binds and how an answer is judged must not depend on how the server runs or on the page.
    parts = parts_of(import_graph(ROOT), "approval_core")
    assert parts[f"approval_core.{part}"] <= {"approval_core.errors", "approval_core.records"}


def test_approval_core_keeps_at_most_twenty_modules_at_its_top() -> None:
    top = ROOT / "packages" / "approval-core" / "src" / "approval_core"
    modules = sorted(p.name for p in top.glob("*.py"))
    assert len(modules) <= TOP_MODULE_LIMIT, modules
