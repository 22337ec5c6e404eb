"""Every tool schema of every server uses only JSON Schema Draft 2020-12 keywords.

A strict validator refuses a schema with a keyword it does not know: Ajv in
strict mode (``nox -s interop`` compiles every schema with it) refuses
pydantic's OpenAPI ``discriminator``, which ntfy-mcp's tagged union of
notification actions used to carry. This walks every inputSchema and
outputSchema and names each unknown keyword with its path, so the fault shows
here without Node. It also names each type-specific keyword (``maxItems``,
``maxLength``, ``minimum``...) found in a schema whose ``type`` does not name
that type, which Ajv's strict types refuse ("missing type "array" for keyword
"maxItems""): such a keyword beside an ``anyOf`` has to move into the branch.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import pytest

from approval_core import ApprovalSettings

ROOT = Path(__file__).resolve().parents[1]
SERVERS = sorted(p.name for p in (ROOT / "packages").glob("*-mcp") if (p / "pyproject.toml").is_file())

# Draft 2020-12: core, applicator, unevaluated, validation, meta-data, format-annotation, content
# (https://json-schema.org/draft/2020-12/json-schema-core and json-schema-validation).
KEYWORDS = {
    *("$schema", "$id", "$ref", "$anchor", "$dynamicRef", "$dynamicAnchor", "$vocabulary", "$comment", "$defs"),
    *("allOf", "anyOf", "oneOf", "not", "if", "then", "else", "dependentSchemas", "prefixItems", "items"),
    *("contains", "properties", "patternProperties", "additionalProperties", "propertyNames"),
    *("unevaluatedItems", "unevaluatedProperties", "type", "enum", "const", "multipleOf", "maximum"),
    *("exclusiveMaximum", "minimum", "exclusiveMinimum", "maxLength", "minLength", "pattern", "maxItems"),
    *("minItems", "uniqueItems", "maxContains", "minContains", "maxProperties", "minProperties", "required"),
    *("dependentRequired", "title", "description", "default", "deprecated", "readOnly", "writeOnly"),
    *("examples", "format", "contentEncoding", "contentMediaType", "contentSchema"),
}
MAPS = {"properties", "patternProperties", "$defs", "dependentSchemas"}  # name -> schema
LISTS = {"allOf", "anyOf", "oneOf", "prefixItems"}  # list of schemas
SINGLE = {"not", "if", "then", "else", "items", "contains", "additionalProperties", "propertyNames"}
SINGLE |= {"unevaluatedItems", "unevaluatedProperties", "contentSchema"}


def unknown_keywords(schema: Any, path: str) -> list[str]:
    """Each keyword of ``schema`` (and of the schemas inside it) that Draft 2020-12 does not define."""
    if not isinstance(schema, dict):
        return []
    found = [f"{path}/{key}" for key in schema if key not in KEYWORDS]
    for key, value in schema.items():
        if key in MAPS and isinstance(value, dict):
            for name, inner in value.items():
                found += unknown_keywords(inner, f"{path}/{key}/{name}")
        elif key in LISTS and isinstance(value, list):
            for index, inner in enumerate(value):
                found += unknown_keywords(inner, f"{path}/{key}/{index}")
        elif key in SINGLE:
            found += unknown_keywords(value, f"{path}/{key}")
    return found


# Ajv strictTypes: a keyword that applies to one type needs that type declared in the same schema.
TYPED = {
    "array": {"items", "prefixItems", "maxItems", "minItems", "uniqueItems", "contains", "maxContains", "minContains"},
    "string": {"maxLength", "minLength", "pattern", "format"},
    "object": {"properties", "patternProperties", "additionalProperties", "required", "maxProperties"},
    "number": {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"},
}


def untyped_keywords(schema: Any, path: str) -> list[str]:
    """Each type-specific keyword of ``schema`` (and inside it) whose schema does not declare that type."""
    if not isinstance(schema, dict):
        return []
    declared = schema.get("type")
    types = set(declared) if isinstance(declared, list) else {declared} if isinstance(declared, str) else set()
    if "integer" in types:
        types.add("number")
    found = [
        f"{path}/{key} without type {kind!r}"
        for kind, keys in TYPED.items()
        for key in sorted(keys & schema.keys())
        if kind not in types and not (kind == "string" and key == "format")
    ]
    for key, value in schema.items():
        if key in MAPS and isinstance(value, dict):
            for name, inner in value.items():
                found += untyped_keywords(inner, f"{path}/{key}/{name}")
        elif key in LISTS and isinstance(value, list):
            for index, inner in enumerate(value):
                found += untyped_keywords(inner, f"{path}/{key}/{index}")
        elif key in SINGLE:
            found += untyped_keywords(value, f"{path}/{key}")
    return found


def test_the_walker_finds_a_keyword_beside_an_any_of_that_needs_its_type() -> None:
    schema = {"type": "object", "properties": {"a": {"anyOf": [{"type": "string"}, {"type": "array"}], "maxItems": 20}}}
    assert untyped_keywords(schema, "") == ["/properties/a/maxItems without type 'array'"]
    assert untyped_keywords({"type": ["array", "null"], "maxItems": 2}, "") == []


def test_the_walker_finds_an_openapi_keyword() -> None:
    schema = {"properties": {"a": {"items": {"oneOf": [{"type": "string"}], "discriminator": {}}}}}
    assert unknown_keywords(schema, "") == ["/properties/a/items/discriminator"]


@pytest.mark.anyio
@pytest.mark.parametrize("name", SERVERS)
async def test_every_schema_uses_draft_2020_12_keywords_only(name: str) -> None:
    server = importlib.import_module(f"{name.replace('-', '_')}.server").build_server(ApprovalSettings())
    found: list[str] = []
    for tool in await server.list_tools():
        found += unknown_keywords(tool.input_schema, f"{tool.name}.inputSchema")
        found += unknown_keywords(tool.output_schema, f"{tool.name}.outputSchema")
    assert found == []


@pytest.mark.anyio
@pytest.mark.parametrize("name", SERVERS)
async def test_every_type_specific_keyword_sits_with_its_type(name: str) -> None:
    server = importlib.import_module(f"{name.replace('-', '_')}.server").build_server(ApprovalSettings())
    found: list[str] = []
    for tool in await server.list_tools():
        found += untyped_keywords(tool.input_schema, f"{tool.name}.inputSchema")
        found += untyped_keywords(tool.output_schema, f"{tool.name}.outputSchema")
    assert found == []
