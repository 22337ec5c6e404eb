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
from collections.abc import Callable
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


def walk(schema: Any, path: str, check: Callable[[dict[str, Any], str], list[str]]) -> list[str]:
    """What ``check`` finds in ``schema`` and in every schema inside it (each with its JSON pointer)."""
    if not isinstance(schema, dict):
        return []
    found = check(schema, path)
    for key, value in schema.items():
        if key in MAPS and isinstance(value, dict):
            for name, inner in value.items():
                found += walk(inner, f"{path}/{key}/{name}", check)
        elif key in LISTS and isinstance(value, list):
            for index, inner in enumerate(value):
                found += walk(inner, f"{path}/{key}/{index}", check)
        elif key in SINGLE:
            found += walk(value, f"{path}/{key}", check)
    return found


def _unknown(schema: dict[str, Any], path: str) -> list[str]:
    return [f"{path}/{key}" for key in schema if key not in KEYWORDS]


def unknown_keywords(schema: Any, path: str) -> list[str]:
    """Each keyword of ``schema`` (and of the schemas inside it) that Draft 2020-12 does not define."""
    return walk(schema, path, _unknown)


# Ajv strictTypes: a keyword that applies to one type needs that type declared in the same schema.
TYPED = {
    "array": {"items", "prefixItems", "maxItems", "minItems", "uniqueItems", "contains", "maxContains", "minContains"},
    "string": {"maxLength", "minLength", "pattern", "format"},
    "object": {"properties", "patternProperties", "additionalProperties", "required", "maxProperties"},
    "number": {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"},
}


def _untyped(schema: dict[str, Any], path: str) -> list[str]:
    declared = schema.get("type")
    types = set(declared) if isinstance(declared, list) else {declared} if isinstance(declared, str) else set()
    if "integer" in types:
        types.add("number")
    return [
        f"{path}/{key} without type {kind!r}"
        for kind, keys in TYPED.items()
        for key in sorted(keys & schema.keys())
        if kind not in types and not (kind == "string" and key == "format")
    ]


def untyped_keywords(schema: Any, path: str) -> list[str]:
    """Each type-specific keyword of ``schema`` (and inside it) whose schema does not declare that type."""
    return walk(schema, path, _untyped)


def test_the_walker_finds_a_keyword_beside_an_any_of_that_needs_its_type() -> None:
    schema = {"type": "object", "properties": {"a": {"anyOf": [{"type": "string"}, {"type": "array"}], "maxItems": 20}}}
    assert untyped_keywords(schema, "") == ["/properties/a/maxItems without type 'array'"]
    assert untyped_keywords({"type": ["array", "null"], "maxItems": 2}, "") == []


def test_the_walker_finds_an_openapi_keyword() -> None:
    schema = {"properties": {"a": {"items": {"oneOf": [{"type": "string"}], "discriminator": {}}}}}
    assert unknown_keywords(schema, "") == ["/properties/a/items/discriminator"]


@pytest.mark.anyio
@pytest.mark.parametrize("name", SERVERS)
@pytest.mark.parametrize("finder", [unknown_keywords, untyped_keywords])
async def test_every_schema_uses_draft_2020_12_keywords_each_with_its_type(name: str, finder: Any) -> None:
    server = importlib.import_module(f"{name.replace('-', '_')}.server").build_server(ApprovalSettings())
    found: list[str] = []
    for tool in await server.list_tools():
        found += finder(tool.input_schema, f"{tool.name}.inputSchema")
        found += finder(tool.output_schema, f"{tool.name}.outputSchema")
    assert found == []
