"""Every tool of every server is taken by the tool converters of two model SDKs (issue 23 §2, issue 34 §4).

The tools are listed over MCP, as a client sees them, and each one is run through:

* google-genai's MCP conversion (``google.genai._mcp_utils.mcp_to_gemini_tools``, what
  ``generate_content(tools=[session])`` runs over a server's whole tool list; it stopped on a boolean
  ``additionalProperties``, googleapis/python-genai#2393), then ``Schema.from_json_schema`` with
  ``raise_error_on_unsupported_field=True``; besides, the published schema must hold nothing that Gemini
  function declarations refuse (``$defs``/``$ref``, ``oneOf``, ``const``) and no keyword that the conversion
  drops on the way (a rule the model would never see);
* google-genai's other path, a declaration written by hand from the listed schema
  (``types.FunctionDeclaration(parameters=tool.inputSchema)``, validated by its ``Schema`` model: one ``type``
  per schema, only the keywords it models), for every tool, with every optional argument still ``nullable``
  once the SDK prepares it for Gemini;
* the OpenAI Agents SDK's ``MCPUtil.to_function_tool(..., convert_schemas_to_strict=True)``, which must
  come out strict. A tool without arguments is the one exception (approval_core.serving.portable): strict mode
  wants ``additionalProperties: false`` there, which google-genai cannot read, so the Agents SDK takes it
  in ordinary mode; it must still convert, and only for that reason.

Each failure names the server, the tool and the problem. The portable schemas must refuse every value the
schemas pydantic writes refused (the server's validation is pydantic's and does not change).
"""

from __future__ import annotations

import importlib
import logging
from typing import Any

import pytest
from agents.mcp import MCPServerStdio, MCPUtil
from agents.strict_schema import ensure_strict_json_schema
from google.genai import _mcp_utils, types
from jsonschema import Draft202012Validator

from approval_core import ApprovalSettings, portable_schema
from approval_core.testing import connect
from servers import SERVERS

pytestmark = pytest.mark.anyio

GEMINI_REFUSES = {"$defs", "$ref", "oneOf", "const"}
"""Keywords Gemini function declarations refuse (issue 23 §2)."""
GEMINI_READS = {"additionalProperties", "anyOf", "oneOf", "$defs", "$ref"} | {
    "".join(part.title() if i else part for i, part in enumerate(name.split("_")))
    for name in types.JSONSchema.model_fields
}
"""The keywords google-genai's MCP conversion keeps (``_filter_to_supported_schema``); any other is dropped."""
SUBSCHEMAS = {"items", "additionalProperties", "not"}


def gemini_problems(schema: Any, path: str) -> list[str]:
    """What Gemini refuses, or google-genai would drop, in ``schema`` and in every schema inside it."""
    if not isinstance(schema, dict):
        return []
    found = [f"{path}: {key} (Gemini refuses it)" for key in sorted(GEMINI_REFUSES & schema.keys())]
    found += [f"{path}: {key} (google-genai drops it)" for key in sorted(schema.keys() - GEMINI_READS)]
    if isinstance(schema.get("additionalProperties"), bool):
        found.append(f"{path}: a boolean additionalProperties (google-genai stops on it, python-genai#2393)")
    if isinstance(schema.get("type"), list):
        found.append(f"{path}: a type list (google-genai's Schema takes one type)")
    for index, branch in enumerate(schema.get("anyOf") or []):
        found += gemini_problems(branch, f"{path}/anyOf/{index}")
    for name, inner in (schema.get("properties") or {}).items():
        found += gemini_problems(inner, f"{path}/properties/{name}")
    for key in SUBSCHEMAS & schema.keys():
        found += gemini_problems(schema[key], f"{path}/{key}")
    return found


async def listed_tools(name: str) -> list[Any]:
    server = importlib.import_module(f"{name.replace('-', '_')}.server").build_server(ApprovalSettings())
    async with connect(server, revision="2025-11-25") as client:
        return list((await client.list_tools()).tools)


@pytest.mark.parametrize("name", SERVERS)
async def test_google_genai_converts_every_tool_and_gemini_sees_every_rule(name: str) -> None:
    tools = await listed_tools(name)
    problems: list[str] = []
    for tool in tools:
        try:
            declaration = _mcp_utils.mcp_to_gemini_tool(tool)
            types.Schema.from_json_schema(
                json_schema=types.JSONSchema(**_mcp_utils._filter_to_supported_schema(tool.input_schema)),
                raise_error_on_unsupported_field=True,
            )
        except Exception as exc:
            problems.append(f"{name} {tool.name}: google-genai failed: {type(exc).__name__}: {exc}")
            continue
        assert declaration.function_declarations
        problems += [f"{name} {p}" for p in gemini_problems(tool.input_schema, tool.name)]
    try:  # the whole list at once, as the SDK converts it: one bad tool stops them all
        assert len(_mcp_utils.mcp_to_gemini_tools(tools)) == len(tools)
    except Exception as exc:
        problems.append(f"{name}: the tool list as a whole: {type(exc).__name__}: {exc}")
    assert not problems, "\n".join(problems)


def admits_null(schema: dict[str, Any]) -> bool:
    return any(branch.get("type") == "null" for branch in schema.get("anyOf", []))


@pytest.mark.parametrize("name", SERVERS)
async def test_a_gemini_function_declaration_takes_every_listed_input_schema_as_it_stands(name: str) -> None:
    tools = await listed_tools(name)
    problems: list[str] = []
    optional = 0
    for tool in tools:
        try:
            declared = types.FunctionDeclaration(
                name=tool.name, description=tool.description, parameters=tool.input_schema
            )
        except Exception as exc:
            problems.append(f"{name} {tool.name}: FunctionDeclaration(parameters=...) refused it: {exc}")
            continue
        assert declared.parameters is not None
        converted = _mcp_utils.mcp_to_gemini_tool(tool).function_declarations
        assert converted
        assert converted[0].parameters is not None
        seen = converted[0].parameters.properties or {}
        for argument, schema in (tool.input_schema.get("properties") or {}).items():
            if admits_null(schema):
                optional += 1
                if not seen[argument].nullable:
                    problems.append(f"{name} {tool.name}({argument}): admits null but Gemini is not told so")
    assert not problems, "\n".join(problems)
    assert optional, "no optional argument found: the nullable check checked nothing"


@pytest.mark.parametrize("name", SERVERS)
async def test_the_openai_agents_sdk_converts_every_tool_with_arguments_in_strict_mode(
    name: str, caplog: pytest.LogCaptureFixture
) -> None:
    sdk_server = MCPServerStdio(params={"command": "unused"}, name=name)
    problems: list[str] = []
    plain = 0
    for tool in await listed_tools(name):
        caplog.clear()
        with caplog.at_level(logging.INFO, logger="openai.agents"):
            converted = MCPUtil.to_function_tool(tool, sdk_server, convert_schemas_to_strict=True)
        if converted.strict_json_schema:
            continue
        reason = " ".join(r.getMessage() for r in caplog.records) or "no reason logged"
        if tool.input_schema.get("properties"):
            problems.append(f"{name} {tool.name}: not strict: {reason}")
            continue
        plain += 1  # no arguments: only the open empty object keeps it out of strict mode
        try:
            ensure_strict_json_schema(dict(tool.input_schema), _reject_open_objects=True)
        except Exception as exc:
            if "permits undeclared properties" not in str(exc):
                problems.append(f"{name} {tool.name}: a tool without arguments refused for another reason: {exc}")
    assert not problems, "\n".join(problems)
    assert plain <= 3, "more tools without arguments than expected: check that each one has none"


def unclosed(schema: Any) -> Any:
    """``schema`` without ``additionalProperties: false``: that rule moved to the server (next test)."""
    if isinstance(schema, list):
        return [unclosed(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    return {k: unclosed(v) for k, v in schema.items() if not (k == "additionalProperties" and v is False)}


CLOSED_ARGUMENTS = {"caldav-mcp": 0, "carddav-mcp": 2, "ntfy-mcp": 2}
"""How many arguments, per server, are (or list) objects that pydantic closes; a new server needs its row."""


def closed_object(
    schema: dict[str, Any], defs: dict[str, Any], listed: bool = False
) -> tuple[dict[str, Any], bool] | None:
    """The closed object (``additionalProperties: false``) an argument is, or holds a list of (True), else None."""
    for branch in [schema, *schema.get("anyOf", []), *schema.get("oneOf", [])]:
        branch = defs.get(branch.get("$ref", "").removeprefix("#/$defs/"), branch)
        if branch.get("additionalProperties") is False:
            return branch, listed
        if isinstance(branch.get("items"), dict) and not listed:
            return closed_object(branch["items"], defs, listed=True)
    return None


@pytest.mark.parametrize("name", SERVERS)
async def test_an_unknown_field_inside_an_argument_is_still_refused_by_the_server(name: str) -> None:
    server = importlib.import_module(f"{name.replace('-', '_')}.server").build_server(ApprovalSettings())
    problems: list[str] = []
    tried = 0
    async with connect(server, revision="2025-11-25") as client:
        for tool in server._tool_manager.list_tools():
            defs = tool.parameters.get("$defs", {})
            for argument, schema in tool.parameters.get("properties", {}).items():
                found = closed_object(schema, defs)
                if found is None:
                    continue
                closed, listed = found
                tried += 1
                entry = {key: inner["const"] for key, inner in closed["properties"].items() if "const" in inner}
                entry["zz_unknown"] = 1
                value = [entry] if listed else entry
                result = await client.call_tool(tool.name, {argument: value})
                text = " ".join(getattr(block, "text", "") for block in result.content)
                if not result.is_error or "zz_unknown" not in text or "no such field" not in text:
                    problems.append(f"{name} {tool.name}({argument}={value!r}): {text[:200]!r}")
    assert not problems, "\n".join(problems)
    assert tried >= CLOSED_ARGUMENTS[name], f"{tried} arguments hold a closed object, fewer than expected"


CANDIDATES: tuple[Any, ...] = (None, 3.5, "x", "not-a-valid-value", "", -7, 0, 10**9, True, [], ["a"], {}, [[1]])
CANDIDATES += ({"unexpected": []}, [{"name": "X-A", "value": "1"}], "a" * 5000, ["a"] * 60)


@pytest.mark.parametrize("name", SERVERS)
async def test_the_portable_schemas_allow_nothing_that_pydantics_schemas_refused(name: str) -> None:
    server = importlib.import_module(f"{name.replace('-', '_')}.server").build_server(ApprovalSettings())
    problems: list[str] = []
    for tool in server._tool_manager.list_tools():  # the schemas pydantic wrote, before approval_core.serving.portable
        original, published = unclosed(tool.parameters), portable_schema(tool.parameters)
        for argument, schema in original.get("properties", {}).items():
            before = Draft202012Validator({"$defs": original.get("$defs", {}), **schema})
            after = Draft202012Validator(published["properties"][argument])
            for value in CANDIDATES:
                if after.is_valid(value) and not before.is_valid(value):
                    problems.append(f"{name} {tool.name}({argument}={value!r:.40}): allowed only by the portable form")
    assert not problems, "\n".join(problems)
