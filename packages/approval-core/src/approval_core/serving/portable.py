"""Tool input schemas in the one form every model SDK's converter accepts.

pydantic writes a tool's arguments as JSON Schema 2020-12 with ``$defs`` and
``$ref``, ``oneOf`` for a tagged union, ``const`` for its tag, ``anyOf [X,
{"type": "null"}]`` for an optional value, ``additionalProperties: false`` on
a closed model and ``additionalProperties: {...}`` on a ``dict[str, X]``.
Valid, and refused by two converters that sit between an MCP server and a
model (issue 23 §2):

* google-genai's MCP conversion (``mcp_to_gemini_tool``) stops on any boolean
  ``additionalProperties`` (googleapis/python-genai#2393), for the server's
  whole tool list at once; Gemini function declarations take no ``$defs`` /
  ``$ref``, ``oneOf`` or ``const``; and a declaration built from the schema
  as it stands (``FunctionDeclaration(parameters=schema)``, google-genai's
  ``Schema`` model) takes one ``type`` per schema, never a list such as
  ``["string", "null"]`` (an optional value stays ``anyOf [X, {"type":
  "null"}]``, which both google-genai paths read as ``nullable``);
* the OpenAI Agents SDK in strict mode (``agents.strict_schema.
  ensure_strict_json_schema``, used by ``convert_schemas_to_strict``) refuses
  an object that allows undeclared fields (a ``dict[str, X]``), and makes
  every field required, so an optional field has to admit ``null``.

:func:`portable_schema` rewrites an input schema into a form both take, the
same values allowed or fewer (never more):

* every ``$ref`` is replaced by the definition it names (its own
  ``description`` kept), and ``$defs`` is dropped;
* ``oneOf`` becomes ``anyOf`` (the family's unions are tagged, so at most one
  branch ever matches) and ``const: v`` becomes ``enum: [v]``;
* an optional value keeps pydantic's ``anyOf [X, {"type": "null"}]``: the
  Agents SDK's strict mode, google-genai's MCP conversion (which folds it into
  ``nullable``) and its ``FunctionDeclaration`` all take it;
* ``additionalProperties: false`` is left out of an object that declares its
  fields. **Moved to the server:** an unknown field is refused by the tool's
  pydantic model (``extra="forbid"``), as it was before, naming the field;
* an open map (``{"type": "object", "additionalProperties": S}``) is published
  as a list of ``{"name": ..., "value": S}`` pairs, ``maxProperties`` as
  ``maxItems``; the model field accepts that list through
  :func:`mapping_from_pairs` (``BeforeValidator``), refusing a name given
  twice, and then checks the map as before.

A no-argument tool keeps ``{"type": "object", "properties": {}}``: the Agents
SDK's strict mode wants ``additionalProperties: false`` there, which
google-genai cannot read, so that tool is converted by the Agents SDK in its
ordinary (non-strict) mode; having no arguments, it loses nothing.

:func:`install_portable_schemas` makes a server list every tool with its
portable input schema (``tools/list``); the arguments are still validated by
the tool's own pydantic model, so every rule the server checked is still
checked. It lists each output schema with its ``$ref`` inlined, ``oneOf`` as
``anyOf``, ``const`` as ``enum`` and a nullable ``anyOf`` folded into a
``type`` list with ``"null"`` (:func:`output_schema`): the same results validate, and a client checking
every result (the Python SDK's jsonschema) does about a third less work per
item, as it no longer resolves a reference per listed entry. An output schema
keeps its ``additionalProperties`` and its maps as they are (a result is data
the server sends, not a value a converter has to express), and one that
cannot be inlined (a recursive model) is listed as it was.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from mcp.server.mcpserver import MCPServer
from mcp_types import Tool

__all__ = ["install_portable_schemas", "mapping_from_pairs", "output_schema", "portable_schema"]

_MARK = "_approval_core_portable"
_NULL = {"type": "null"}
_UNTOUCHED = {"enum", "required", "default", "examples", "type", "title", "description", "pattern", "format"}


class UnportableSchemaError(ValueError):
    """A schema that cannot be made portable (a ``$ref`` cycle, or a ``$ref`` to nowhere)."""


def _resolve(ref: str, defs: Mapping[str, Any], seen: tuple[str, ...]) -> dict[str, Any]:
    name = ref.removeprefix("#/$defs/")
    if name == ref or name not in defs:
        raise UnportableSchemaError(f"$ref {ref!r} names no definition of this schema")
    if name in seen:
        raise UnportableSchemaError(f"$ref {ref!r} is recursive: {' -> '.join((*seen, name))}")
    return cast(dict[str, Any], defs[name])


def _nullable(branch: dict[str, Any]) -> bool:
    """Make ``branch`` admit ``null`` in place; False when it cannot say so without an ``anyOf`` branch."""
    kind = branch.get("type")
    if isinstance(kind, str):
        branch["type"] = [kind, "null"] if kind != "null" else kind
    elif isinstance(kind, list):
        if "null" not in kind:
            branch["type"] = [*cast(list[str], kind), "null"]
    elif isinstance(branch.get("anyOf"), list):
        branches = cast(list[dict[str, Any]], branch["anyOf"])
        ordered = sorted(branches, key=lambda b: "enum" in b)  # a plain type first: no enum to widen
        return any(_nullable(b) for b in ordered[:1])
    else:
        return False
    if isinstance(branch.get("enum"), list) and None not in branch["enum"]:
        branch["enum"] = [*cast(list[Any], branch["enum"]), None]
    return True


def _fold_null(node: dict[str, Any]) -> dict[str, Any]:
    """``anyOf [X, {"type": "null"}]`` as X admitting null (see the module docstring)."""
    branches = cast(list[dict[str, Any]], node["anyOf"])
    others = [b for b in branches if b != _NULL]
    if len(others) == len(branches) or not others:
        return node
    rest = {k: v for k, v in node.items() if k != "anyOf"}
    folded = {**others[0], **rest} if len(others) == 1 else {**rest, "anyOf": others}
    if not _nullable(folded):
        return node
    return folded


def _pairs(node: dict[str, Any]) -> dict[str, Any]:
    """An open map ``{"type": "object", "additionalProperties": S}`` as a list of name/value pairs."""
    pair = {
        "type": "object",
        "properties": {"name": {"type": "string", "minLength": 1}, "value": node["additionalProperties"]},
        "required": ["name", "value"],
    }
    listed: dict[str, Any] = {"type": "array", "items": pair}
    for key in ("title", "default"):
        if key in node:
            listed[key] = [{"name": k, "value": v} for k, v in node[key].items()] if key == "default" else node[key]
    if "maxProperties" in node:
        listed["maxItems"] = node["maxProperties"]
    if "minProperties" in node:
        listed["minItems"] = node["minProperties"]
    said = str(node.get("description") or "").rstrip(".")
    listed["description"] = (said + ": " if said else "") + "a list of {name, value} pairs, each name once"
    return listed


def _convert(node: Any, defs: Mapping[str, Any], seen: tuple[str, ...], output: bool = False) -> Any:
    if isinstance(node, list):
        return [_convert(item, defs, seen, output) for item in cast(list[Any], node)]
    if not isinstance(node, dict):
        return node
    node = cast(dict[str, Any], node)
    ref = node.get("$ref")
    if isinstance(ref, str):
        target = _resolve(ref, defs, seen)
        siblings = {k: v for k, v in node.items() if k != "$ref"}
        return _convert({**target, **siblings}, defs, (*seen, ref.removeprefix("#/$defs/")), output)
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "$defs":
            continue
        if key == "const":
            out["enum"] = [value]
        elif key == "oneOf":
            out["anyOf"] = [*out.get("anyOf", []), *_convert(value, defs, seen, output)]
        elif key == "properties":
            properties = cast(dict[str, Any], value).items()
            out[key] = {name: _convert(inner, defs, seen, output) for name, inner in properties}
        elif key == "additionalProperties" and isinstance(value, bool):
            if output or (value is False and "properties" not in node):
                out[key] = value  # an object closed to every field; no family input schema has one
        elif key in _UNTOUCHED:
            out[key] = value
        else:
            out[key] = _convert(value, defs, seen, output)
    if not output and isinstance(out.get("additionalProperties"), dict) and "properties" not in out:
        return _pairs(out)
    if output and isinstance(out.get("anyOf"), list):
        return _fold_null(out)
    return out


def portable_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """``schema`` (a tool's input schema) in the portable form of the module docstring; ``schema`` is not changed.

    Raises:
        UnportableSchemaError: A ``$ref`` is recursive or names no definition.
    """
    defs = cast(Mapping[str, Any], schema.get("$defs") or {})
    return cast(dict[str, Any], _convert(dict(schema), defs, ()))


def output_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """An output schema with its references inlined and its nullable unions folded (see the module docstring).

    The same results validate against it as against ``schema``; ``additionalProperties`` and maps are kept.
    ``schema`` is not changed; a schema that cannot be inlined (a recursive model) is returned as it was.
    """
    try:
        defs = cast(Mapping[str, Any], schema.get("$defs") or {})
        return cast(dict[str, Any], _convert(dict(schema), defs, (), output=True))
    except UnportableSchemaError:
        return dict(schema)


def mapping_from_pairs(value: Any) -> Any:
    """A list of ``{"name": n, "value": v}`` pairs as the map ``{n: v}``; any other value as it is.

    For a ``dict[str, X]`` field published as pairs (:func:`portable_schema`):
    ``Annotated[dict[str, X], BeforeValidator(mapping_from_pairs)]``. A pair
    with other keys is left for the field's own validation to refuse.

    Raises:
        ValueError: A name is given twice.
    """
    if not isinstance(value, list):
        return value
    items = cast(list[Any], value)
    if not all(isinstance(i, dict) and set(cast(dict[str, Any], i)) == {"name", "value"} for i in items):
        return items
    pairs = cast(list[dict[str, Any]], items)
    mapping: dict[str, Any] = {}
    for pair in pairs:
        name = pair["name"]
        if not isinstance(name, str):
            return items
        if name in mapping:
            raise ValueError(f"the name {name!r} is given twice")
        mapping[name] = pair["value"]
    return mapping


def install_portable_schemas(server: MCPServer[Any]) -> None:
    """List every tool of ``server`` with its input schema in portable form, its output schema inlined (idempotent).

    ``tools/list`` and every caller of ``server.list_tools()`` see the portable
    schema; validation of a call is the tool's own pydantic model, unchanged.
    """
    if getattr(server, _MARK, False):
        return
    original = server.list_tools

    async def list_tools() -> list[Tool]:
        return [
            tool.model_copy(
                update={
                    "input_schema": portable_schema(tool.input_schema),
                    "output_schema": None if tool.output_schema is None else output_schema(tool.output_schema),
                }
            )
            for tool in await original()
        ]

    server.list_tools = list_tools  # type: ignore[method-assign]
    setattr(server, _MARK, True)
