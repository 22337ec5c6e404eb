"""No server of the family quotes a value with ``!r``, or by hand in a raise: an error quotes one with quoted_name.

``repr`` repeats a name of words as it is, on the server's own line; an error that names an id, a path or a
value the caller gave does it with ``approval_core.serving.stored_text.quoted_name`` (webdav-core through
``Profile.quote``), which fences one that is not of a plain name's shape (docs/approval.md, "Stored text in
read results"). Checked on the syntax tree of every module of the servers and webdav-core, so a new raise
site that quotes with ``!r``, or writes ``'{uid}'`` in the exception it raises, fails here. A settings
module is left out: its errors stop the server at start, for the person who set the environment, and never
reach a model.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("caldav-mcp", "carddav-mcp", "ntfy-mcp", "webdav-core")


def _modules() -> list[Path]:
    return sorted(
        path for package in PACKAGES for path in (ROOT / "packages" / package / "src").rglob("*.py")
        if path.name != "settings.py"
    )  # fmt: skip


def _reprs(path: Path) -> list[int]:
    """The lines of ``path`` holding an f-string field formatted with ``!r``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [node.lineno for node in ast.walk(tree) if isinstance(node, ast.FormattedValue) and node.conversion == 114]


def test_the_scan_sees_every_package() -> None:
    found = {path.relative_to(ROOT / "packages").parts[0] for path in _modules()}
    assert found == set(PACKAGES)


def _quoted_by_hand(path: Path) -> list[int]:
    """The lines of ``path`` where a raised exception's f-string puts a field between quotes of its own."""
    lines: list[int] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Raise) or node.exc is None:
            continue
        for text in (n for n in ast.walk(node.exc) if isinstance(n, ast.JoinedStr)):
            parts = text.values
            for before, field, after in zip(parts, parts[1:], parts[2:], strict=False):
                if (
                    isinstance(field, ast.FormattedValue)
                    and isinstance(before, ast.Constant)
                    and isinstance(after, ast.Constant)
                    and str(before.value).endswith(("'", '"'))
                    and str(after.value).startswith(("'", '"'))
                ):
                    lines.append(text.lineno)
    return lines


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(ROOT / "packages")))
def test_no_raised_message_quotes_a_field_by_hand(path: Path) -> None:
    lines = _quoted_by_hand(path)
    assert not lines, (
        f"{path.relative_to(ROOT)} raises an error quoting a field by hand on lines {lines}: quote a caller's id "
        "or value with approval_core.serving.stored_text.quoted_name (webdav-core: Profile.quote)"
    )


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(ROOT / "packages")))
def test_no_field_is_formatted_with_repr(path: Path) -> None:
    lines = _reprs(path)
    assert not lines, (
        f"{path.relative_to(ROOT)} formats with !r on lines {lines}: quote a caller's id or value with "
        "approval_core.serving.stored_text.quoted_name (webdav-core: Profile.quote)"
    )
