"""approval_core.serving.portable: input schemas in the form model SDKs accept (allowing nothing more),
outputs inlined."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import mcp_types as mt
import pytest
from jsonschema import Draft202012Validator
from mcp.server.mcpserver import MCPServer
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError

from approval_core import (
    install_error_boundary,
    install_portable_schemas,
    mapping_from_pairs,
    portable_schema,
    structured,
)
from approval_core.serving.portable import UnportableSchemaError, output_schema
from approval_core.testing import connect

pytestmark = pytest.mark.anyio


def test_refs_are_inlined_with_their_own_description_and_defs_dropped() -> None:
    schema = {
        "$defs": {
            "Name": {"type": "object", "properties": {"given": {"type": "string"}}, "additionalProperties": False}
        },
        "type": "object",
        "properties": {"n": {"$ref": "#/$defs/Name", "description": "the name"}},
    }
    assert portable_schema(schema) == {
        "type": "object",
        "properties": {"n": {"type": "object", "properties": {"given": {"type": "string"}}, "description": "the name"}},
    }
    assert "$defs" in schema  # the given schema is not changed


def test_a_null_branch_stays_a_branch_in_an_input_schema_and_becomes_a_null_type_in_an_output_schema() -> None:
    schema = {
        "type": "object",
        "properties": {
            "a": {"anyOf": [{"type": "string", "maxLength": 3}, {"type": "null"}], "default": None},
            "b": {"anyOf": [{"enum": ["x", "y"], "type": "string"}, {"type": "null"}]},
            "c": {"anyOf": [{"anyOf": [{"type": "integer"}, {"enum": ["low"], "type": "string"}]}, {"type": "null"}]},
        },
    }
    listed = portable_schema(schema)["properties"]
    assert listed == schema["properties"]  # google-genai's Schema takes one type, never ["string", "null"]
    properties = output_schema(schema)["properties"]
    assert properties["a"] == {"type": ["string", "null"], "maxLength": 3, "default": None}
    assert properties["b"] == {"type": ["string", "null"], "enum": ["x", "y", None]}
    assert properties["c"] == {"anyOf": [{"type": ["integer", "null"]}, {"enum": ["low"], "type": "string"}]}


def test_one_of_becomes_any_of_and_const_a_single_enum() -> None:
    schema = {"oneOf": [{"properties": {"kind": {"const": "view", "type": "string"}}, "type": "object"}]}
    assert portable_schema(schema) == {
        "anyOf": [{"properties": {"kind": {"enum": ["view"], "type": "string"}}, "type": "object"}]
    }


def test_an_open_map_becomes_a_list_of_pairs() -> None:
    schema = {"type": "object", "additionalProperties": {"type": "string", "maxLength": 9}, "maxProperties": 2}
    assert portable_schema({"type": "object", "properties": {"h": schema}})["properties"]["h"] == {
        "type": "array",
        "items": {
            "type": "object",
            "properties": {"name": {"type": "string", "minLength": 1}, "value": {"type": "string", "maxLength": 9}},
            "required": ["name", "value"],
        },
        "maxItems": 2,
        "description": "a list of {name, value} pairs, each name once",
    }


def test_a_recursive_or_dangling_ref_is_refused() -> None:
    recursive = {"$defs": {"A": {"properties": {"a": {"$ref": "#/$defs/A"}}}}, "$ref": "#/$defs/A"}
    with pytest.raises(UnportableSchemaError, match="recursive"):
        portable_schema(recursive)
    with pytest.raises(UnportableSchemaError, match="names no definition"):
        portable_schema({"properties": {"a": {"$ref": "#/$defs/B"}}})


class Headers(BaseModel):
    model_config = ConfigDict(extra="forbid")
    headers: Annotated[dict[str, Annotated[str, Field(max_length=3)]], BeforeValidator(mapping_from_pairs)] = Field(
        default_factory=dict, max_length=2
    )


def test_a_map_field_takes_pairs_and_keeps_its_rules() -> None:
    assert Headers.model_validate({"headers": [{"name": "A", "value": "1"}]}).headers == {"A": "1"}
    assert Headers.model_validate({"headers": {"A": "1"}}).headers == {"A": "1"}
    refused: list[Any] = [
        [{"name": "A", "value": "1"}, {"name": "A", "value": "2"}],  # a name twice
        [{"name": "A", "value": "long"}],  # the value's rule
        [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}, {"name": "C", "value": "3"}],  # the map's size
        [{"name": "A", "value": "1", "extra": 1}],  # not a pair: refused as a map would be
        [{"name": 1, "value": "1"}],
    ]
    for value in refused:
        with pytest.raises(ValidationError):
            Headers.model_validate({"headers": value})


class Pick(BaseModel):
    model_config = ConfigDict(extra="forbid")
    kind: Literal["a", "b"]


async def test_the_server_lists_portable_schemas_and_still_validates_with_pydantic() -> None:
    server: MCPServer[Any] = MCPServer("portable-mcp")

    @server.tool()
    async def choose(pick: Pick, note: str | None = None) -> str:
        """Picks."""
        return pick.kind

    install_error_boundary(server, ())
    install_portable_schemas(server)
    install_portable_schemas(server)  # idempotent
    async with connect(server, revision="2025-11-25") as client:
        (tool,) = (await client.list_tools()).tools
        assert "$defs" not in tool.input_schema
        assert tool.input_schema["properties"]["note"]["anyOf"] == [{"type": "string"}, {"type": "null"}]
        refused = await client.call_tool("choose", {"pick": {"kind": "a", "other": 1}})
        accepted = await client.call_tool("choose", {"pick": {"kind": "b"}})
    assert refused.is_error
    assert "- pick.other: pick has no such field" in refused.content[0].text
    assert not accepted.is_error


def test_an_output_schema_is_inlined_and_folded_but_keeps_its_maps_and_closed_objects() -> None:
    schema = {
        "$defs": {
            "Item": {
                "type": "object",
                "properties": {
                    "tag": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
                    "extra": {"type": "object", "additionalProperties": {"type": "string"}},
                },
                "required": ["extra"],
                "additionalProperties": False,
            }
        },
        "type": "object",
        "properties": {"items": {"type": "array", "items": {"$ref": "#/$defs/Item"}}},
        "required": ["items"],
    }
    assert output_schema(schema) == {
        "type": "object",
        "properties": {
            "items": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "tag": {"type": ["string", "null"], "default": None},
                        "extra": {"type": "object", "additionalProperties": {"type": "string"}},
                    },
                    "required": ["extra"],
                    "additionalProperties": False,
                },
            }
        },
        "required": ["items"],
    }
    recursive = {"$defs": {"A": {"properties": {"a": {"$ref": "#/$defs/A"}}}}, "$ref": "#/$defs/A"}
    assert output_schema(recursive) == recursive  # listed as it was


class Row(BaseModel):
    name: str
    note: str | None = None


class Rows(BaseModel):
    rows: list[Row]


async def test_the_server_lists_inlined_output_schemas_its_results_still_match() -> None:
    server: MCPServer[Any] = MCPServer("portable-mcp")

    @server.tool()
    async def rows() -> Annotated[mt.CallToolResult, Rows]:
        """Rows."""
        return structured(Rows(rows=[Row(name="a"), Row(name="b", note="n")]))

    install_portable_schemas(server)
    async with connect(server, revision="2025-11-25") as client:  # checks each result against its outputSchema
        (tool,) = (await client.list_tools()).tools
        result = await client.call_tool("rows", {})
    assert tool.output_schema is not None
    assert "$defs" not in tool.output_schema
    assert "$ref" not in str(tool.output_schema)
    assert not result.is_error
    Draft202012Validator(tool.output_schema).validate({"rows": [{"name": "x", "note": None}]})
