"""docs/ntfy-mcp.md restates the tool table; it must match the code."""

from __future__ import annotations

from pathlib import Path

import pytest

from approval_core import ApprovalSettings
from ntfy_mcp import build_server
from ntfy_mcp.guards import GUARDS

DOC = Path(__file__).resolve().parents[3] / "docs" / "ntfy-mcp.md"


def doc_rows() -> dict[str, list[str]]:
    rows: dict[str, list[str]] = {}
    for line in DOC.read_text().splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 6 and cells[0].startswith("`") and cells[0].endswith("`"):
            rows[cells[0].strip("`")] = cells[1:]
    return rows


@pytest.mark.anyio
async def test_the_documented_tool_table_matches_the_annotations_and_guards() -> None:
    tools = {tool.name: tool for tool in await build_server(ApprovalSettings()).list_tools()}
    rows = doc_rows()
    assert set(rows) == set(tools)
    yes = {True: "yes", False: "no"}
    for name, tool in tools.items():
        hints = tool.annotations
        assert hints is not None
        expected = [
            yes[bool(hints.read_only_hint)],
            yes[bool(hints.destructive_hint)],
            yes[bool(hints.idempotent_hint)],
            yes[bool(hints.open_world_hint)],
            GUARDS[name].condition,
        ]
        assert rows[name] == expected, name


def test_the_documented_mismatch_is_the_guard_tables() -> None:
    assert [m.tool for m in GUARDS.mismatches] == ["create_user"]
    assert "`create_user` asks although it destroys nothing" in DOC.read_text()


@pytest.mark.anyio
async def test_every_input_has_a_description() -> None:
    missing = []
    for tool in await build_server(ApprovalSettings()).list_tools():
        for name, prop in tool.input_schema.get("properties", {}).items():
            if not prop.get("description"):
                missing.append(f"{tool.name}.{name}")
    assert missing == []
