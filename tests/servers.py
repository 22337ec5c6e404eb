"""The servers of the family, found the one way every family test and docs check uses.

A server is a member of the uv workspace (``[tool.uv.workspace] members`` in
the root ``pyproject.toml``) whose folder, and distribution, is named
``<something>-mcp``; the libraries the servers share (:data:`LIBRARIES`:
approval-core, webdav-core) are the members that are not servers
(``tests/test_family.py`` fails on any other member, so a server in a folder
of another name cannot go unseen). Nothing in ``tests/`` lists the servers by
hand: a new server is covered by every family test as soon as it is a
workspace member, and each test whose expectations differ per server fails
until the server has its row in that test's table.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import TypeVar

import pytest

__all__ = [
    "CORE",
    "GUIDE",
    "LIBRARIES",
    "ROOT",
    "SERVERS",
    "embedded_servers",
    "import_name",
    "missing_rows",
    "pyproject",
    "row",
    "workspace_members",
]

ROOT = Path(__file__).resolve().parents[1]
CORE = "approval-core"
"""The library every server asks through."""
LIBRARIES = (CORE, "webdav-core")
"""The workspace members that are libraries the servers share, not servers."""
GUIDE = "docs/adding-a-server.md, section 5, 'The per-server tables'"
"""Where a contributor reads which rows a new server adds: every failure for a missing row names it."""

T = TypeVar("T")


def row(table: Mapping[str, T], name: str, table_name: str) -> T:
    """Server ``name``'s row of a per-server table of the family tests.

    Raises:
        pytest.fail.Exception: The table has no row for ``name``; the message names the table and
            :data:`GUIDE`, the section that says what the row holds.
    """
    if name not in table:
        pytest.fail(f"{table_name} has no row for {name}: add it as {GUIDE} says", pytrace=False)
    return table[name]


def missing_rows(table: Mapping[str, object], table_name: str) -> str | None:
    """None when ``table`` has a row for every server and no other; else what to add or remove, and where."""
    missing, extra = sorted(set(SERVERS) - set(table)), sorted(set(table) - set(SERVERS))
    if not missing and not extra:
        return None
    return (
        f"{table_name}: "
        + (f"no row for {', '.join(missing)}" if missing else "")
        + ("; " if missing and extra else "")
        + (f"a row for {', '.join(extra)}, which is no server" if extra else "")
        + f" (see {GUIDE})"
    )


def workspace_members() -> list[str]:
    """The folder names of the workspace members (``[tool.uv.workspace] members``), sorted.

    Only folders holding a ``pyproject.toml`` count, as for uv itself.
    """
    root = tomllib.loads((ROOT / "pyproject.toml").read_text())
    patterns: list[str] = root["tool"]["uv"]["workspace"]["members"]
    found = {p.name for pattern in patterns for p in ROOT.glob(pattern) if (p / "pyproject.toml").is_file()}
    return sorted(found)


def pyproject(name: str) -> dict:
    """The parsed ``packages/<name>/pyproject.toml`` of a workspace member."""
    return tomllib.loads((ROOT / "packages" / name / "pyproject.toml").read_text())


def import_name(name: str) -> str:
    """The import name of a server's package: ``caldav-mcp`` -> ``caldav_mcp``."""
    return name.replace("-", "_")


def embedded_servers() -> list[str]:
    """The servers with an ``embedded`` extra (a backend run inside the server: ``<PREFIX>_EMBEDDED=true``)."""
    return [name for name in SERVERS if "embedded" in pyproject(name)["project"].get("optional-dependencies", {})]


SERVERS: list[str] = [name for name in workspace_members() if name.endswith("-mcp")]
"""Every server of the family, sorted by name."""
