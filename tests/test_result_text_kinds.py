"""Every text a result carries is declared by its server as stored text, a name read from the backend, or its own.

A server hands approval-core two sets (``equip(stored_text=..., names=...)``): the keys whose values are
stored text (always marked and fenced) and the keys whose values are names and values read from the
backend (a UID, a path, a TZID, a STATUS: fenced unless of a plain identifier's shape). A key in neither is
shown as it is, so a key forgotten there would let a writer's text reach the model unmarked; that is how a
contact's structured name (``n``) and an event's UID once did. So each server also declares ``OWN_TEXT``,
the keys whose values it writes itself, and this test walks every tool's outputSchema: each key that can
hold a string, outside a stored field, must be in exactly one of the three sets, and each set entry must be
a key some result has. A new tool's new key fails here until its server says which kind it is.
"""

from __future__ import annotations

import importlib
from typing import Any

import pytest

from approval_core import ApprovalSettings
from servers import GUIDE, SERVERS, import_name

pytestmark = pytest.mark.anyio

SETS = ("STORED_TEXT", "NAMES", "OWN_TEXT")


def _types(schema: dict[str, Any]) -> set[str]:
    declared = schema.get("type")
    return set(declared) if isinstance(declared, list) else {declared} if isinstance(declared, str) else set()


def text_keys(schema: Any, stored: frozenset[str], defs: dict[str, Any], key: str | None = None) -> set[str]:
    """The property names in ``schema`` whose values can hold a string (or a map of any values), outside ``stored``."""
    if not isinstance(schema, dict):
        return set()
    if isinstance(schema.get("$ref"), str):
        return text_keys(defs[schema["$ref"].rsplit("/", 1)[-1]], stored, defs, key)
    found: set[str] = set()
    for branch in schema.get("anyOf", []) + schema.get("oneOf", []):
        found |= text_keys(branch, stored, defs, key)
    types = _types(schema)
    if key is not None and ("string" in types or ("object" in types and schema.get("additionalProperties"))):
        found.add(key)
    if key in stored:
        return found
    for name, inner in schema.get("properties", {}).items():
        found |= text_keys(inner, stored, defs, name)
    found |= text_keys(schema.get("items"), stored, defs, key)
    if isinstance(schema.get("additionalProperties"), dict):
        found |= text_keys(schema["additionalProperties"], stored, defs, key)
    return found


def test_the_walk_finds_strings_in_nested_models_lists_and_maps_but_not_inside_stored_fields() -> None:
    defs = {"Inner": {"type": "object", "properties": {"uid": {"type": ["string", "null"]}, "n": {"type": "integer"}}}}
    schema = {
        "type": "object",
        "properties": {
            "items": {"type": "array", "items": {"$ref": "#/$defs/Inner"}},
            "tags": {"type": "array", "items": {"type": "string"}},
            "extras": {"type": "object", "additionalProperties": True},
            "summary": {"type": "object", "properties": {"family": {"type": "string"}}},
            "when": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        },
    }
    assert text_keys(schema, frozenset({"summary"}), defs) == {"uid", "tags", "extras", "when"}  # not "family"


@pytest.mark.parametrize("name", SERVERS)
async def test_every_text_key_of_every_result_has_one_declared_kind(name: str) -> None:
    module = importlib.import_module(f"{import_name(name)}.server")
    missing = [kind for kind in SETS if not isinstance(getattr(module, kind, None), frozenset)]
    assert not missing, f"{name}.server declares no {', '.join(missing)}: add them as {GUIDE} says"
    stored, names, own = (getattr(module, kind) for kind in SETS)
    server = module.build_server(ApprovalSettings())
    keys: set[str] = set()
    for tool in await server.list_tools():
        schema = tool.output_schema or {}
        keys |= text_keys(schema, stored, schema.get("$defs", {}))
    keys.discard("untrusted")  # approval-core's own list of pointers
    assert sorted(keys - stored - names - own) == [], "keys of no declared kind"
    assert sorted((stored & names) | (stored & own) | (names & own)) == [], "keys of two kinds"
    assert sorted((names | own) - keys) == [], "declared keys no result has"
