"""What an approval binds, and the fingerprint of it: the one home of that rule.

:func:`bind` is the only way a :class:`Binding` of a guarded call is made (the gate's
:meth:`~approval_core.ApprovalGate.check`, and the every-write profile's question for a call's
requests, both call it). An approval binds:

* the server's name and the tool's name;
* the target the tool names: what the call would do, as the server resolved it (the entry's href,
  the counts its dialog states, the caller values it acts on), less the names it excludes (a
  password);
* the dialog's text (:data:`DIALOG_KEY`), so a yes never serves a call whose dialog would read
  differently;
* the version of what the dialog was built from (:data:`VERSION_KEY`, an ETag), which the write
  then carries as If-Match;
* over HTTP, the caller's principal (:data:`PRINCIPAL_KEY`: client id, issuer, subject).

An approval (a dialog answer or a confirm token) is bound to the SHA-256 of a
canonical encoding of its target, so one obtained for a call cannot execute
another. The encoding is injective by construction: every value carries a
type tag, so these are all different targets:

* an omitted field and a field set to ``None`` (``{}`` vs ``{"title": None}``);
* a set and a sequence of the same items (``{"a"}`` vs ``["a"]``);
* ``True`` and ``1``, ``"1"`` and ``1``;
* ``("alice", "deploy")`` and ``("deploy", "alice")`` (sequences are positions);

while a ``set`` / ``frozenset`` compares as a set: ``{"a", "b"}`` equals
``{"b", "a"}`` and never equals ``{"a"}`` (seed 000: an approval for
``["a"]`` does not execute ``["a", "b"]``).

Accepted values: ``None``, ``bool``, ``int``, finite ``float``, ``str``,
``bytes``, ``datetime`` / ``date`` / ``time`` (ISO 8601 text, offset kept),
``Enum`` (its value), ``list`` / ``tuple`` (ordered), ``set`` / ``frozenset``
(unordered), mappings with string keys (key order irrelevant), and pydantic
models, which are read with ``exclude_unset=True`` so a field the caller
omitted stays omitted.
"""

from __future__ import annotations

import datetime as dt
import enum
import hashlib
import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import principal_components
from pydantic import BaseModel

from approval_core.errors import BindingError

__all__ = [
    "DIALOG_KEY",
    "PRINCIPAL_KEY",
    "VERSION_KEY",
    "Binding",
    "bind",
    "canonical_json",
    "fingerprint",
    "principal",
]

DIALOG_KEY = "@dialog"
"""The name under which the dialog's text (:meth:`Dialog.render`) enters the binding's target: an approval binds
what the person was shown, every caller value included, whatever else the tool put in ``target``."""

VERSION_KEY = "@version"
"""The name under which the version read (``check(version=...)``) enters the binding's target."""

PRINCIPAL_KEY = "@principal"
"""The name under which the authenticated principal (HTTP: client id, issuer, subject) enters the target."""

_SHORT = 12


def _encode(value: Any, path: str) -> Any:
    """Map ``value`` onto a tagged JSON tree (see the module docstring)."""
    if value is None:
        return ["null"]
    if isinstance(value, bool):
        return ["bool", value]
    if isinstance(value, enum.Enum):
        return ["enum", _encode(value.value, path)]
    if isinstance(value, int):
        return ["int", str(value)]
    if isinstance(value, float):
        if not math.isfinite(value):
            raise BindingError(f"{path}: {value!r} has no canonical form; use a finite number")
        return ["float", repr(value)]
    if isinstance(value, str):
        return ["str", value]
    if isinstance(value, bytes | bytearray):
        return ["bytes", bytes(value).hex()]
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return [type(value).__name__, value.isoformat()]
    if isinstance(value, BaseModel):
        return _encode_mapping(value.model_dump(exclude_unset=True), path)
    if isinstance(value, Mapping):
        return _encode_mapping(value, path)  # pyright: ignore[reportUnknownArgumentType]
    if isinstance(value, set | frozenset):
        members = [_encode(item, f"{path}{{}}") for item in value]  # pyright: ignore[reportUnknownVariableType]
        return ["set", sorted(members, key=_dump)]
    if isinstance(value, list | tuple):
        return ["seq", [_encode(item, f"{path}[{i}]") for i, item in enumerate(value)]]  # pyright: ignore[reportUnknownArgumentType, reportUnknownVariableType]
    raise BindingError(f"{path}: a value of type {type(value).__name__} cannot be part of a binding")


def _encode_mapping(value: Mapping[Any, Any], path: str) -> Any:
    items: list[Any] = []
    for key, item in value.items():
        if not isinstance(key, str):
            raise BindingError(f"{path}: mapping keys must be strings, got {type(key).__name__}")
        items.append([key, _encode(item, f"{path}.{key}")])
    items.sort(key=lambda pair: pair[0])
    return ["map", items]


def _dump(tree: Any) -> str:
    # ensure_ascii keeps the encoding total: a lone surrogate escapes instead of raising.
    return json.dumps(tree, separators=(",", ":"), ensure_ascii=True)


def canonical_json(value: Any) -> str:
    """The canonical, type-tagged JSON text of ``value`` (ASCII, compact).

    Raises:
        BindingError: ``value`` holds something without a canonical form.
    """
    return _dump(_encode(value, "target"))


def fingerprint(server: str, tool: str, target: Mapping[str, Any], *, exclude: Iterable[str] = ()) -> str:
    """SHA-256 (64 lowercase hex digits) of the canonical form of a call.

    Args:
        server: The server's name (``caldav-mcp``); part of the binding, so a
            token from one server never fits another.
        tool: The tool's name; part of the binding.
        target: What the call would do, as a mapping of named parts.
        exclude: Top-level names left out of the binding (for example a
            password, which must not be kept even as a hash).

    Raises:
        BindingError: ``target`` holds something without a canonical form.
    """
    dropped = frozenset(exclude)
    kept = {key: value for key, value in target.items() if key not in dropped}
    text = canonical_json({"server": server, "tool": tool, "target": kept})
    return hashlib.sha256(text.encode("ascii")).hexdigest()


@dataclass(frozen=True, slots=True)
class Binding:
    """A guarded call's target and its fingerprint.

    Attributes:
        server: The server's name.
        tool: The tool's name.
        target: The named parts of what the call would do (not copied; do not
            mutate it after building the binding).
        exclude: Top-level names of ``target`` left out of the fingerprint.
        fingerprint: Hex SHA-256, computed once at construction.
    """

    server: str
    tool: str
    target: Mapping[str, Any]
    exclude: frozenset[str] = frozenset()
    fingerprint: str = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "fingerprint", fingerprint(self.server, self.tool, self.target, exclude=self.exclude))

    @property
    def short(self) -> str:
        """The first 12 hex digits: enough to correlate audit lines, too short to matter."""
        return self.fingerprint[:_SHORT]


def principal() -> tuple[str, str | None, str | None] | None:
    """Who is calling over HTTP: ``(client_id, issuer, subject)`` of the bearer token; None over stdio.

    Bound into every approval's fingerprint (the gate's ``@principal``), so one caller's yes never
    approves another's call.
    """
    token = get_access_token()
    return None if token is None else principal_components(token)


def bind(
    server: str,
    tool: str,
    target: Mapping[str, Any],
    *,
    shown: str | None = None,
    version: str | None = None,
    exclude: Iterable[str] = (),
) -> Binding:
    """The binding of one guarded call: ``target`` with what the person was shown, the version and the principal.

    Args:
        server: This server's name.
        tool: The tool's name.
        target: What the call would do (see the module docstring).
        shown: The dialog's text as the person reads it; bound under :data:`DIALOG_KEY` (None when ``target``
            already holds it, as the every-write profile's target does).
        version: The version (ETag) of what the dialog was built from, or None for a tool listed as
            unversioned; bound under :data:`VERSION_KEY`.
        exclude: Top-level names of ``target`` left out of the fingerprint.

    Raises:
        BindingError: ``target`` has no canonical form.
    """
    out = dict(target)
    if shown is not None:
        out[DIALOG_KEY] = shown
    if version is not None:
        out[VERSION_KEY] = version
    caller = principal()
    if caller is not None:
        out[PRINCIPAL_KEY] = caller
    return Binding(server, tool, out, frozenset(exclude))
