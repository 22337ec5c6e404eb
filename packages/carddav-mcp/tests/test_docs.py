"""docs/carddav-mcp.md restates the tool table; it must match the code.

Cells use the family's format (``yes``/``no``), which tests/test_docs.py checks too.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from approval_core import ApprovalSettings
from carddav_mcp.guards import GUARDS
from carddav_mcp.server import build_server
from carddav_mcp.settings import CardDavSettings

DOC = Path(__file__).resolve().parents[3] / "docs" / "carddav-mcp.md"


def documented() -> dict[str, list[str]]:
    rows: dict[str, list[str]] = {}
    for line in DOC.read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 6 and cells[0].startswith("`") and cells[1] in {"yes", "no"}:
            rows[cells[0].strip("`")] = cells[1:]
    return rows


@pytest.mark.anyio
async def test_the_tool_table_matches_the_annotations_and_the_guards() -> None:
    tools = await build_server(ApprovalSettings(), CardDavSettings()).list_tools()
    actual = {}
    for tool in tools:
        a = tool.annotations
        assert a is not None
        hints = [a.read_only_hint, a.destructive_hint, a.idempotent_hint, a.open_world_hint]
        assert all(h is not None for h in hints), tool.name
        actual[tool.name] = ["yes" if h else "no" for h in hints] + [GUARDS[tool.name].condition]
    assert documented() == actual
    assert len(actual) == 19


@pytest.mark.anyio
async def test_every_tool_has_a_description_an_output_schema_and_bounded_strings() -> None:
    tools = await build_server(ApprovalSettings(), CardDavSettings()).list_tools()
    for tool in tools:
        assert tool.description, tool.name
        assert tool.output_schema, tool.name
        for name, prop in tool.input_schema.get("properties", {}).items():
            assert prop.get("description"), (tool.name, name)
            text = str(prop)
            if "'string'" in text and "confirm_token" not in name:
                assert "maxLength" in text, (tool.name, name)


@pytest.mark.anyio
async def test_no_mismatch_is_documented_because_guards_and_destructive_hints_agree() -> None:
    tools = await build_server(ApprovalSettings(), CardDavSettings()).list_tools()
    for tool in tools:
        assert tool.annotations is not None
        assert GUARDS[tool.name].may_ask == bool(tool.annotations.destructive_hint), tool.name
    assert GUARDS.mismatches == ()
