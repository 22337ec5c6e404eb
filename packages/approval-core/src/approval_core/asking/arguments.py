"""Arguments that break a tool's input schema, told in the server's own words.

The SDK validates a call's arguments with pydantic before the tool runs and
reports a failure as pydantic's dump (``2 validation errors for
publish_messageArguments ... For further information visit
https://errors.pydantic.dev/...``), which names the rule in pydantic's terms
and never says what would have been accepted. :func:`explain` turns it into
one line per argument: the field's path, the value sent, and what the field
allows, read from the tool's own input schema (JSON Schema 2020-12, as MCP
2025-11-25 §Tools gives it): its description in the server's words, then its
type, bounds, lengths, choices and fields. Nothing of pydantic's text is kept
but the rule it names, and nothing of the call is shown but the values the
caller sent (each cut to 80 characters).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping
from typing import Any, cast

from pydantic import ValidationError

__all__ = ["allowed", "explain"]

_SHOWN = 80
_TYPES = {
    "string": "text",
    "integer": "a whole number",
    "number": "a number",
    "boolean": "true or false",
    "array": "a list",
    "object": "an object",
    "null": "nothing (null)",
}


def _resolve(schema: Mapping[str, Any], defs: Mapping[str, Any]) -> Mapping[str, Any]:
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        return cast(Mapping[str, Any], defs.get(ref.removeprefix("#/$defs/"), {}))
    return schema


def _range(low: object, high: object, unit: str) -> str:
    if low is not None and high is not None:
        return f" from {low} to {high}{unit}"
    if low is not None:
        return f" of at least {low}{unit}"
    if high is not None:
        return f" of at most {high}{unit}"
    return ""


def _shape(schema: Mapping[str, Any], defs: Mapping[str, Any], depth: int = 0) -> str:
    """The structural rule of ``schema`` in words (type, bounds, lengths, choices, fields)."""
    schema = _resolve(schema, defs)
    branches = schema.get("anyOf") or schema.get("oneOf")
    if isinstance(branches, list) and depth < 3:
        shapes = [_shape(cast(Mapping[str, Any], b), defs, depth + 1) for b in cast(list[Any], branches)]
        return " or ".join(dict.fromkeys(s for s in shapes if s))
    if "const" in schema:
        return f"exactly {schema['const']!r}"
    if isinstance(schema.get("enum"), list):
        return "one of " + ", ".join(repr(v) for v in cast(list[Any], schema["enum"]))
    kind = schema.get("type")
    if isinstance(kind, list):  # ["string", "null"]: a type list, as a hand-written schema may have it
        kinds = [str(k) for k in cast(list[Any], kind)]
        shapes = [_shape({**schema, "type": k}, defs, depth) for k in kinds if k != "null"]
        return " or ".join(dict.fromkeys([*shapes, *(["nothing (null)"] if "null" in kinds else [])]))
    if kind in ("integer", "number"):
        return _TYPES[kind] + _range(schema.get("minimum"), schema.get("maximum"), "")
    if kind == "string":
        text = "text" + _range(schema.get("minLength"), schema.get("maxLength"), " characters")
        if "pattern" in schema:
            text += f" matching {schema['pattern']}"
        if "format" in schema:
            text += f" ({schema['format']})"
        return text
    if kind == "array":
        text = "a list" + _range(schema.get("minItems"), schema.get("maxItems"), " items")
        items = schema.get("items")
        if isinstance(items, Mapping) and depth < 3:
            text += f", each {_shape(cast(Mapping[str, Any], items), defs, depth + 1)}"
        return text
    if kind == "object" or "properties" in schema:
        names = list(cast(Mapping[str, Any], schema.get("properties") or {}))
        if not names:
            return "an object"
        required = [n for n in cast(list[str], schema.get("required") or []) if n in names]
        text = "an object with the fields " + ", ".join(names)
        if required:
            text += f" ({', '.join(required)} required)"
        return text
    return _TYPES.get(str(kind), "")


def allowed(schema: Mapping[str, Any], defs: Mapping[str, Any]) -> str:
    """What a field allows: its description (the server's words), then its shape (:func:`_shape`)."""
    schema = _resolve(schema, defs)
    description = str(schema.get("description") or "").strip().rstrip(".")
    shape = _shape(schema, defs)
    return "; ".join(part for part in (description, shape) if part) or "see the tool's input schema"


def _choices(node: Mapping[str, Any], defs: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """``node`` and, for a union (``anyOf`` / ``oneOf``), each of its branches, resolved."""
    node = _resolve(node, defs)
    branches = node.get("anyOf") or node.get("oneOf")
    if not isinstance(branches, list):
        return [node]
    return [node, *(_resolve(cast(Mapping[str, Any], b), defs) for b in cast(list[Any], branches))]


def _walk(
    schema: Mapping[str, Any],
    defs: Mapping[str, Any],
    loc: tuple[int | str, ...],
    extra: bool,
    quote: Callable[[str], str] = repr,
) -> tuple[str, Any]:
    """The field path a pydantic ``loc`` names and that field's schema.

    A step that is no field of the schema there is a union's tag (``int``, ``literal[...]``, a
    discriminator's value such as ``http``) and is passed over, except the last step of an ``extra``
    error, which names the field the object does not have (through ``quote`` when ``quote`` does not write it
    as ``repr`` does: a key of words).
    """
    path: list[str] = []
    current: Mapping[str, Any] | None = schema
    for index, step in enumerate(loc):
        if current is None:
            break
        choices = _choices(current, defs)
        if isinstance(step, int):
            holder = next((c for c in choices if isinstance(c.get("items"), Mapping)), None)
            if holder is not None:
                path.append(f"[{step}]")
                current = cast(Mapping[str, Any], holder["items"])
            continue
        holder = next((c for c in choices if step in cast(Mapping[str, Any], c.get("properties") or {})), None)
        if holder is not None:
            path.append(step)
            current = cast(Mapping[str, Any], cast(Mapping[str, Any], holder["properties"])[step])
        elif extra and index == len(loc) - 1:
            path.append(step if quote(step) == repr(step) else quote(step))  # the caller's key: of words, fenced
            current = None
    return ".".join(path).replace(".[", "["), current


def _strings(value: object) -> Iterator[str]:
    """Every string in ``value``: itself, or the keys and items of its lists, tuples and maps, at any depth."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, (list, tuple)):
        for item in cast(list[object], value):
            yield from _strings(item)
    elif isinstance(value, dict):
        for key, item in cast(dict[object, object], value).items():
            yield from _strings(key)
            yield from _strings(item)


def _sent(value: object, quote: Callable[[str], str] = repr) -> str:
    """``value`` as sent, cut to :data:`_SHOWN` characters; a string through ``quote`` (``repr`` unless given).

    A list or map holding a string ``quote`` would not write as ``repr`` does (one of words) is shown as its
    JSON text through ``quote``, so that string is never repeated bare inside the list's ``repr``.
    """
    text = repr(value)
    if not isinstance(value, str) and any(quote(s) != repr(s) for s in _strings(value)):
        value = json.dumps(value, ensure_ascii=False, default=repr)
    if isinstance(value, str) and (quoted := quote(value[:_SHOWN])) != repr(value[:_SHOWN]):
        return quoted if len(value) <= _SHOWN else f"{quoted}… ({len(value) - _SHOWN} more characters)"
    return text if len(text) <= _SHOWN else f"{text[:_SHOWN]}… ({len(text) - _SHOWN} more characters)"


def _rule(item: Mapping[str, Any], quote: Callable[[str], str]) -> str:
    """The rule pydantic states for ``item``, a value it repeats from the call (a union's tag) through ``quote``.

    pydantic writes some of the input into its message (``Input tag 'x' found using 'kind'...``): a string of
    the error's context or input that ``quote`` would not write as ``repr`` does (one of words) is replaced there.
    """
    message = str(item["msg"])
    context = set(_strings(item.get("ctx") or {}))
    for value in {*context, *_strings(item.get("input"))}:
        if not value or quote(value) == repr(value):
            continue
        if f"'{value}'" in message:
            message = message.replace(f"'{value}'", quote(value))
        elif value in message and value in context:
            message = message.replace(value, quote(value))
    return message


def explain(tool: str, error: ValidationError, schema: Mapping[str, Any], quote: Callable[[str], str] = repr) -> str:
    """One message for the call: per argument, its path, the value sent, the rule broken, and what is allowed.

    Args:
        tool: The tool's name.
        error: The SDK's validation failure of the call's arguments.
        schema: The tool's input schema (its ``$defs`` resolve ``$ref``).
        quote: Quotes a string value sent (the error boundary's is
            :func:`~approval_core.serving.stored_text.quoted_name`, which fences one of words).
    """
    defs = cast(Mapping[str, Any], schema.get("$defs") or {})
    grouped: dict[str, list[Any]] = defaultdict(list)
    fields: dict[str, Any] = {}
    for item in error.errors(include_url=False):
        path, field = _walk(schema, defs, tuple(item["loc"]), item["type"] == "extra_forbidden", quote)
        grouped[path or "arguments"].append(item)
        fields.setdefault(path or "arguments", field)
    lines: list[str] = []
    for path, items in grouped.items():
        kinds = {str(i["type"]) for i in items}
        field = fields[path]
        if kinds == {"missing"}:
            lines.append(f"{path}: required, and not given; allowed: {allowed(field or {}, defs)}")
        elif kinds == {"extra_forbidden"}:
            parent = path.rpartition(".")[0] or "the arguments"
            lines.append(f"{path}: {parent} has no such field; {_sent(items[0].get('input'), quote)} was sent")
        else:
            rules = "; ".join(dict.fromkeys(_rule(i, quote) for i in items if i["type"] != "missing"))
            what = allowed(field, defs) if field is not None else "see the tool's input schema"
            lines.append(f"{path}: {_sent(items[0].get('input'), quote)} was sent ({rules}); allowed: {what}")
    head = f"{tool} was not run: {'an argument breaks' if len(lines) == 1 else 'arguments break'} its rule."
    return "\n".join([head, *(f"- {line}" for line in lines), "Nothing was sent to the backend."])
