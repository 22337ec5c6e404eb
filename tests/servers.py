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
from pathlib import Path

__all__ = ["CORE", "LIBRARIES", "ROOT", "SERVERS", "embedded_servers", "import_name", "pyproject", "workspace_members"]

ROOT = Path(__file__).resolve().parents[1]
CORE = "approval-core"
"""The library every server asks through."""
LIBRARIES = (CORE, "webdav-core")
"""The workspace members that are libraries the servers share, not servers."""


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
