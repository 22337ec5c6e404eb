"""No two test folders define a module that tests import by its bare name.

Every package's test folder (``packages/*/tests``), the family's (``tests/``), the integration suite
(``integration/``) and the shared launchers (``testing/``) put their folder on ``sys.path`` and import
helpers by bare name (``from carddav_stdio import params``). When several folders' tests run in one
process (``nox -s integration`` runs every server's tests and ``integration/`` together), the first
module of a name to be imported is the one every later import of that name gets, whichever folder it
came from. So a name that is imported must be defined in one folder only.

An importable module here is every ``.py`` file of those folders that is not a ``conftest.py`` and does
not start with ``test_`` (a helper), and every ``test_*.py`` that some test file imports by name. A
helper's name starts with its package's own word (``caldav_helpers``, ``carddav_stdio``, ``core_serving``),
which keeps it apart from every other package's.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def searched_folders() -> list[Path]:
    """Every folder whose modules go on ``sys.path`` for a test run."""
    folders = sorted(p for p in (ROOT / "packages").glob("*/tests") if p.is_dir())
    return [*folders, ROOT / "tests", ROOT / "integration", ROOT / "testing"]


def imported_names(path: Path) -> set[str]:
    """The top-level module names ``path`` imports (``import x`` / ``from x import y``, nested imports too)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def importable_modules(folders: list[Path]) -> dict[str, list[Path]]:
    """Module name -> the files of that name that some test may import by it (see the module docstring)."""
    files = [path for folder in folders for path in sorted(folder.glob("*.py")) if path.name != "conftest.py"]
    imported = set().union(*(imported_names(path) for path in files))
    found: dict[str, list[Path]] = defaultdict(list)
    for path in files:
        if not path.stem.startswith("test_") or path.stem in imported:
            found[path.stem].append(path)
    return found


def test_no_two_test_folders_define_a_module_imported_by_its_name() -> None:
    clashes = {
        name: [str(path.relative_to(ROOT)) for path in paths]
        for name, paths in importable_modules(searched_folders()).items()
        if len(paths) > 1
    }
    assert not clashes, (
        "modules that tests import by name, defined in more than one test folder (when the folders' tests run "
        "in one process, every import gets the first one loaded): "
        + "; ".join(f"{name}: {', '.join(paths)}" for name, paths in sorted(clashes.items()))
        + ". Rename the helper with its package's own word (carddav_stdio.py), or move what is imported out of "
        "the test_ module into such a helper."
    )


def test_the_check_sees_a_clash(tmp_path: Path) -> None:
    """Two folders, each with a ``helpers.py`` and a ``test_stdio.py`` that another test imports: both clash."""
    one, two = tmp_path / "one", tmp_path / "two"
    for folder in (one, two):
        folder.mkdir()
        (folder / "helpers.py").write_text("X = 1\n")
        (folder / "test_stdio.py").write_text("def params(): ...\n")
        (folder / "test_own.py").write_text("def test_x(): ...\n")
    (two / "test_cancel.py").write_text("from test_stdio import params\n")
    found = importable_modules([one, two])
    assert {name for name, paths in found.items() if len(paths) > 1} == {"helpers", "test_stdio"}
    assert "test_own" not in found
