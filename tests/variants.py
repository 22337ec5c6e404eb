"""Changed copies of a tool call's arguments, made from the tool's input schema (JSON Schema 2020-12, as listed).

``variants(args, schema)`` yields, for each argument of the tool in turn (a
nested field of an object argument counts as its own argument, named
``changes.title``), one copy of ``args`` in which only that argument differs:

- a value the call gave is changed: a string gets another last character (an
  enum another member), a number moves by one within its bounds, a boolean
  flips, a list loses its last item (a one-item list gets a second one), and
  an object changes each of its fields in turn and gains one it lacked;
- an argument the call left out is given a value its schema allows (the first
  member of an enum, the minimum of a number, a short text, a one-item list).

The copy need not be a call the server accepts: a server may refuse it before
asking (an id that names nothing), which changes nothing and is fine for a
binding test. ``confirm_token`` is never varied.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

__all__ = ["variants"]

TEXT = "Changed text"


def _resolve(schema: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    """The schema itself: a ``$ref`` followed; ``anyOf``, ``oneOf``, a ``type`` list narrowed to the first non-null."""
    while True:
        if "$ref" in schema:
            schema = defs[schema["$ref"].rsplit("/", 1)[1]]
            continue
        choices = schema.get("anyOf") or schema.get("oneOf")
        if choices:
            schema = next((c for c in choices if c.get("type") != "null"), choices[0])
            continue
        if isinstance(schema.get("type"), list):  # ["string", "null"] (approval_core.serving.portable)
            return {**schema, "type": next((t for t in schema["type"] if t != "null"), "null")}
        return schema


def example(schema: dict[str, Any], defs: dict[str, Any]) -> Any:
    """A value of ``schema``, for an argument the call left out."""
    schema = _resolve(schema, defs)
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    if kind == "boolean":
        return not schema.get("default", False)
    if kind in {"integer", "number"}:
        return schema.get("minimum", 1)
    if kind == "array":
        return [example(schema.get("items", {}), defs)]
    if kind == "object":
        properties: dict[str, Any] = schema.get("properties", {})
        wanted = list(schema.get("required", [])) or list(properties)[:1]
        return {name: example(properties[name], defs) for name in wanted}
    return TEXT[: schema.get("maxLength", len(TEXT))]


def _changed(value: Any, schema: dict[str, Any], defs: dict[str, Any]) -> Iterator[tuple[str, Any]]:
    """(suffix of the argument's name, a changed value) for a value the call gave."""
    schema = _resolve(schema, defs)
    if value is None:
        yield "", example(schema, defs)
    elif isinstance(value, bool):
        yield "", not value
    elif isinstance(value, int | float):
        bumped = value + 1
        yield "", bumped if bumped <= schema.get("maximum", bumped) else value - 1
    elif isinstance(value, str):
        others = [member for member in schema.get("enum", []) if member != value]
        if others:
            yield "", others[0]
        elif "enum" not in schema and "const" not in schema:
            yield "", value[:-1] + ("x" if value[-1:] != "x" else "y") if value else TEXT
    elif isinstance(value, list):
        if len(value) > 1:
            yield "", value[:-1]
        else:
            items = schema.get("items", {})
            extra = next((v for _, v in _changed(value[0], items, defs)), None) if value else None
            yield "", [*value, extra if extra is not None else example(items, defs)]
    elif isinstance(value, dict):
        properties: dict[str, Any] = schema.get("properties", {})
        for name, inner in value.items():
            for suffix, changed in _changed(inner, properties.get(name, {}), defs):
                yield f".{name}{suffix}", {**value, name: changed}
        missing = next((name for name in properties if name not in value), None)
        if missing is not None:
            yield f".{missing}", {**value, missing: example(properties[missing], defs)}


def variants(args: dict[str, Any], schema: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(the argument changed, e.g. ``summary`` or ``changes.title``; the changed copy of ``args``), one per change."""
    defs: dict[str, Any] = schema.get("$defs", {})
    for name, property_schema in schema.get("properties", {}).items():
        if name == "confirm_token":
            continue
        if name in args:
            for suffix, changed in _changed(args[name], property_schema, defs):
                yield f"{name}{suffix}", {**args, name: changed}
        else:
            yield name, {**args, name: example(property_schema, defs)}
