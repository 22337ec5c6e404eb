"""Every argument of every tool, given a value its schema refuses, is refused in the server's own words.

For each tool of each server and each of its arguments, a value the argument's schema refuses is sent
(the first of a few candidates that a JSON Schema 2020-12 validator refuses for that argument). The
refusal must name the argument, show the value sent and say what is allowed, and carry none of
pydantic's own dump ("validation error for", its documentation link). No backend is needed: validation
comes before any request.
"""

from __future__ import annotations

import importlib
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from approval_core import ApprovalSettings
from approval_core.testing import connect
from servers import SERVERS

pytestmark = pytest.mark.anyio

CANDIDATES: tuple[Any, ...] = (3.5, "not-a-valid-value", {"unexpected": []}, [[["deep"]]], True, -7)
"""Values tried in turn; the first one an argument's schema refuses is sent."""


def breaking_value(schema: dict[str, Any], name: str) -> Any:
    """A value the tool's schema refuses for argument ``name`` alone, or None when it accepts every candidate."""
    for value in CANDIDATES:
        document = {"$defs": schema.get("$defs", {}), **schema["properties"][name]}
        if not Draft202012Validator(document).is_valid(value):
            return value
    return None


def accepts_anything(schema: dict[str, Any], name: str) -> bool:
    """Whether argument ``name`` takes any JSON value (no type, enum or other rule): no value can break it."""
    return not (schema["properties"][name].keys() - {"title", "description", "default", "examples"})


@pytest.mark.parametrize("name", SERVERS)
async def test_each_argument_that_breaks_its_schema_is_refused_naming_field_value_and_rule(name: str) -> None:
    server = importlib.import_module(f"{name.replace('-', '_')}.server").build_server(ApprovalSettings())
    problems: list[str] = []
    async with connect(server, revision="2025-11-25") as client:
        for tool in (await client.list_tools()).tools:
            schema = tool.input_schema
            for argument in schema.get("properties", {}):
                value = breaking_value(schema, argument)
                if value is None:
                    if not accepts_anything(schema, argument):  # the candidates must break every declared rule
                        problems.append(f"{tool.name}({argument}): no candidate breaks its schema; add one that does")
                    continue
                result = await client.call_tool(tool.name, {argument: value})
                text = " ".join(getattr(block, "text", "") for block in result.content)
                where = f"{tool.name}({argument}={value!r})"
                if not result.is_error:
                    problems.append(f"{where}: accepted")
                    continue
                line = next((ln for ln in text.splitlines() if ln.startswith(f"- {argument}")), None)
                if "validation error" in text or "pydantic" in text:
                    problems.append(f"{where}: pydantic's dump reached the caller: {text[:120]!r}")
                elif line is None:
                    problems.append(f"{where}: no line names the argument: {text[:200]!r}")
                elif repr(value)[:20] not in line or "allowed:" not in line:
                    problems.append(f"{where}: the line does not show the value and what is allowed: {line!r}")
    assert not problems, "\n".join(problems)


async def test_a_missing_argument_and_an_unknown_field_are_named() -> None:
    from ntfy_mcp.server import build_server

    async with connect(build_server(ApprovalSettings()), revision="2025-11-25") as client:
        result = await client.call_tool("get_message", {"id": "abc"})
        text = result.content[0].text
    assert result.is_error
    assert "- topic: required, and not given; allowed: The topic" in text
